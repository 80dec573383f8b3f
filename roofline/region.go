package roofline

// Region is one function (or LIKWID marker region) of a run, measured on
// its own: `rprof run --region`. Times are per run (the last repetition),
// with the probes' own cost subtracted; the measured values are kept.
type Region struct {
	// Name is the symbol, the FILE:0xADDR spec, or the LIKWID tag.
	Name string `json:"name"`
	// Probe says where the region was probed: "FILE:SYMBOL" (with
	// "@VERSION" for a versioned symbol, e.g. libm's exp@GLIBC_2.29),
	// "FILE:0xADDR" or "likwid:TAG", FILE the resolved path.
	Probe string `json:"probe"`
	// Calls counts completed calls (entered and returned).
	Calls uint64 `json:"calls"`
	// Seconds is the inclusive time in the region, each thread's outermost
	// call counted once (recursion is not counted twice).
	Seconds float64 `json:"seconds"`
	// SelfSeconds is the exclusive time: not in a nested probed region.
	SelfSeconds float64 `json:"self_seconds"`
	// MeanSeconds, MedianSeconds and P99Seconds describe one call's
	// inclusive time over all calls.
	MeanSeconds   float64 `json:"mean_seconds"`
	MedianSeconds float64 `json:"median_seconds"`
	P99Seconds    float64 `json:"p99_seconds"`
	// MeasuredSeconds is Seconds before the probe cost was subtracted.
	MeasuredSeconds float64 `json:"measured_seconds"`
	// ProbeCostSeconds is the cost subtracted per call (the probes' time
	// inside the call's window); ProbeCallSeconds the wall time the probes
	// add to a call (subtracted from enclosing regions per nested call);
	// both 0 when not calibrated. ProbeFirst is the kind of the probed
	// function's first instruction, which decides the cost ("nop5",
	// "push", "endbr64", "single-step").
	ProbeCostSeconds float64 `json:"probe_cost_seconds"`
	ProbeCallSeconds float64 `json:"probe_call_seconds"`
	ProbeFirst       string  `json:"probe_first_instruction,omitempty"`
	// CountedFraction is the share of the region's time whose calls were
	// counted (stayed on one CPU without a task switch); W and the events
	// are extrapolated from them.
	CountedFraction float64 `json:"counted_fraction"`

	WorkFlops       *float64           `json:"work_flops"`
	WorkByPrecision map[string]float64 `json:"work_by_precision,omitempty"`
	// TrafficBytes is Q of the region; null where it cannot be attributed
	// (see the flags).
	TrafficBytes *float64 `json:"traffic_bytes"`
	Intensity    *float64 `json:"intensity"`
	GFlops       *float64 `json:"gflops"`

	Bound                *Bound   `json:"bound,omitempty"`
	AttainableGFlops     *float64 `json:"attainable_gflops"`
	FractionOfAttainable *float64 `json:"fraction_of_attainable"`

	// Events are the -e events over the region's counted calls,
	// extrapolated like W.
	Events []EventCount `json:"events,omitempty"`
	Flags  []Flag       `json:"flags,omitempty"`
}

// Flag codes of regions.
const (
	// FlagProbeCost: the mean call is shorter than 100 times the probes'
	// cost, so the subtracted cost dominates the error.
	FlagProbeCost = "probe-cost"
	// FlagNeverLeft: calls entered and never returned from (longjmp, an
	// exception, exit, or still running at the end).
	FlagNeverLeft = "never-left"
	// FlagUncountedCalls: calls that returned on another CPU, or during
	// which their CPU switched tasks; their per-CPU counts include other
	// work, so they are left out and W and events are extrapolated from
	// the other calls.
	FlagUncountedCalls = "uncounted-calls"
	// FlagNoCalls: the region was never called (e.g. a library the target
	// never loaded).
	FlagNoCalls = "no-calls"
	// FlagLostRecords: the probes' ring buffer overflowed; calls are
	// missing.
	FlagLostRecords = "lost-records"
	// FlagNoRegionTraffic: DRAM traffic is not attributed to regions.
	FlagNoRegionTraffic = "no-region-traffic"
	// FlagWorkerThreads: the probed function hands work to other threads
	// (OpenMP workers), which run on other CPUs than the calling one, so
	// per-CPU counts of its calls hold the calling thread's share only.
	FlagWorkerThreads = "worker-threads"
)

// RegionPoints turns the point's regions into points of their own, for
// the commands that draw, report and compare points: each labelled
// "LABEL/REGION", with the region's time, W, Q and placement, its flags,
// and the point's command, source, emulation and machine. A region is one
// sample: its figures are from one run.
func (p *Point) RegionPoints() []Point {
	out := make([]Point, 0, len(p.Regions))
	for _, r := range p.Regions {
		rp := Point{Schema: p.Schema, Label: p.Label + "/" + r.Name, Command: p.Command, Created: p.Created,
			Source: p.Source, WorkFlops: r.WorkFlops, WorkByPrecision: r.WorkByPrecision, TrafficBytes: r.TrafficBytes,
			Seconds: r.Seconds, Intensity: r.Intensity, GFlops: r.GFlops, Bound: r.Bound,
			AttainableGFlops: r.AttainableGFlops, FractionOfAttainable: r.FractionOfAttainable,
			RoofsFile: p.RoofsFile, Threads: p.Threads, Events: r.Events, Exit: p.Exit, Machine: p.Machine,
			Emulation: p.Emulation, Flags: r.Flags}
		rp.CI = Uncertainty{Confidence: p.CI.Confidence, Method: "none", N: 1,
			Seconds: Interval{Lo: r.Seconds, Hi: r.Seconds}}
		rp.Samples.Seconds = []float64{r.Seconds}
		if r.WorkFlops != nil {
			rp.Samples.WorkFlops = []float64{*r.WorkFlops}
		}
		if r.TrafficBytes != nil {
			rp.Samples.TrafficBytes = []float64{*r.TrafficBytes}
		}
		out = append(out, rp)
	}
	return out
}
