package roofs

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rprof/rprof/internal/affinity"
	"github.com/rprof/rprof/internal/stats"
	"github.com/rprof/rprof/machine"
	"github.com/rprof/rprof/roofline"
)

func ci(v, rel float64) roofline.Interval {
	return roofline.Interval{Lo: v * (1 - rel), Hi: v * (1 + rel)}
}

func TestInconsistenciesFindRoofsPhysicsRulesOut(t *testing.T) {
	fma := func(threads int, g float64) roofline.ComputeRoof {
		return roofline.ComputeRoof{Name: "avx512-fma-fp64", Threads: threads, GFlops: g, CI: ci(g, 0.01)}
	}
	bw := func(level string, threads int, g, rel float64) roofline.BandwidthRoof {
		return roofline.BandwidthRoof{Level: level, Threads: threads, GBytesPerS: g, CI: ci(g, rel)}
	}
	tests := []struct {
		name string
		r    roofline.Roofs
		want []string // the texts' starts
	}{
		{"two threads above one: consistent", roofline.Roofs{Compute: []roofline.ComputeRoof{fma(1, 120.4), fma(2, 238)}}, nil},
		{"two-thread FMA below one-thread (the Intel guest, busy)", roofline.Roofs{Compute: []roofline.ComputeRoof{fma(1, 120.4), fma(2, 51.7)}},
			[]string{"avx512-fma-fp64 (2 threads) 51.7 [51.18, 52.22] GFLOP/s is below its 120.4 [119.2, 121.6] GFLOP/s on 1 thread"}},
		{"far below with too few samples for an interval", roofline.Roofs{Compute: []roofline.ComputeRoof{fma(1, 266.4),
			{Name: "avx512-fma-fp64", Threads: 2, GFlops: 27.91, CI: roofline.Interval{Lo: 6.297, Hi: 387.6}, IntervalUnknown: true}}},
			[]string{"avx512-fma-fp64 (2 threads) 27.91 [uncertainty unknown: samples 6.297 to 387.6] GFLOP/s is below its 266.4 [263.7, 269.1] GFLOP/s on 1 thread"}},
		{"a few percent below is noise", roofline.Roofs{Compute: []roofline.ComputeRoof{fma(1, 120), fma(2, 115)}}, nil},
		{"below but within the intervals", roofline.Roofs{Bandwidth: []roofline.BandwidthRoof{bw("DRAM", 1, 27.3, 0.3), bw("DRAM", 2, 17.3, 0.3)}}, nil},
		{"library roofs are left to their own flag", roofline.Roofs{Compute: []roofline.ComputeRoof{
			{Name: "onednn-ip", Kind: roofline.ComputeKindLibrary, Threads: 1, GFlops: 100, CI: ci(100, 0.01)},
			{Name: "onednn-ip", Kind: roofline.ComputeKindLibrary, Threads: 2, GFlops: 50, CI: ci(50, 0.01)}}}, nil},
		{"two-thread DRAM below one-thread", roofline.Roofs{Bandwidth: []roofline.BandwidthRoof{bw("DRAM", 1, 27.3, 0.01), bw("DRAM", 2, 17.3, 0.01)}},
			[]string{"DRAM (2 threads) 17.3 [17.13, 17.47] GB/s is below its 27.3 [27.03, 27.57] GB/s on 1 thread"}},
		{"a one-sample roof says its uncertainty is unknown", roofline.Roofs{Bandwidth: []roofline.BandwidthRoof{bw("DRAM", 1, 44.71, 0.01),
			{Level: "DRAM", Threads: 2, GBytesPerS: 29.76, CI: roofline.Interval{Lo: 29.76, Hi: 29.76}, IntervalUnknown: true}}},
			[]string{"DRAM (2 threads) 29.76 [uncertainty unknown: samples 29.76 to 29.76] GB/s is below its 44.71 [44.26, 45.16] GB/s on 1 thread"}},
		{"L3 below DRAM on the same threads", roofline.Roofs{Bandwidth: []roofline.BandwidthRoof{bw("L3", 1, 20, 0.01), bw("DRAM", 1, 40, 0.01), bw("DRAM", 2, 60, 0.01)}},
			[]string{"L3 (1 thread) 20 [19.8, 20.2] GB/s is below DRAM's 40 [39.6, 40.4] GB/s on the same threads"}},
		{"DRAM of another scope is no reference for L3", roofline.Roofs{Bandwidth: []roofline.BandwidthRoof{bw("L3", 1, 50, 0.01), bw("DRAM", 2, 60, 0.01)}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := inconsistencies(&tt.r)
			var texts []string
			for _, inc := range got {
				texts = append(texts, inc.text)
			}
			if !slices.Equal(texts, tt.want) {
				t.Errorf("inconsistencies %q, want %q", texts, tt.want)
			}
		})
	}
}

func TestFlagInconsistentNamesTheRoofAndBothFigures(t *testing.T) {
	rep := &Report{}
	rep.Roofs.Compute = []roofline.ComputeRoof{{Name: "avx512-fma-fp64", Threads: 1, GFlops: 120.4, CI: ci(120.4, 0.01)},
		{Name: "avx512-fma-fp64", Threads: 2, GFlops: 51.7, CI: ci(51.7, 0.01)}}
	rep.Roofs.Bandwidth = []roofline.BandwidthRoof{{Level: "DRAM", Threads: 1, GBytesPerS: 27.3, CI: ci(27.3, 0.01)},
		{Level: "DRAM", Threads: 2, GBytesPerS: 17.3, CI: ci(17.3, 0.01)}}
	flagInconsistent(rep, false)
	if len(rep.Roofs.Flags) != 1 {
		t.Fatalf("flags %+v, want one for the bandwidth roof alone", rep.Roofs.Flags)
	}
	f := rep.Roofs.Flags[0]
	for _, want := range []string{"DRAM (2 threads)", "17.3", "27.3", "1 thread", "measured again"} {
		if f.Code != roofline.FlagInconsistentRoof || !strings.Contains(f.Message, want) {
			t.Errorf("flag %+v: want %s naming %q", f, roofline.FlagInconsistentRoof, want)
		}
	}
}

// TestComputeRecheckMeasuresAgainARoofBelowFewerThreads gives the compute
// recheck a two-thread roof recorded far below its one-thread one: it is
// measured again (on one thread here, as a stand-in), rises, and is not
// flagged; one recorded far above anything is flagged if its one-thread
// reference stays above it.
func TestComputeRecheckMeasuresAgainARoofBelowFewerThreads(t *testing.T) {
	k, cpus := fmaKernelOrSkip(t)
	tests := []struct {
		name      string
		reference float64 // the one-thread roof, GFLOP/s
		wantFlag  bool
	}{
		{"a roof held down rises when measured again", 0.002, false},
		{"a roof still below its reference is flagged", 1e9, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := &Report{}
			rep.Roofs.Tuning.StopReasons = map[string]int{}
			low := roofline.Interval{Lo: 0.000999, Hi: 0.001001}
			rep.Roofs.Compute = []roofline.ComputeRoof{
				{Name: k.Name, Threads: 1, GFlops: tt.reference, CI: ci(tt.reference, 0.01)},
				{Name: k.Name, Threads: 2, GFlops: 0.001, CI: low},
			}
			rep.Details.Compute = []Detail{{}, {Invocations: 1, Iterations: 8,
				Reasons: map[stats.StopReason]int{stats.StopConverged: 1}}}
			r := &run{o: Options{Invoker: InProcess{}, Invocations: 1}, rep: rep, tally: &tally{tuning: &rep.Roofs.Tuning}}
			computed := []measuredCompute{{roof: 1, kernel: k.Name, cpus: cpus[:1], iters: 1 << 14, at: time.Now()}}
			if err := recheckComputeRoofs(context.Background(), r, computed); err != nil {
				t.Fatal(err)
			}
			if got := rep.Roofs.Compute[1].GFlops; got <= 0.001 {
				t.Errorf("the roof below fewer threads was not measured again: %v GFLOP/s", got)
			}
			flagged := slices.ContainsFunc(rep.Roofs.Flags, func(f roofline.Flag) bool { return f.Code == roofline.FlagInconsistentRoof })
			if flagged != tt.wantFlag {
				t.Errorf("%s flagged %v, want %v: %+v", roofline.FlagInconsistentRoof, flagged, tt.wantFlag, rep.Roofs.Flags)
			}
		})
	}
}

// TestBandwidthRecheckMeasuresAnInconsistentRoofTwiceAndFlagsIt gives the
// recheck an L1 roof far below a one-thread reference no recheck can
// reach: it is measured in the recheck and once more, and flagged.
func TestBandwidthRecheckMeasuresAnInconsistentRoofTwiceAndFlagsIt(t *testing.T) {
	ks := bandwidthKernelsOrSkip(t)
	const ws = 32 << 10
	allowed, err := affinity.Allowed()
	if err != nil {
		t.Fatal(err)
	}
	ops, err := allocOperands(context.Background(), ks, allowed[:1], ws)
	if err != nil {
		t.Fatal(err)
	}
	rep := &Report{}
	rep.Roofs.Tuning.StopReasons = map[string]int{}
	low := ci(0.001, 0.01)
	rep.Roofs.Bandwidth = []roofline.BandwidthRoof{{Level: "L1", Threads: 1, GBytesPerS: 1e9, CI: ci(1e9, 0.01), WorkingSetBytes: ws},
		{Level: "L1", Threads: 2, GBytesPerS: 0.001, CI: low, WorkingSetBytes: ws}}
	rep.Details.Bandwidth = []Detail{{}, {Invocations: 1, Iterations: 48,
		Reasons: map[stats.StopReason]int{stats.StopConverged: 1}}}
	r := &run{rep: rep, tally: &tally{tuning: &rep.Roofs.Tuning}}
	swept := &sweptRoofs{roofs: []sweptRoof{{roof: 1, kernel: ks[0], cpus: allowed[:1], ops: ops, at: time.Now()}}}
	if err := recheckBandwidthRoofs(context.Background(), r, swept, nil, machine.Topology{}); err != nil {
		t.Fatal(err)
	}
	if d := rep.Details.Bandwidth[1]; d.Invocations != 3 {
		t.Errorf("the inconsistent roof has %d invocations, want the sweep's, the recheck's and one more", d.Invocations)
	}
	var flagged []string
	for _, f := range rep.Roofs.Flags {
		if f.Code == roofline.FlagInconsistentRoof {
			flagged = append(flagged, f.Message)
		}
	}
	if len(flagged) != 1 || !strings.Contains(flagged[0], "L1 (2 threads)") || !strings.Contains(flagged[0], "on 1 thread") {
		t.Errorf("flags %q: want one %s naming L1 on 2 threads and its 1-thread figure", flagged, roofline.FlagInconsistentRoof)
	}
}
