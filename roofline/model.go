package roofline

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// Placement says where a point sits under the roofs.
type Placement struct {
	// Bound names the binding roof: "compute (<roof name>)" or
	// "memory (<level>)".
	Bound string
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
// precision (any precision when precision is "" or Mixed).
func (r *Roofs) PeakCompute(threads int, precision string) (ComputeRoof, bool) {
	var best ComputeRoof
	found := false
	for _, c := range r.Compute {
		if c.Threads != threads {
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

// ScopeFor is the thread scope a run on cpus CPUs is placed under: the
// largest measured scope not above cpus, else the smallest (0 when the
// roofs have none).
func (r *Roofs) ScopeFor(cpus int) int {
	scopes := r.ThreadScopes()
	slices.Sort(scopes)
	if len(scopes) == 0 {
		return 0
	}
	best := scopes[0]
	for _, s := range scopes {
		if s <= cpus {
			best = s
		}
	}
	return best
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
	mem, ok := r.BandwidthAt("DRAM", threads)
	if !ok {
		return Placement{}, fmt.Errorf("place point: no DRAM bandwidth roof for %d threads", threads)
	}
	p := Placement{Peak: peak, Memory: mem}
	memRoof := mem.GBytesPerS * intensity
	if memRoof < peak.GFlops {
		p.Bound = "memory (DRAM)"
		p.AttainableGFlops = memRoof
	} else {
		p.Bound = "compute (" + peak.Name + ")"
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
	if strings.HasPrefix(pl.Bound, "memory") {
		if hi := pl.Memory.CI.Hi * *p.Intensity; hi > roofHi {
			roofHi = hi
		}
	} else if pl.Peak.CI.Hi > roofHi {
		roofHi = pl.Peak.CI.Hi
	}
	return lo > roofHi
}
