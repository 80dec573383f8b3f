package roofline

import (
	"fmt"
	"math"
	"slices"
)

// Kinds of binding roof (Bound.Kind).
const (
	BoundCompute = "compute"
	BoundMemory  = "memory"
)

// Bound is the roof that binds a point at its intensity.
type Bound struct {
	// Kind is BoundCompute or BoundMemory.
	Kind string `json:"kind"`
	// Roof names the roof: a compute roof's name ("avx512-fma-fp64",
	// "dgemm") or a memory level ("DRAM").
	Roof string `json:"roof"`
	// GFlops is a compute roof's value; GBytesPerS a memory roof's. The
	// other is 0.
	GFlops     float64 `json:"gflops,omitempty"`
	GBytesPerS float64 `json:"gbytes_per_s,omitempty"`
}

// String is the bound as people read it: "memory (DRAM)",
// "compute (avx2-fma-fp64)".
func (b Bound) String() string { return b.Kind + " (" + b.Roof + ")" }

// Memory reports whether a memory level binds.
func (b Bound) Memory() bool { return b.Kind == BoundMemory }

// Value is the roof's own figure and its unit: GB/s for a memory roof,
// GFLOP/s for a compute roof.
func (b Bound) Value() (float64, string) {
	if b.Memory() {
		return b.GBytesPerS, "GB/s"
	}
	return b.GFlops, "GFLOP/s"
}

// Placement says where a point sits under the roofs.
type Placement struct {
	// Bound is the binding roof.
	Bound Bound
	// AttainableGFlops is min(peak, bandwidth * intensity) at the point's
	// intensity.
	AttainableGFlops float64
	// Fraction is the point's GFLOP/s over AttainableGFlops. Above 1 means
	// the point is above its roof: a measurement error, not a result.
	Fraction float64
	// Peak and Memory are the roofs used.
	Peak   ComputeRoof
	Memory BandwidthRoof
}

// PeakCompute returns the highest compute roof for the thread scope and
// precision (any precision when precision is "" or Mixed), library roofs
// left out.
func (r *Roofs) PeakCompute(threads int, precision string) (ComputeRoof, bool) {
	var best ComputeRoof
	found := false
	for _, c := range r.Compute {
		if c.Threads != threads || c.Kind == ComputeKindLibrary {
			continue
		}
		if precision != "" && precision != Mixed && c.Precision != precision {
			continue
		}
		if !found || c.GFlops > best.GFlops {
			best, found = c, true
		}
	}
	if r.DGEMM != nil && r.DGEMM.Threads == threads && (precision == "" || precision == Mixed || precision == Double) {
		if !found || r.DGEMM.GFlops > best.GFlops {
			best = ComputeRoof{Name: "dgemm", ISA: r.DGEMM.Library, Precision: Double, Threads: threads, GFlops: r.DGEMM.GFlops, CI: r.DGEMM.CI}
			found = true
		}
	}
	return best, found
}

// BandwidthAt returns the highest-bandwidth kernel's roof for a level and
// thread scope.
func (r *Roofs) BandwidthAt(level string, threads int) (BandwidthRoof, bool) {
	var best BandwidthRoof
	found := false
	for _, b := range r.Bandwidth {
		if b.Level == level && b.Threads == threads && (!found || b.GBytesPerS > best.GBytesPerS) {
			best, found = b, true
		}
	}
	return best, found
}

// ThreadScopes lists the thread counts the roofs were measured at.
func (r *Roofs) ThreadScopes() []int {
	seen := map[int]bool{}
	var out []int
	add := func(t int) {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	for _, c := range r.Compute {
		add(c.Threads)
	}
	for _, b := range r.Bandwidth {
		add(b.Threads)
	}
	return out
}

// Place classifies a point of the given intensity (FLOP/byte of DRAM
// traffic) and performance against the DRAM and compute roofs of one thread
// scope. The memory level is DRAM because Q is counted at the memory
// controller.
func (r *Roofs) Place(intensity, gflops float64, threads int, precision string) (Placement, error) {
	if !(intensity > 0) || math.IsInf(intensity, 0) {
		return Placement{}, fmt.Errorf("place point: intensity %g is not a positive number", intensity)
	}
	peak, ok := r.PeakCompute(threads, precision)
	if !ok {
		return Placement{}, fmt.Errorf("place point: no compute roof for %d threads", threads)
	}
	mem, ok := r.BandwidthAt(LevelDRAM, threads)
	if !ok {
		return Placement{}, fmt.Errorf("place point: no DRAM bandwidth roof for %d threads", threads)
	}
	p := Placement{Peak: peak, Memory: mem}
	memRoof := mem.GBytesPerS * intensity
	if memRoof < peak.GFlops {
		p.Bound = Bound{Kind: BoundMemory, Roof: mem.Level, GBytesPerS: mem.GBytesPerS}
		p.AttainableGFlops = memRoof
	} else {
		p.Bound = Bound{Kind: BoundCompute, Roof: peak.Name, GFlops: peak.GFlops}
		p.AttainableGFlops = peak.GFlops
	}
	p.Fraction = gflops / p.AttainableGFlops
	return p, nil
}

// Ridge is the intensity at which a bandwidth roof meets a compute roof.
func Ridge(peakGFlops, gbytesPerS float64) float64 { return peakGFlops / gbytesPerS }

// Precision is the one precision a point's work was counted in, or "" (any)
// when there are several or the events do not tell them apart.
func (p *Point) Precision() string {
	prec := ""
	for k, v := range p.WorkByPrecision {
		if v <= 0 {
			continue
		}
		if prec != "" || k == Mixed {
			return ""
		}
		prec = k
	}
	return prec
}

// PlacePoint places a point under the roofs of a thread scope, against the
// compute peak of the precision its work was done in when it has one.
func (r *Roofs) PlacePoint(p *Point, threads int) (Placement, error) {
	if p.Intensity == nil || p.GFlops == nil {
		return Placement{}, fmt.Errorf("place point: intensity or GFLOP/s unknown")
	}
	pl, err := r.Place(*p.Intensity, *p.GFlops, threads, p.Precision())
	if err != nil {
		return pl, err
	}
	// A zero roof in the document would put every point infinitely far
	// above it.
	if !(pl.AttainableGFlops > 0) || math.IsInf(pl.Fraction, 0) {
		return Placement{}, fmt.Errorf("place point: the binding roof (%s) is not a positive number", pl.Bound)
	}
	return pl, nil
}

// AboveRoof says whether a placed point is above its roof by more than the
// two intervals allow: the low end of its GFLOP/s interval is above the
// high end of the roof's at this intensity. A point a hair above its roof
// within the noise is not singled out.
func (pl Placement) AboveRoof(p *Point) bool {
	if p.GFlops == nil || p.Intensity == nil {
		return false
	}
	lo := *p.GFlops
	if ci := p.CI.GFlops; ci != nil && ci.Lo > 0 && ci.Lo <= lo {
		lo = ci.Lo
	}
	roofHi := pl.AttainableGFlops
	if pl.Bound.Memory() {
		if hi := pl.Memory.CI.Hi * *p.Intensity; hi > roofHi {
			roofHi = hi
		}
	} else if pl.Peak.CI.Hi > roofHi {
		roofHi = pl.Peak.CI.Hi
	}
	return lo > roofHi
}

// PlaceAt places p under the roofs of a thread scope: it records the
// scope, the binding roof, the attainable GFLOP/s and the fraction reached,
// and flags a point above its roof. A point that cannot be placed
// (intensity or rate unknown or zero, no roof for the scope, a zero roof)
// keeps only the scope.
func (r *Roofs) PlaceAt(p *Point, threads int) {
	p.Threads = threads
	pl, err := r.PlacePoint(p, threads)
	if err != nil {
		return
	}
	p.Bound = &pl.Bound
	p.AttainableGFlops = &pl.AttainableGFlops
	p.FractionOfAttainable = &pl.Fraction
	if pl.AboveRoof(p) {
		p.Flags = append(p.Flags, pl.AboveRoofFlag())
	}
}

// AboveRoofFlag is the flag of a point that AboveRoof singles out: the one
// wording of it, for a point placed when measured and for one placed again
// under other roofs.
func (pl Placement) AboveRoofFlag() Flag {
	return Flag{Code: FlagAboveRoof, Subject: SubjectPlacement, Message: fmt.Sprintf(
		"the point is %.0f%% above its roof (%s, %.4g GFLOP/s attainable), beyond both confidence intervals: a measurement error (miscounted work or traffic, or roofs of another machine or thread count), not a result",
		(pl.Fraction-1)*100, pl.Bound, pl.AttainableGFlops)}
}

// ScopeInputs are what ThreadScope chooses a thread scope from.
type ScopeInputs struct {
	// Scopes are the thread scopes the roofs were measured for.
	Scopes []int
	// Want is the scope asked for (--threads); 0 for none.
	Want int
	// Recorded is the scope a point was placed under when it was
	// measured; 0 for none.
	Recorded int
	// Parallelism is the program's CPU time over its wall time
	// (Point.Parallelism); 0 when unknown.
	Parallelism float64
	// CPUs are the CPUs the program could run on; 0 when unknown.
	CPUs int
}

// ScopeChoice is a thread scope and the rule that chose it.
type ScopeChoice struct {
	Threads int
	// Rule is one of the ScopeRule constants ("" with Threads 0).
	Rule string
}

// Rules of ThreadScope (Point.ThreadsRule).
const (
	ScopeRuleAsked       = "asked"
	ScopeRuleRecorded    = "recorded"
	ScopeRuleParallelism = "parallelism"
	ScopeRuleCPUs        = "cpus"
	ScopeRuleSmallest    = "smallest"
)

// ParallelismSlack is how much of a CPU above a whole number of busy
// threads the parallelism may show and still round down to it: a
// single-threaded program's CPU time over wall time reads above 1 by its
// runtime's helper threads (a garbage collector, a JIT), the kernel's work
// on its behalf and rprof's launcher start-up (a few milliseconds); a
// quarter of a CPU covers them, while a second busy thread adds far more.
const ParallelismSlack = 0.25

// UsedThreads is the thread count a parallelism stands for: the ceiling of
// parallelism less ParallelismSlack, at least 1 (1.1 is 1 thread, 1.3 is
// 2, 0.4 is 1).
func UsedThreads(parallelism float64) int {
	return max(1, int(math.Ceil(parallelism-ParallelismSlack)))
}

// ThreadScope chooses the thread scope whose roofs a point is placed under
// and a chart draws, the same way for every command:
//
//  1. Want, the scope asked for (--threads), when it is positive;
//  2. else Recorded, the scope a point was placed under when it was
//     measured, when Scopes has it;
//  3. else, when the program's Parallelism is known, the smallest scope
//     not below the threads it rounds to (UsedThreads), or the largest
//     scope when all are below: a program is placed under the roofs of the
//     parallelism it used, a single-threaded one under the 1-thread roofs;
//  4. else the largest scope not above CPUs, the CPUs the program could
//     run on (it is never placed under roofs of fewer threads than it may
//     have used);
//  5. else (CPUs unknown, or below every scope) the smallest scope.
//
// It returns Threads 0 when Scopes is empty and neither Want nor Recorded
// is set.
func ThreadScope(in ScopeInputs) ScopeChoice {
	var c ScopeChoice
	switch {
	case in.Want > 0:
		c.Threads, c.Rule = in.Want, ScopeRuleAsked
		return c
	case in.Recorded > 0 && (len(in.Scopes) == 0 || slices.Contains(in.Scopes, in.Recorded)):
		c.Threads, c.Rule = in.Recorded, ScopeRuleRecorded
		return c
	case len(in.Scopes) == 0:
		return c
	}
	sorted := slices.Sorted(slices.Values(in.Scopes))
	if in.Parallelism > 0 {
		used := UsedThreads(in.Parallelism)
		c.Threads, c.Rule = sorted[len(sorted)-1], ScopeRuleParallelism
		if i := slices.IndexFunc(sorted, func(s int) bool { return s >= used }); i >= 0 {
			c.Threads = sorted[i]
		}
		return c
	}
	c.Threads, c.Rule = sorted[0], ScopeRuleSmallest
	for _, s := range sorted {
		if s <= in.CPUs {
			c.Threads, c.Rule = s, ScopeRuleCPUs
		}
	}
	return c
}
