package measure

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/rprof/rprof/pmu"
	"github.com/rprof/rprof/regions"
	"github.com/rprof/rprof/roofline"
)

// A recorded probed run on a machine with FP counters: the hardware path
// of region W, tested on recorded values (here the counters fail to open).
func TestRegionPointsWeighWorkCountsAndExtrapolateByTime(t *testing.T) {
	plan := &regionPlan{
		probes: []regions.Probe{{Name: "dgemm_kernel", Spec: regions.Spec{Symbol: "dgemm_kernel"}, Kind: regions.Function,
			Path: "/opt/app/bin/app", First: []byte{0x55}}},
		counters: []Counter{
			{Name: "fp_ret_sse_avx_ops.all", PMU: "cpu", Kind: KindWork, Weight: 1, Precision: roofline.Mixed},
			{Name: "page-faults", PMU: "software", Kind: KindEvent},
		},
	}
	st := regions.Stats{Name: "dgemm_kernel", Calls: 10, Migrated: 1, Switched: 1, Threads: 1,
		Seconds: 0.010, MeasuredSeconds: 0.0102, SelfSeconds: 0.010, Mean: 0.001, Median: 0.001, P99: 0.0012, MeasuredMean: 0.00102,
		// 8 of 10 calls counted, over 8 ms; the FP counter multiplexed
		// half the time.
		Counts: []pmu.Count{
			{Raw: 40_000_000, Enabled: 8_000_000, Running: 4_000_000},
			{Raw: 800, Enabled: 8_000_000, Running: 8_000_000},
		},
		CountedSeconds: 0.008, Cost: regions.Cost{Inside: 2 * time.Microsecond, Call: 7 * time.Microsecond}}
	got := regionPoints(plan, regions.Result{Regions: []regions.Stats{st}, Lost: []uint64{3}}, nil, nil, 1)
	if len(got) != 1 {
		t.Fatalf("%d regions", len(got))
	}
	r := got[0]
	// 40e6 counts scaled x2 for multiplexing = 80e6 FLOP over 8 ms
	// counted: 10 GFLOP/s; extrapolated to the 10 ms of all calls: 100e6.
	if r.WorkFlops == nil || math.Abs(*r.WorkFlops-100e6) > 1 || r.GFlops == nil || math.Abs(*r.GFlops-10) > 1e-9 {
		t.Errorf("W %v, GFLOP/s %v; want 100e6 and 10", r.WorkFlops, r.GFlops)
	}
	if r.WorkByPrecision[roofline.Mixed] != *r.WorkFlops {
		t.Errorf("by precision %v", r.WorkByPrecision)
	}
	if len(r.Events) != 1 || r.Events[0].Name != "page-faults" || math.Abs(r.Events[0].Value-1000) > 1e-9 {
		t.Errorf("events %+v, want 1000 page faults (800 x 10/8 ms)", r.Events)
	}
	if r.TrafficBytes != nil || r.Intensity != nil || r.Bound != nil {
		t.Errorf("Q %v intensity %v bound %v: regions have no traffic on the PMU backend", r.TrafficBytes, r.Intensity, r.Bound)
	}
	if r.CountedFraction != 0.8 || r.ProbeCostSeconds != 2e-6 || r.ProbeCallSeconds != 7e-6 || r.ProbeFirst != "push" {
		t.Errorf("%+v", r)
	}
	if r.Probe != "/opt/app/bin/app:dgemm_kernel" {
		t.Errorf("probe %q", r.Probe)
	}
	var codes []string
	for _, f := range r.Flags {
		codes = append(codes, f.Code)
	}
	// The mean call (1.02 ms) is above 100 x 7 us: no probe-cost flag.
	if !slices.Equal(codes, []string{roofline.FlagUncountedCalls, roofline.FlagLostRecords}) {
		t.Errorf("flags %v", codes)
	}
}

func TestRegionFlagsSayWhatLimitsTheFigures(t *testing.T) {
	short := regions.Stats{Calls: 5, MeasuredMean: 100e-6, Cost: regions.Cost{Inside: time.Microsecond, Call: 3 * time.Microsecond}}
	never := regions.Stats{NeverLeft: 2}
	none := regions.Stats{}
	for _, c := range []struct {
		st   regions.Stats
		want []string
	}{
		{short, []string{roofline.FlagProbeCost}},
		{never, []string{roofline.FlagNeverLeft}},
		{none, []string{roofline.FlagNoCalls}},
	} {
		var codes []string
		for _, f := range regionFlags(c.st, false) {
			codes = append(codes, f.Code)
		}
		if !slices.Equal(codes, c.want) {
			t.Errorf("%+v: flags %v, want %v", c.st, codes, c.want)
		}
	}
}

// With an attributing backend (--count emulate), a function region takes
// its function's W and Q from the backend's table: recorded values.
func TestRegionPointsTakeWorkAndTrafficFromTheAttribution(t *testing.T) {
	plan := &regionPlan{attributed: true, probes: []regions.Probe{
		{Name: "triad", Spec: regions.Spec{Symbol: "triad"}, Kind: regions.Function, Path: "/tmp/x/triad"},
		{Name: "rare", Spec: regions.Spec{Symbol: "rare"}, Kind: regions.Function, Path: "/tmp/x/triad"},
	}}
	funcs := []roofline.FunctionCount{
		{Name: "triad", Object: "triad", WorkFlops: 2e7, TrafficBytes: 3e8},
		{Name: "triad", Object: "libother.so", WorkFlops: 1, TrafficBytes: 1},
	}
	res := regions.Result{Regions: []regions.Stats{
		{Name: "triad", Calls: 5, Seconds: 0.5},
		{Name: "rare", Calls: 1, Seconds: 0.1},
	}}
	got := regionPoints(plan, res, funcs, nil, 1)
	tr := got[0]
	if tr.WorkFlops == nil || *tr.WorkFlops != 2e7 || tr.TrafficBytes == nil || *tr.TrafficBytes != 3e8 ||
		tr.Intensity == nil || math.Abs(*tr.Intensity-2e7/3e8) > 1e-12 || math.Abs(*tr.GFlops-0.04) > 1e-12 {
		t.Errorf("triad: %+v", tr)
	}
	if got[1].WorkFlops != nil || len(got[1].Flags) == 0 || got[1].Flags[0].Code != roofline.FlagMissingCounter {
		t.Errorf("a region missing from the table must say so: %+v", got[1])
	}
}

// Calls of one probed function split into two groups (rprof dnn: two
// primitives) are two regions, each weighed from its own counted calls.
func TestGroupPointsWeighEachGroupsCalls(t *testing.T) {
	plan := &regionPlan{
		probes: []regions.Probe{{Name: "dnnl_primitive_execute", Spec: regions.Spec{File: "libdnnl.so", Symbol: "dnnl_primitive_execute"},
			Kind: regions.Function, Path: "/usr/lib/libdnnl.so.2", First: []byte{0xf3, 0x0f, 0x1e, 0xfa}}},
		counters: []Counter{{Name: "fp_ret_sse_avx_ops.all", PMU: "cpu", Kind: KindWork, Weight: 1, Precision: roofline.Mixed}},
	}
	cost := regions.Cost{Inside: time.Microsecond, Call: 3 * time.Microsecond}
	call := func(secs float64, flops uint64, cpu, exit uint32) regions.Call {
		c := regions.Call{TID: 9, Seconds: secs, MeasuredSeconds: secs + 1e-6, Outermost: true, CPU: cpu, ExitCPU: exit}
		if cpu == exit {
			c.Counts = []pmu.Count{{Raw: flops, Enabled: 1000, Running: 1000}}
		}
		return c
	}
	res := regions.Result{Regions: []regions.Stats{{Name: "dnnl_primitive_execute", Calls: 4, Cost: cost}}}
	groups := []CallGroup{
		{Name: "conv", Calls: []regions.Call{call(0.002, 4_000_000, 0, 0), call(0.002, 0, 0, 1)}},
		{Name: "gelu", Calls: []regions.Call{call(0.001, 500_000, 1, 1), call(0.001, 500_000, 1, 1)}},
	}
	got := groupPoints(plan, res, groups, nil, 1)
	if len(got) != 2 || got[0].Name != "conv" || got[1].Name != "gelu" {
		t.Fatalf("regions %+v", got)
	}
	for _, tt := range []struct {
		r             roofline.Region
		calls         uint64
		flops         float64
		migratedFlags int
	}{
		// conv: one call counted (4e6 FLOP over 2 ms), extrapolated by
		// time to both: 8e6; the migrated call is flagged.
		{got[0], 2, 8e6, 1},
		{got[1], 2, 1e6, 0},
	} {
		r := tt.r
		if r.Calls != tt.calls || r.WorkFlops == nil || math.Abs(*r.WorkFlops-tt.flops) > 1e-6 || r.ProbeCostSeconds != 1e-6 || r.Probe != "/usr/lib/libdnnl.so.2:dnnl_primitive_execute" {
			t.Errorf("%s: calls %d W %v cost %g probe %s; want %d calls, %g FLOP", r.Name, r.Calls, r.WorkFlops, r.ProbeCostSeconds, r.Probe, tt.calls, tt.flops)
		}
		n := 0
		for _, f := range r.Flags {
			if f.Code == roofline.FlagUncountedCalls {
				n++
			}
		}
		if n != tt.migratedFlags {
			t.Errorf("%s: flags %+v", r.Name, r.Flags)
		}
	}
}
