package roofs

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rprof/rprof/internal/affinity"
	"github.com/rprof/rprof/internal/stats"
	"github.com/rprof/rprof/machine"
	"github.com/rprof/rprof/roofline"
	"github.com/rprof/rprof/roofs/kernels"
)

// The recheck measures each roof's point for real; the sweep's figures are
// set far from anything the kernel can do, so that the outcome is certain.
func TestRecheckKeepsTheHigherFigureAndFlagsAMove(t *testing.T) {
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
	tests := []struct {
		name      string
		sweep     float64 // GB/s
		wantSweep bool    // the sweep's figure stays the roof
		spare     bool    // the scope's CPU has a spare core
	}{
		{"a sweep held far down is replaced by the recheck", 0.001, false, false},
		{"a sweep far above the recheck stays the roof", 1e9, true, false},
		{"a one-thread roof is rechecked on its spare core", 0.001, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var spare map[int]int
			if tt.spare {
				if len(allowed) < 2 {
					t.Skipf("one allowed CPU (%v): no spare core", allowed)
				}
				spare = map[int]int{allowed[0]: allowed[1]}
			}
			var progress []string
			rep := &Report{}
			rep.Roofs.Tuning.StopReasons = map[string]int{}
			ci := roofline.Interval{Lo: tt.sweep * 0.99, Hi: tt.sweep * 1.01}
			rep.Roofs.Bandwidth = []roofline.BandwidthRoof{{Level: "L1", Threads: 1, GBytesPerS: tt.sweep, CI: ci, WorkingSetBytes: ws}}
			rep.Details.Bandwidth = []Detail{{Invocations: 1, Iterations: 48,
				Reasons: map[stats.StopReason]int{stats.StopConverged: 1}}}
			o := Options{Progress: func(step string) { progress = append(progress, step) }}
			r := &run{o: o, rep: rep, tally: &tally{tuning: &rep.Roofs.Tuning}}
			swept := &sweptRoofs{roofs: []sweptRoof{{kernel: ks[0], cpus: allowed[:1], ops: ops, at: time.Now()}}}
			if err := recheckBandwidthRoofs(context.Background(), r, swept, spare, machine.Topology{}); err != nil {
				t.Fatal(err)
			}
			roof, d := rep.Roofs.Bandwidth[0], rep.Details.Bandwidth[0]
			if kept := roof.GBytesPerS == tt.sweep; kept != tt.wantSweep {
				t.Errorf("roof %v GB/s after a sweep of %v: kept the sweep's %v, want %v", roof.GBytesPerS, tt.sweep, kept, tt.wantSweep)
			}
			checkRechecked(t, roof.GBytesPerS, roof.CI, d, 2, 48, rep.Roofs.Flags, roofline.FlagBandwidthMoved, "L1 (1 thread)")
			onSpare := fmt.Sprintf("on CPU %d", allowed[min(1, len(allowed)-1)])
			said := strings.Join(progress, "\n")
			if got := strings.Contains(said, onSpare); got != tt.spare {
				t.Errorf("progress %q: says %q %v, want %v", said, onSpare, got, tt.spare)
			}
			if tt.spare && !strings.Contains(rep.Roofs.Flags[0].Message, fmt.Sprintf("in the sweep on CPU %d", allowed[0])) {
				t.Errorf("flag %q: want it to name the sweep's CPU %d and the recheck's", rep.Roofs.Flags[0].Message, allowed[0])
			}
			if swept.roofs != nil {
				t.Error("the recheck kept the operands")
			}
		})
	}
}

func TestFarLowComputePicksOnlyFMARoofsFarBelowTheirScopesShare(t *testing.T) {
	// Shares of theoretical peak; 0 peak marks a mul+add roof (none).
	type roof struct {
		threads      int
		gflops, peak float64
	}
	tests := []struct {
		name  string
		roofs []roof
		want  []int // indexes of the roofs picked
	}{
		{"roofs that agree are left alone", []roof{{1, 100, 100}, {1, 50, 52}, {1, 97, 100}}, nil},
		{"one far below the others is picked", []roof{{1, 100, 100}, {1, 36, 50}, {1, 200, 195}}, []int{1}},
		{"just under the highest share is not far", []roof{{1, 100, 100}, {1, 47, 50}, {1, 200, 195}}, nil},
		{"most of a scope held down: the held-down ones are picked, not judged by their own median",
			[]roof{{2, 27, 27}, {2, 13, 27}, {2, 26, 54}, {2, 53, 108}, {2, 113, 216}, {2, 223, 216}, {2, 411, 432}}, []int{1, 2, 3, 4}},
		{"a mul+add roof has no peak to judge by", []roof{{1, 100, 100}, {1, 10, 0}, {1, 200, 195}}, nil},
		{"each scope is judged by its own roofs", []roof{{1, 100, 100}, {1, 98, 100}, {2, 140, 200}, {2, 72, 100}, {2, 50, 100}},
			[]int{4}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var roofs []roofline.ComputeRoof
			var measured []measuredCompute
			for i, r := range tt.roofs {
				roofs = append(roofs, roofline.ComputeRoof{Threads: r.threads, GFlops: r.gflops, TheoreticalGFlops: r.peak})
				measured = append(measured, measuredCompute{roof: i})
			}
			var got []int
			for _, m := range farLowCompute(roofs, measured) {
				got = append(got, m.roof)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("picked %v, want %v", got, tt.want)
			}
		})
	}
}

// The recheck runs the real kernel; the first figures are set far from
// anything it can do, and far below the other roof's share of its peak.
func TestComputeRecheckKeepsTheHigherFigureAndFlagsAMove(t *testing.T) {
	k, cpus := fmaKernelOrSkip(t)
	tests := []struct {
		name      string
		first     float64 // GFLOP/s
		wantFirst bool    // the first figure stays the roof
	}{
		{"a figure held far down is replaced by the recheck", 0.001, false},
		{"a figure far above the recheck stays the roof", 1e9, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := &Report{}
			rep.Roofs.Tuning.StopReasons = map[string]int{}
			ci := roofline.Interval{Lo: tt.first * 0.99, Hi: tt.first * 1.01}
			rep.Roofs.Compute = []roofline.ComputeRoof{
				{Name: k.Name, Threads: 1, GFlops: tt.first, CI: ci, TheoreticalGFlops: tt.first * 1e6},
				{Name: "other", Threads: 1, GFlops: 1, TheoreticalGFlops: 1},
				{Name: "another", Threads: 1, GFlops: 1, TheoreticalGFlops: 1},
			}
			rep.Details.Compute = []Detail{{Invocations: 3, Iterations: 24,
				Reasons: map[stats.StopReason]int{stats.StopConverged: 3}}}
			r := &run{o: Options{Invoker: InProcess{}, Invocations: 1}, rep: rep, tally: &tally{tuning: &rep.Roofs.Tuning}}
			computed := []measuredCompute{{kernel: k.Name, cpus: cpus[:1], iters: 1 << 14, at: time.Now()}}
			if err := recheckComputeRoofs(context.Background(), r, computed); err != nil {
				t.Fatal(err)
			}
			roof, d := rep.Roofs.Compute[0], rep.Details.Compute[0]
			if kept := roof.GFlops == tt.first; kept != tt.wantFirst {
				t.Errorf("roof %v GFLOP/s after a first %v: kept the first, %v; want %v", roof.GFlops, tt.first, kept, tt.wantFirst)
			}
			checkRechecked(t, roof.GFlops, roof.CI, d, 4, 24, rep.Roofs.Flags, roofline.FlagComputeMoved, k.Name+" (1 thread)")
		})
	}
}

// fmaKernelOrSkip is an FMA kernel this CPU runs and the CPUs this
// process may use; it skips the test where there is none.
func fmaKernelOrSkip(t *testing.T) (kernels.Compute, []int) {
	t.Helper()
	ks, _ := kernels.ComputeKernels()
	var k kernels.Compute
	for _, c := range ks {
		if c.FMA {
			k = c
		}
	}
	if k.Name == "" {
		t.Skip("no FMA kernel on this CPU")
	}
	cpus, err := affinity.Allowed()
	if err != nil {
		t.Fatal(err)
	}
	return k, cpus
}

// checkRechecked checks what every recheck must leave: the roof's figure
// with an interval around it, the same in its detail; the recheck's
// invocation and iterations added to the first ones; and one flag of code
// naming the roof.
func checkRechecked(t *testing.T, value float64, ci roofline.Interval, d Detail, wantInvocations, firstIterations int, flags []roofline.Flag, code, name string) {
	t.Helper()
	if ci.Lo > value || ci.Hi < value {
		t.Errorf("roof %v %v: the figure and its interval do not go together", value, ci)
	}
	if d.Invocations != wantInvocations || d.Iterations <= firstIterations {
		t.Errorf("detail: %d invocations, %d iterations; want %d invocations and the recheck's iterations added to %d", d.Invocations, d.Iterations, wantInvocations, firstIterations)
	}
	var moved []string
	for _, f := range flags {
		if f.Code == code {
			moved = append(moved, f.Message)
		}
	}
	if len(moved) != 1 || !strings.Contains(moved[0], name) {
		t.Errorf("flags %q: want one %s naming %s", moved, code, name)
	}
}

func TestUnevenThreadsAreFlaggedOnlyInMultiThreadCacheRoofsOfOneCoreType(t *testing.T) {
	hybrid := machine.Topology{CoreTypes: map[string][]int{"cpu_core": {0, 1}, "cpu_atom": {2, 3}}}
	tests := []struct {
		name  string
		level string
		cpus  []int
		u     unevenness
		topo  machine.Topology
		want  string
	}{
		{"a slow core in an L1 roof", "L1", []int{0, 1}, unevenness{1.62, 0, 1}, machine.Topology{}, "L1 (2 threads): CPU 0 took 1.62× as long as CPU 1"},
		{"threads within the noise", "L2", []int{0, 1}, unevenness{1.15, 1, 0}, machine.Topology{}, ""},
		{"DRAM, which threads share unevenly anyway", roofline.LevelDRAM, []int{0, 1}, unevenness{1.8, 0, 1}, machine.Topology{}, ""},
		{"one thread has nothing to compare", "L1", []int{0}, unevenness{1, 0, 0}, machine.Topology{}, ""},
		{"a P-core and an E-core differ by design", "L1", []int{1, 2}, unevenness{1.9, 2, 1}, hybrid, ""},
		{"two P-cores of a hybrid CPU", "L3", []int{0, 1}, unevenness{1.5, 1, 0}, hybrid, "L3 (2 threads): CPU 1 took 1.50× as long as CPU 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := unevenRoof(tt.level, tt.cpus, tt.u, tt.topo); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestUnevenComparesEachWorkersTimeBetweenReadings(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		var d []time.Duration
		for _, x := range v {
			d = append(d, time.Duration(x)*time.Millisecond)
		}
		return d
	}
	tests := []struct {
		name          string
		cpus          []int
		before, after []time.Duration
		want          unevenness
	}{
		{"alike", []int{4, 5}, ms(10, 10), ms(30, 30), unevenness{1, 4, 4}},
		{"the second CPU slow", []int{4, 5}, ms(10, 10), ms(30, 50), unevenness{2, 5, 4}},
		{"only the time between readings counts", []int{0, 1, 2}, ms(100, 0, 0), ms(120, 30, 20), unevenness{1.5, 1, 0}},
		{"no time passed", []int{0, 1}, ms(5, 5), ms(5, 5), unevenness{1, 0, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := uneven(tt.cpus, tt.before, tt.after); got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

// A two-thread roof the sweep measured far above anything the kernel can
// do stays the roof, with the unevenness of its own evaluation.
func TestRecheckFlagsAKeptRoofWhoseThreadsRanUnevenly(t *testing.T) {
	ks := bandwidthKernelsOrSkip(t)
	allowed, err := affinity.Allowed()
	if err != nil || len(allowed) < 2 {
		t.Skipf("want 2 CPUs, have %v (%v)", allowed, err)
	}
	const ws = 64 << 10
	cpus := allowed[:2]
	ops, err := allocOperands(context.Background(), ks, cpus, ws)
	if err != nil {
		t.Fatal(err)
	}
	rep := &Report{}
	rep.Roofs.Tuning.StopReasons = map[string]int{}
	ci := roofline.Interval{Lo: 1e9, Hi: 1e9}
	rep.Roofs.Bandwidth = []roofline.BandwidthRoof{{Level: "L1", Threads: 2, GBytesPerS: 1e9, CI: ci, WorkingSetBytes: ws}}
	rep.Details.Bandwidth = []Detail{{Reasons: map[stats.StopReason]int{}}}
	r := &run{rep: rep, tally: &tally{tuning: &rep.Roofs.Tuning}}
	swept := &sweptRoofs{roofs: []sweptRoof{{kernel: ks[0], cpus: cpus, ops: ops, uneven: unevenness{2, cpus[1], cpus[0]}, at: time.Now()}}}
	if err := recheckBandwidthRoofs(context.Background(), r, swept, nil, machine.Topology{}); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("L1 (2 threads): CPU %d took 2.00× as long as CPU %d", cpus[1], cpus[0])
	for _, f := range rep.Roofs.Flags {
		if f.Code == roofline.FlagUnevenThreads && strings.Contains(f.Message, want) {
			return
		}
	}
	t.Errorf("flags %+v: want %s saying %q", rep.Roofs.Flags, roofline.FlagUnevenThreads, want)
}
