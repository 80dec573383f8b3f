package regions

import (
	"slices"
	"time"

	"github.com/rprof/rprof/internal/stats"
	"github.com/rprof/rprof/pmu"
)

// Cost is what probing one call of a region costs, from Calibrate.
type Cost struct {
	// Inside is the probes' time that falls inside a call's measured
	// window (the measured time of an empty probed function).
	Inside time.Duration
	// Call is the wall time the probes add to one call: what a probed
	// call nested in another region adds to that region's time.
	Call time.Duration
}

// Stats are one region's figures over a run. Times have the probes' cost
// subtracted where a Cost was given (see Aggregator).
type Stats struct {
	Name string
	// Calls counts completed calls (entry and return both seen).
	Calls uint64
	// NeverLeft counts calls entered and never returned from: left by
	// longjmp or an exception, or still running when the process ended
	// (exit, a signal).
	NeverLeft uint64
	// Migrated counts completed calls that returned on another CPU than
	// they entered on: their per-CPU counter deltas are meaningless and are
	// left out of Counts.
	Migrated uint64
	// Switched counts completed calls during which their CPU switched
	// tasks (the thread was preempted or blocked): per-CPU counters then
	// counted other tasks too, so these calls are left out of Counts.
	Switched uint64
	// Threads counts the threads that completed calls.
	Threads int
	// Seconds is the inclusive time in the region, each thread's outermost
	// activation counted once (recursion is not counted twice).
	Seconds float64
	// MeasuredSeconds is Seconds before the probes' cost was subtracted.
	MeasuredSeconds float64
	// SelfSeconds is the exclusive time: in the region but not in a nested
	// probed region, summed over all calls.
	SelfSeconds float64
	// Mean, Median and P99 describe the per-call inclusive time of all
	// calls (nested recursive calls included).
	Mean, Median, P99 float64
	// MeasuredMean is Mean before subtraction.
	MeasuredMean float64
	// Counts holds each counter's deltas summed over outermost calls that
	// stayed on one CPU without a task switch; CountedSeconds is the inclusive time those calls
	// took, so that rates are Counts over CountedSeconds.
	Counts         []pmu.Count
	CountedSeconds float64
	// Cost is the per-call probe cost subtracted.
	Cost Cost
}

// Call is one completed call of a function region, as plain data: what
// its two records gave once paired.
type Call struct {
	// Region is the index of the call's function region.
	Region int
	TID    uint32
	// Start and End are CLOCK_MONOTONIC nanoseconds at entry and return.
	Start, End uint64
	// Seconds is the call's inclusive time with the probes' cost
	// subtracted (Stats), MeasuredSeconds before; SelfSeconds is the part
	// not inside nested probed calls.
	Seconds, MeasuredSeconds, SelfSeconds float64
	// Outermost: the call is not nested in another call of its region on
	// its thread (recursion).
	Outermost bool
	// CPU is where the call entered, ExitCPU where it returned.
	CPU, ExitCPU uint32
	// Switched: the call's CPU switched tasks while it ran (the guard
	// counter moved), so per-CPU counts include other tasks' work; told
	// only of calls that did not migrate.
	Switched bool
	// Counts are the counters' deltas over the call (the guard left out),
	// unscaled; nil when the call was not counted: it migrated or was
	// switched out, or a reading failed.
	Counts []pmu.Count
}

// Migrated reports whether the call returned on another CPU than it
// entered on.
func (c Call) Migrated() bool { return c.CPU != c.ExitCPU }

// Aggregator pairs records into per-region Stats, per thread, with a
// stack of open calls: a return closes the innermost open call of its
// region whose stack pointer it matches, and abandons the calls opened
// above it (left by longjmp). LIKWID markers pair by thread and tag.
type Aggregator struct {
	regions []*region
	markers map[string]int // marker tag to region index
	// markerCost is the probe cost of a marker region.
	markerCost Cost
	nCounters  int
	// guard: counter 0 counts the CPU's context switches; it decides
	// whether a call's counts are the thread's own and is not reported.
	guard   bool
	threads map[uint32][]*frame
	// keep: every completed function call is kept (KeepCalls).
	keep  bool
	calls []Call
	// OrphanExits counts returns and stop markers without their entry (a
	// record lost, or a call entered before the probes were attached).
	OrphanExits uint64
}

type region struct {
	name      string
	cost      Cost
	durations []float64 // corrected per-call inclusive seconds
	measured  float64   // sum of measured per-call inclusive seconds
	inclusive float64   // outermost activations, corrected
	inclMeas  float64
	self      float64
	neverLeft uint64
	migrated  uint64
	switched  uint64
	tids      map[uint32]bool
	counts    []pmu.Count
	counted   float64
}

type frame struct {
	region int
	start  uint64
	sp     uint64
	cpu    uint32
	counts []pmu.Count
	tag    string
	marker bool
	// childNs is the measured inclusive time of directly nested calls;
	// childProbe the probe cost they carry outside their own windows
	// (Call-Inside each); nestedProbe the probe time of all nested calls
	// inside this one's window.
	childNs, childProbe, nestedProbe float64
}

// NewAggregator aggregates records of the named function regions (indexed
// by attach cookie) and of LIKWID marker regions, which are created by tag
// as they appear. costs, when not nil, holds each function region's probe
// cost; markerCost is that of a marker region. Records carry nCounters
// counters; with guard, the first counts the CPU's context switches.
func NewAggregator(names []string, costs []Cost, markerCost Cost, nCounters int, guard bool) *Aggregator {
	a := &Aggregator{markers: map[string]int{}, markerCost: markerCost, nCounters: nCounters, guard: guard, threads: map[uint32][]*frame{}}
	for i, n := range names {
		var c Cost
		if i < len(costs) {
			c = costs[i]
		}
		a.regions = append(a.regions, a.newRegion(n, c))
	}
	return a
}

func (a *Aggregator) newRegion(name string, c Cost) *region {
	n := a.nCounters
	if a.guard {
		n--
	}
	return newRegion(name, c, n)
}

func newRegion(name string, c Cost, nCounters int) *region {
	return &region{name: name, cost: c, tids: map[uint32]bool{}, counts: make([]pmu.Count, max(nCounters, 0))}
}

// KeepCalls makes the aggregator keep every completed call of the
// function regions, for Calls.
func (a *Aggregator) KeepCalls() { a.keep = true }

// Calls lists the completed calls of the function regions in the order
// they returned (nil unless KeepCalls was called before the records).
func (a *Aggregator) Calls() []Call { return a.calls }

// Add takes one record, in the order the probes of its thread wrote them.
func (a *Aggregator) Add(r Record) {
	st := a.threads[r.TID]
	switch r.Kind {
	case Entry, StartMarker:
		f := &frame{region: int(r.Region), start: r.Time, sp: r.SP, cpu: r.CPU, counts: r.Counts}
		if r.Kind == StartMarker {
			f.marker, f.tag, f.region = true, r.Tag, a.markerRegion(r.Tag)
		} else if f.region >= len(a.regions) {
			return
		}
		a.threads[r.TID] = append(st, f)
	case Exit:
		i := matchReturn(st, r)
		if i < 0 {
			a.OrphanExits++
			return
		}
		for _, f := range st[i+1:] {
			if !f.marker {
				a.regions[f.region].neverLeft++
			}
		}
		keep := slices.DeleteFunc(st[i+1:], func(f *frame) bool { return !f.marker })
		a.finish(st[:i], st[i], r)
		a.threads[r.TID] = append(st[:i], keep...)
	case StopMarker:
		i := len(st) - 1
		for ; i >= 0 && !(st[i].marker && st[i].tag == r.Tag); i-- {
		}
		if i < 0 {
			a.OrphanExits++
			return
		}
		a.finish(st[:i], st[i], r)
		a.threads[r.TID] = slices.Delete(st, i, i+1)
	}
}

// matchReturn finds the open call a return closes: the innermost call of
// its region entered at the same stack pointer (the programs store the
// pointer as it was at entry), or, where pointers are unknown or none is
// equal, the innermost call of the region not deeper than the return.
func matchReturn(st []*frame, r Record) int {
	same := func(f *frame) bool { return !f.marker && f.region == int(r.Region) }
	if r.SP != 0 {
		for i := len(st) - 1; i >= 0; i-- {
			if same(st[i]) && st[i].sp == r.SP {
				return i
			}
		}
	}
	for i := len(st) - 1; i >= 0; i-- {
		if same(st[i]) && (r.SP == 0 || st[i].sp == 0 || st[i].sp <= r.SP) {
			return i
		}
	}
	return -1
}

func (a *Aggregator) markerRegion(tag string) int {
	if i, ok := a.markers[tag]; ok {
		return i
	}
	a.regions = append(a.regions, a.newRegion(tag, a.markerCost))
	a.markers[tag] = len(a.regions) - 1
	return len(a.regions) - 1
}

// finish closes call f, whose enclosing open calls are below, at record
// end.
func (a *Aggregator) finish(below []*frame, f *frame, end Record) {
	rg := a.regions[f.region]
	inside, call := rg.cost.Inside.Seconds(), rg.cost.Call.Seconds()
	meas := float64(end.Time-f.start) / 1e9
	if end.Time < f.start {
		meas = 0
	}
	c := Call{Region: f.region, TID: end.TID, Start: f.start, End: end.Time, MeasuredSeconds: meas,
		Seconds: max(meas-inside-f.nestedProbe, 0), SelfSeconds: max(meas-f.childNs-inside-f.childProbe, 0),
		Outermost: !slices.ContainsFunc(below, func(g *frame) bool { return g.region == f.region }),
		CPU:       f.cpu, ExitCPU: end.CPU}
	if !c.Migrated() && a.counted(f.counts, end.Counts) {
		c.Switched = a.guard && end.Counts[0].Raw != f.counts[0].Raw
		if !c.Switched {
			c.Counts = make([]pmu.Count, 0, a.nCounters)
			for i := range end.Counts {
				c.Counts = append(c.Counts, pmu.Count{Raw: end.Counts[i].Raw - f.counts[i].Raw,
					Enabled: end.Counts[i].Enabled - f.counts[i].Enabled, Running: end.Counts[i].Running - f.counts[i].Running})
			}
			if a.guard {
				c.Counts = c.Counts[1:]
			}
		}
	}
	rg.add(c)
	if a.keep && !f.marker {
		a.calls = append(a.calls, c)
	}
	if len(below) > 0 {
		p := below[len(below)-1]
		p.childNs += meas
		p.childProbe += call - inside
		p.nestedProbe += call + f.nestedProbe
	}
}

// add accounts one completed call to its region: the one place a call's
// figures become a region's.
func (rg *region) add(c Call) {
	rg.durations = append(rg.durations, c.Seconds)
	rg.measured += c.MeasuredSeconds
	rg.self += c.SelfSeconds
	rg.tids[c.TID] = true
	if c.Outermost {
		rg.inclusive += c.Seconds
		rg.inclMeas += c.MeasuredSeconds
	}
	switch {
	case c.Migrated():
		rg.migrated++
	case c.Switched:
		rg.switched++
	case c.Outermost && c.Counts != nil:
		for i := range rg.counts {
			rg.counts[i].Raw += c.Counts[i].Raw
			rg.counts[i].Enabled += c.Counts[i].Enabled
			rg.counts[i].Running += c.Counts[i].Running
		}
		rg.counted += c.Seconds
	}
}

// counted reports whether every counter was read at both ends and moved
// forward.
func (a *Aggregator) counted(start, end []pmu.Count) bool {
	if len(start) != a.nCounters || len(end) != a.nCounters {
		return false
	}
	for i := range start {
		if start[i].Enabled == 0 || end[i].Enabled == 0 || end[i].Raw < start[i].Raw || end[i].Enabled < start[i].Enabled || end[i].Running < start[i].Running {
			return false
		}
	}
	return true
}

// Stats closes the run: calls still open count as never left. Regions are
// in index order, marker regions after the function regions in the order
// their tags appeared.
func (a *Aggregator) Stats() []Stats {
	for tid, st := range a.threads {
		for _, f := range st {
			a.regions[f.region].neverLeft++
		}
		delete(a.threads, tid)
	}
	out := make([]Stats, 0, len(a.regions))
	for _, rg := range a.regions {
		out = append(out, rg.stats())
	}
	return out
}

// Summarize gives the Stats of a set of completed calls (a part of a
// region's calls, chosen by the caller) as if they were a region's: name,
// the probe cost their times had subtracted, and how many counters each
// counted call carries.
func Summarize(name string, cost Cost, nCounters int, calls []Call) Stats {
	rg := newRegion(name, cost, nCounters)
	for _, c := range calls {
		if c.Counts != nil && len(c.Counts) != nCounters {
			c.Counts = nil
		}
		rg.add(c)
	}
	return rg.stats()
}

func (rg *region) stats() Stats {
	s := Stats{Name: rg.name, Calls: uint64(len(rg.durations)), NeverLeft: rg.neverLeft, Migrated: rg.migrated,
		Switched: rg.switched, Threads: len(rg.tids), Seconds: rg.inclusive, MeasuredSeconds: rg.inclMeas,
		SelfSeconds: rg.self, Counts: rg.counts, CountedSeconds: rg.counted, Cost: rg.cost}
	if n := len(rg.durations); n > 0 {
		d := slices.Clone(rg.durations)
		slices.Sort(d)
		var sum float64
		for _, x := range d {
			sum += x
		}
		s.Mean, s.MeasuredMean = sum/float64(n), rg.measured/float64(n)
		s.Median, s.P99 = stats.Quantile(d, 0.5), stats.Quantile(d, 0.99)
	}
	return s
}
