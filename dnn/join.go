package dnn

import (
	"errors"
	"fmt"
	"slices"

	"github.com/rprof/rprof/internal/stats"
	"github.com/rprof/rprof/internal/unit"
	"github.com/rprof/rprof/roofline"
)

// CallCount is what a counting backend measured over one primitive
// execution call (dnnl_primitive_execute), as plain data so that every
// backend fits: per-call counts under emulation, uprobes with per-CPU
// counters on a PMU host.
type CallCount struct {
	// Thread is the thread that made the call (an emulator's vCPU, a TID).
	Thread int
	// WorkByPrecision is the call's FLOPs by precision (roofline names:
	// fp64, fp32, ...); nil when the backend does not count work.
	WorkByPrecision map[string]float64
	// TrafficBytes is the call's DRAM bytes, read plus written; nil when
	// unknown.
	TrafficBytes *float64
	// Seconds is the call's time; nil when unknown.
	Seconds *float64
	// Overlapped is set when another thread's call ran during this one:
	// counts taken over the whole process (all threads, so that a call's
	// OpenMP workers are in) then hold the other call's work as well.
	Overlapped bool
}

// WorkFlops is the call's W over all precisions, and whether work was
// counted.
func (c CallCount) WorkFlops() (float64, bool) {
	if c.WorkByPrecision == nil {
		return 0, false
	}
	s := 0.0
	for _, v := range c.WorkByPrecision {
		s += v
	}
	return s, true
}

// CallMismatchError is a join of a trace and counted calls that differ in
// number: which count belongs to which execution cannot be known, so none
// is attributed.
type CallMismatchError struct {
	Execs, Calls int
}

func (e *CallMismatchError) Error() string {
	return fmt.Sprintf("dnn: %d counted calls for %d executions in the verbose trace: counts not attributed", e.Calls, e.Execs)
}

// Join pairs the trace's k-th execution with the k-th counted call and
// gives each group its executions' counts (Group.Counts): oneDNN prints an
// execution's verbose line before its execute call returns, so a backend
// that records calls in the order they return sees them in trace order.
// The trace must be Ordered. Errors: *CallMismatchError when the numbers
// differ; no group is given counts then.
func (t *Trace) Join(calls []CallCount) error {
	if !t.Ordered {
		return errors.New("dnn: join of a trace that kept no execution order (Trace.Ordered)")
	}
	if t.execs != len(calls) {
		for _, g := range t.groups {
			g.Counts = nil
		}
		return &CallMismatchError{Execs: t.execs, Calls: len(calls)}
	}
	for _, g := range t.groups {
		g.Counts = make([]CallCount, len(g.Execs))
		for i, k := range g.Execs {
			g.Counts[i] = calls[k]
		}
	}
	return nil
}

// Counted summarises the counted calls of a group: medians per call over
// the calls that did not overlap another thread's (the median, so that a
// first call's lazy initialisation, such as gemm:jit generating its
// kernels, does not weigh on a group of three calls or more).
type Counted struct {
	// Calls is the calls whose counts are in the figures; Overlapped the
	// calls left out because another thread's call ran at the same time.
	Calls, Overlapped int
	// WorkByPrecision is the FLOPs of one call by precision, each the
	// median over calls; nil when work was not counted.
	WorkByPrecision map[string]float64
	// WorkFlops is the median W of one call, with its smallest and
	// largest per-call values (unequal when calls did different work); nil
	// when work was not counted.
	WorkFlops              *float64
	MinWork, MaxWork       float64
	TrafficBytes           *float64 // median Q of one call; nil when unknown
	MinTraffic, MaxTraffic float64
	Seconds                *float64 // median time of one call; nil when unknown
}

// Counted summarises g's counts; ok is false when the group has none (not
// joined), or every call overlapped another.
func (g *Group) Counted() (c Counted, ok bool) {
	var work, traffic, secs []float64
	byPrec := map[string][]float64{}
	for _, cc := range g.Counts {
		if cc.Overlapped {
			c.Overlapped++
			continue
		}
		c.Calls++
		if w, ok := cc.WorkFlops(); ok {
			work = append(work, w)
			for p, v := range cc.WorkByPrecision {
				byPrec[p] = append(byPrec[p], v)
			}
		}
		if cc.TrafficBytes != nil {
			traffic = append(traffic, *cc.TrafficBytes)
		}
		if cc.Seconds != nil {
			secs = append(secs, *cc.Seconds)
		}
	}
	if c.Calls == 0 {
		return c, false
	}
	// A figure is given only when every summarised call has it.
	if len(work) == c.Calls {
		c.WorkByPrecision = map[string]float64{}
		for p, v := range byPrec {
			// A precision some calls did not use counts 0 in those.
			v = append(v, make([]float64, c.Calls-len(v))...)
			c.WorkByPrecision[p] = stats.Median(v)
		}
		c.WorkFlops, c.MinWork, c.MaxWork = ptr(stats.Median(work)), slices.Min(work), slices.Max(work)
	}
	if len(traffic) == c.Calls {
		c.TrafficBytes, c.MinTraffic, c.MaxTraffic = ptr(stats.Median(traffic)), slices.Min(traffic), slices.Max(traffic)
	}
	if len(secs) == c.Calls {
		c.Seconds = ptr(stats.Median(secs))
	}
	return c, true
}

// WorkGapRatio is the factor between counted and analytic W beyond which
// a group is flagged, either way. A bias folded into the accumulator or
// the rounding of a constant stays well inside it, and so do a
// convolution's zero-padding taps that a kernel skips unless most taps
// fall on padding (3x3 on 8x8: 0.84, measured in docs/dnn.md); a padded
// blocked layout (seed 004's GELU on 3 channels padded to 8: 8/3 the
// FLOPs) does not.
const WorkGapRatio = 1.25

// TrafficGapRatio is the factor by which counted Q may exceed the
// compulsory Q before it is flagged: a write-allocate cache reads the
// destination before writing it back, so an elementwise kernel moves up to
// 1.5 times the compulsory bytes without doing anything wrong. Counted Q
// below the compulsory Q is not flagged: it is data that stayed in cache
// between calls.
const TrafficGapRatio = 2

// CountFlags compares a group's counts with its analytic model and flags
// large gaps and calls left out.
func CountFlags(a Analytic, c Counted) []roofline.Flag {
	var out []roofline.Flag
	if c.Overlapped > 0 {
		out = append(out, roofline.Flag{Code: roofline.FlagOverlappedCalls, Subject: roofline.SubjectWork,
			Message: fmt.Sprintf("%d of %d calls overlapped another thread's call and were left out of the counts", c.Overlapped, c.Overlapped+c.Calls)})
	}
	// The median of one or two calls keeps a first call's one-time work.
	first := ""
	switch c.Calls {
	case 1:
		first = "; from a single call, which may hold one-time initialisation (JIT code generation, lazily built kernels)"
	case 2:
		first = "; the median of two calls, half the first one's, which may hold one-time initialisation (JIT code generation, lazily built kernels)"
	}
	if r, ok := Ratio(c.WorkFlops, a.WorkFlops); ok && (r > WorkGapRatio || r < 1/WorkGapRatio) {
		out = append(out, roofline.Flag{Code: roofline.FlagCountedGap, Subject: roofline.SubjectWork,
			Message: fmt.Sprintf("counted W is %sx the analytic W (%s vs %s FLOP per call)%s", unit.Sig(r), unit.Sig(*c.WorkFlops), unit.Sig(*a.WorkFlops), first)})
	}
	if r, ok := Ratio(c.TrafficBytes, a.TrafficBytes); ok && r > TrafficGapRatio {
		out = append(out, roofline.Flag{Code: roofline.FlagCountedGap, Subject: roofline.SubjectTraffic,
			Message: fmt.Sprintf("counted Q is %sx the compulsory Q (%s vs %s bytes per call)%s", unit.Sig(r), unit.Sig(*c.TrafficBytes), unit.Sig(*a.TrafficBytes), first)})
	}
	return out
}

// Ratio is counted over analytic, when both are known and analytic is
// not zero.
func Ratio(counted, analytic *float64) (float64, bool) {
	if counted == nil || analytic == nil || *analytic == 0 {
		return 0, false
	}
	return *counted / *analytic, true
}
