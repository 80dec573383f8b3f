package roofs

import (
	"context"
	"errors"
	"maps"
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/rprof/rprof/internal/stats"
	"github.com/rprof/rprof/internal/testutil"
	"github.com/rprof/rprof/machine"
	"github.com/rprof/rprof/roofline"
	"github.com/rprof/rprof/roofs/kernels"
)

func TestScopesPickOneCPUPerCoreAndRejectTooMany(t *testing.T) {
	// Two sockets of two cores with SMT: CPUs 0-3 on socket 0 (siblings
	// 0/4, 1/5 ...), as Linux numbers them.
	smt := machine.Topology{Sockets: 2, Cores: 4, Threads: 8, SMTSiblings: [][]int{{0, 4}, {1, 5}, {2, 6}, {3, 7}}}
	vm := machine.Topology{Sockets: 1, Cores: 2, Threads: 2, SMTSiblings: [][]int{{0}, {1}}}
	tests := []struct {
		name    string
		topo    machine.Topology
		allowed []int
		threads []int
		want    [][]int
		wantErr error
	}{
		{"2-core VM: 1 and 2 threads", vm, []int{0, 1}, nil, [][]int{{0}, {0, 1}}, nil},
		{"two sockets: 1, one socket, all", smt, []int{0, 1, 2, 3, 4, 5, 6, 7}, nil, [][]int{{0}, {0, 1}, {0, 1, 2, 3}}, nil},
		{"taskset narrows the cores", smt, []int{2, 3, 6, 7}, nil, [][]int{{2}, {2, 3}}, nil},
		{"explicit list", smt, []int{0, 1, 2, 3, 4, 5, 6, 7}, []int{3}, [][]int{{0, 1, 2}}, nil},
		{"beyond the machine", vm, []int{0, 1}, []int{4}, nil, ErrThreads},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := scopes(tt.topo, tt.allowed, tt.threads)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if !slices.EqualFunc(got, tt.want, slices.Equal) {
				t.Errorf("scopes = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestTheoreticalGFlops(t *testing.T) {
	zen4 := fmaPipes{FMAUnits: 2, Bits: 256}
	zen5 := fmaPipes{FMAUnits: 2, Bits: 512}
	tests := []struct {
		name      string
		u         fmaPipes
		threads   int
		isa, prec string
		fma       bool
		want      float64
	}{
		{"zen5 avx512 fp64: 8 lanes x 2 pipes x 2", zen5, 1, "avx512", "fp64", true, 3 * 8 * 2 * 2},
		{"zen4 splits avx512 into 256-bit halves", zen4, 1, "avx512", "fp64", true, 3 * 4 * 2 * 2},
		{"fp32 doubles the lanes", zen5, 2, "avx512", "fp32", true, 3 * 2 * 16 * 2 * 2},
		{"scalar is one lane", zen5, 1, "scalar", "fp32", true, 3 * 1 * 2 * 2},
		{"mul+add has no theoretical peak here", zen5, 1, "avx512", "fp64", false, 0},
		{"unknown microarchitecture", fmaPipes{}, 1, "avx2", "fp64", true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := TheoreticalGFlops(tt.u, 3, tt.threads, tt.isa, tt.prec, tt.fma); got != tt.want {
				t.Errorf("= %v, want %v", got, tt.want)
			}
		})
	}
}

func TestEveryPeakTableEntryNamesItsSource(t *testing.T) {
	for arch, u := range fpUnits {
		if u.Source == "" || (!u.Verified && !strings.Contains(u.Source, "UNVERIFIED")) {
			t.Errorf("%s: source %q must be given, and marked UNVERIFIED unless verified", arch, u.Source)
		}
	}
}

// TestPeakFiguresOfEachIdentity checks the pipes and flags the
// theoretical peaks rest on, from the fake trees (no cpufreq: the clock is
// the measured one, 3.7 GHz here).
func TestPeakFiguresOfEachIdentity(t *testing.T) {
	tests := []struct {
		tree string
		// want
		pipes      fmaPipes
		peak       float64 // 1-thread AVX-512 fp64 FMA, GFLOP/s
		unverified []string
	}{
		// The guest: model 0xA7 (Rocket Lake) with AMX. One
		// thread ran fp64 FMA at 120.4 GFLOP/s: 32 FLOP a cycle (2 x
		// 512-bit pipes) at 3.76 GHz; Rocket Lake's 16 would need 7.5.
		{tree: "vm-intel-amx", pipes: fpUnits["sapphirerapids"], peak: 3.7 * 8 * 2 * 2,
			unverified: []string{"UNVERIFIED", "inferred from the CPU's features", "rocketlake"}},
		{tree: "sapphirerapids", pipes: fpUnits["sapphirerapids"], peak: 3.7 * 8 * 2 * 2, unverified: []string{"UNVERIFIED"}},
		{tree: "vm-zen5-firecracker", pipes: fpUnits["amdzen5"], peak: 3.7 * 8 * 2 * 2},
		{tree: "zen4", pipes: fpUnits["amdzen4"], peak: 3.7 * 4 * 2 * 2, unverified: []string{"UNVERIFIED"}},
	}
	for _, tt := range tests {
		t.Run(tt.tree, func(t *testing.T) {
			sysfs, procfs := testutil.MachineFS(t, tt.tree)
			cpu, err := machine.ReadCPU(procfs)
			if err != nil {
				t.Fatal(err)
			}
			rep := &Report{}
			pipes, clock := peakFigures(rep, cpu, sysfs, procfs, func() float64 { return 3700 })
			if pipes != tt.pipes {
				t.Errorf("pipes %+v, want %+v", pipes, tt.pipes)
			}
			if got := TheoreticalGFlops(pipes, clock.GHz, 1, "avx512", "fp64", true); math.Abs(got-tt.peak) > 1e-9 {
				t.Errorf("peak %g GFLOP/s, want %g", got, tt.peak)
			}
			var unverified []string
			for _, f := range rep.Roofs.Flags {
				if f.Code == roofline.FlagUnverifiedPeak {
					unverified = append(unverified, f.Message)
				}
			}
			all := strings.Join(unverified, "\n")
			for _, w := range tt.unverified {
				if !strings.Contains(all, w) {
					t.Errorf("unverified-peak flags %q lack %q", unverified, w)
				}
			}
			if tt.unverified == nil && unverified != nil {
				t.Errorf("unverified-peak flags %q on measured pipes", unverified)
			}
		})
	}
}

func TestDGEMMSpaces(t *testing.T) {
	tests := []struct {
		name string
		want int
	}{{"seed", 96}, {"default", 18}, {"", 18}, {"quick", 2}}
	for _, tt := range tests {
		space, err := DGEMMSpace(tt.name)
		if err != nil || len(space) != tt.want {
			t.Errorf("DGEMMSpace(%q) = %d shapes, %v; want %d", tt.name, len(space), err, tt.want)
		}
		for i := 1; i < len(space); i++ {
			if dgemmFlops(space[i].N, space[i].M, space[i].K) < dgemmFlops(space[i-1].N, space[i-1].M, space[i-1].K) {
				t.Errorf("%q: %v before %v is not smallest work first", tt.name, space[i-1], space[i])
			}
		}
	}
	if _, err := DGEMMSpace("huge"); err == nil {
		t.Error(`DGEMMSpace("huge") succeeded`)
	}
}

func TestNominalFrequency(t *testing.T) {
	cpuinfo := "processor\t: 0\ncpu MHz\t\t: 2596.134\n\nprocessor\t: 1\ncpu MHz\t\t: 2400.000\n"
	tests := []struct {
		name       string
		sys, proc  fstest.MapFS
		wantGHz    float64
		wantSource string
	}{
		{"cpufreq max wins", fstest.MapFS{"devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq": {Data: []byte("3700000\n")}},
			fstest.MapFS{"cpuinfo": {Data: []byte(cpuinfo)}}, 3.7, "cpufreq"},
		{"without cpufreq the measured clock wins", fstest.MapFS{}, fstest.MapFS{"cpuinfo": {Data: []byte(cpuinfo)}}, 3.65, "measured"},
		{"without cpufreq or clock kernel cpuinfo is used", fstest.MapFS{}, fstest.MapFS{"cpuinfo": {Data: []byte(cpuinfo)}}, 2.596134, "cpu MHz"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			measured := func() float64 { return 0 }
			if strings.Contains(tt.wantSource, "measured") {
				measured = func() float64 { return 3650 }
			}
			f, err := nominalFrequency(tt.sys, tt.proc, measured)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(f.GHz-tt.wantGHz) > 1e-9 || !strings.Contains(f.Source, tt.wantSource) {
				t.Errorf("= %+v, want %v GHz from %s", f, tt.wantGHz, tt.wantSource)
			}
		})
	}
	if _, err := nominalFrequency(fstest.MapFS{}, fstest.MapFS{"cpuinfo": {Data: []byte("processor : 0\n")}}, func() float64 { return 0 }); err == nil {
		t.Error("a cpuinfo without cpu MHz gave a frequency")
	}
	if mhz, err := cpuinfoMHz(cpuinfo, 1); err != nil || mhz != 2400 {
		t.Errorf("cpuinfoMHz(cpu 1) = %v, %v; want 2400", mhz, err)
	}
}

func TestWidestKernelsAreKept(t *testing.T) {
	comp := []kernels.Compute{
		{Name: "sse-fma-fp64", ISA: "sse", Precision: "fp64", FMA: true},
		{Name: "avx2-fma-fp64", ISA: "avx2", Precision: "fp64", FMA: true},
		{Name: "avx2-muladd-fp64", ISA: "avx2", Precision: "fp64"},
		{Name: "sse-fma-fp32", ISA: "sse", Precision: "fp32", FMA: true},
	}
	var names []string
	for _, k := range widestFMA(comp) {
		names = append(names, k.Name)
	}
	if want := []string{"avx2-fma-fp64", "sse-fma-fp32"}; !slices.Equal(names, want) {
		t.Errorf("widestFMA = %v, want %v", names, want)
	}
}

func TestMissingBLASSkipsDGEMMWithTheFix(t *testing.T) {
	saved := blasCandidates
	blasCandidates = []string{"/nonexistent/libopenblas.so.0"}
	defer func() { blasCandidates = saved }()
	rep := &Report{}
	err := measureDGEMM(context.Background(), Options{}, rep, &tally{tuning: &roofline.Tuning{StopReasons: map[string]int{}}}, []int{0}, nil)
	var skip *skipError
	if !errors.As(err, &skip) || !strings.Contains(skip.why, "apt-get install libopenblas0-pthread") {
		t.Errorf("err = %v, want a skip that names the package to install", err)
	}
}

func TestSlowDGEMMSaysWhyAndWhichKernelsMayDoBetter(t *testing.T) {
	fma := &roofline.ComputeRoof{Name: "avx512-fma-fp64", ISA: "avx512", GFlops: 116, Threads: 1}
	tests := []struct {
		lib, core string
		env       map[string]string
		want      string
		wider     []string
	}{
		{"OpenBLAS", "Haswell", nil, "OpenBLAS chose its Haswell kernels, narrower than the CPU's", []string{"SkylakeX"}},
		{"OpenBLAS", "Haswell", map[string]string{"OPENBLAS_CORETYPE": "Haswell"}, "because the workers' environment sets OPENBLAS_CORETYPE=Haswell", []string{"SkylakeX"}},
		{"OpenBLAS", "Haswell", map[string]string{"OPENBLAS_L2_SIZE": "262144"}, "OPENBLAS_L2_SIZE=262144 in the environment", []string{"SkylakeX"}},
		{"OpenBLAS", "Cooperlake", nil, "already uses its Cooperlake kernels", nil},
		{"BLIS", "generic", nil, "BLIS chose its generic kernels", []string{"skx", "zen4", "zen3"}},
		{"BLIS", "haswell", map[string]string{"BLIS_ARCH_TYPE": "haswell"}, "because the workers' environment sets BLIS_ARCH_TYPE=haswell", []string{"skx", "zen4", "zen3"}},
		{"BLIS", "skx", nil, "already uses", nil},
		{"unknown", "", nil, "may not have kernels for this CPU", nil},
	}
	for _, tt := range tests {
		lookup := func(k string) (string, bool) { v, ok := tt.env[k]; return v, ok }
		msg, wider := slowReason(&BLAS{Library: tt.lib, CoreName: tt.core}, 56, fma, lookup)
		if !strings.Contains(msg, tt.want) || !strings.Contains(msg, "48%") {
			t.Errorf("%s %s: %q should give the share (48%%) and say %q", tt.lib, tt.core, msg, tt.want)
		}
		if strings.Contains(msg, "try") || strings.Contains(msg, "unset") {
			t.Errorf("%s %s: %q gives advice; the command names the flag", tt.lib, tt.core, msg)
		}
		if !slices.Equal(wider, tt.wider) {
			t.Errorf("%s %s: kernels that may do better %q, want %q", tt.lib, tt.core, wider, tt.wider)
		}
	}
}

func TestWorkersEnvironmentIsTheSubprocesssOverThisProcesss(t *testing.T) {
	t.Setenv("OPENBLAS_CORETYPE", "Haswell")
	t.Setenv("BLIS_ARCH_TYPE", "zen3")
	inv := Subprocess{Env: []string{"OPENBLAS_CORETYPE=Zen", "OPENBLAS_CORETYPE=SkylakeX"}}
	for _, tt := range []struct {
		inv       Invoker
		key, want string
	}{
		{inv, "OPENBLAS_CORETYPE", "SkylakeX"},
		{inv, "BLIS_ARCH_TYPE", "zen3"},
		{InProcess{}, "OPENBLAS_CORETYPE", "Haswell"},
	} {
		if v, ok := workerEnv(tt.inv)(tt.key); !ok || v != tt.want {
			t.Errorf("%T: %s=%q (%v), want %q", tt.inv, tt.key, v, ok, tt.want)
		}
	}
}

func TestWorkerRunsAComputeJob(t *testing.T) {
	ok, _ := kernels.ComputeKernels()
	if len(ok) == 0 {
		t.Skip("no compute kernels on this architecture")
	}
	job := `{"kind":"compute","cpus":[0],"kernel":"` + ok[0].Name + `","iters":4096,"inner":{"MaxCount":5,"Confidence":0.99,"Method":"median"}}`
	var out strings.Builder
	if code := Worker(context.Background(), strings.NewReader(job), &out); code != 0 {
		t.Fatalf("exit %d: %s", code, out.String())
	}
	if !strings.Contains(out.String(), `"reason":"max-count"`) {
		t.Errorf("reply %s: want 5 samples stopped at max-count", out.String())
	}
}

func TestWorkerRejectsBadJobs(t *testing.T) {
	tests := []struct{ name, job, want string }{
		{"not JSON", "{", "read job"},
		{"unknown kind", `{"kind":"fft"}`, "unknown job kind"},
		{"unknown kernel", `{"kind":"compute","cpus":[0],"kernel":"avx9-fma","iters":1}`, "no kernel"},
		{"bad dgemm shape", `{"kind":"dgemm","cpus":[0],"n":0}`, "bad shape"},
		{"dnn job without a problem", `{"kind":"dnn","cpus":[0]}`, "no problem"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out strings.Builder
			if code := Worker(context.Background(), strings.NewReader(tt.job), &out); code == 0 || !strings.Contains(out.String(), tt.want) {
				t.Errorf("exit %d, reply %s; want failure mentioning %q", code, out.String(), tt.want)
			}
		})
	}
}

func TestInvocationsAddUpInTheTuningSummary(t *testing.T) {
	tuning := roofline.Tuning{StopReasons: map[string]int{}}
	tl := &tally{tuning: &tuning}
	got := tl.add(stats.Result{Invocations: 2, Iterations: 30, Reason: stats.StopConverged},
		stats.Result{Invocations: 1, Iterations: 3, Reason: stats.StopBelowBest}, stats.Result{})
	if tuning.Configurations != 2 || tuning.Evaluations != 33 || tuning.StopReasons["converged"] != 1 || got[stats.StopBelowBest] != 1 {
		t.Errorf("tuning = %+v, reasons %v", tuning, got)
	}
}

func TestSubprocessReportsAWorkerThatFails(t *testing.T) {
	tests := []struct {
		name string
		argv []string
		want string
	}{
		{"no such worker", []string{"/nonexistent/rprof", WorkerArg}, "worker for avx2-fma-fp64 on 1 thread"},
		{"worker that says nothing", []string{"/bin/true"}, "bad reply"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Subprocess{Argv: tt.argv}.Invoke(context.Background(), Job{Kind: "compute", CPUs: []int{0}, Kernel: "avx2-fma-fp64", Iters: 1})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want it to mention %q", err, tt.want)
			}
		})
	}
}

func TestClockMHzMeasuresAPlausibleClock(t *testing.T) {
	if _, ok := kernels.ClockKernel(); !ok {
		t.Skip("no clock kernel on " + runtime.GOARCH)
	}
	// Any real core runs between 0.4 and 7 GHz; a kernel whose cycle count
	// were wrong by a factor of two or more would leave this range on most
	// machines.
	if mhz := clockMHz(); mhz < 400 || mhz > 7000 {
		t.Errorf("clockMHz = %.0f, want a core clock between 400 and 7000 MHz", mhz)
	}
}

func TestDGEMMClimbLeavesTheSpaceWhileThatWins(t *testing.T) {
	space, err := DGEMMSpace("default")
	if err != nil {
		t.Fatal(err)
	}
	// rate models a BLAS whose rate grows with k up to kBest and with n up
	// to nBest, and is flat in m.
	rate := func(kBest, nBest int) func(Shape) float64 {
		return func(s Shape) float64 {
			return 100 - float64(abs(s.K-kBest))/100 - float64(abs(s.N-nBest))/1000
		}
	}
	tests := []struct {
		name      string
		rate      func(Shape) float64
		start     Shape
		want      Shape
		evaluated []Shape
	}{
		{"best inside the space: nothing to climb", rate(512, 1000), Shape{1000, 4000, 512}, Shape{1000, 4000, 512}, nil},
		{"k and n both grow to seed 000's limits", rate(2048, 4000), Shape{2000, 4000, 1024}, Shape{4000, 4000, 2048},
			[]Shape{{2000, 4000, 2048}, {4000, 4000, 2048}}},
		{"k grows, n does not", rate(2048, 2000), Shape{2000, 4000, 1024}, Shape{2000, 4000, 2048},
			[]Shape{{2000, 4000, 2048}, {4000, 4000, 2048}}},
		{"n grows, k does not", rate(1024, 4000), Shape{2000, 4000, 1024}, Shape{4000, 4000, 1024},
			[]Shape{{2000, 4000, 2048}, {4000, 4000, 1024}, {4000, 4000, 2048}}},
		{"the edge's neighbours lose", rate(1024, 2000), Shape{2000, 4000, 1024}, Shape{2000, 4000, 1024},
			[]Shape{{2000, 4000, 2048}, {4000, 4000, 1024}}},
		{"from inside the edge in n, n grows once k has left the space", rate(2048, 4000), Shape{1000, 4000, 1024}, Shape{4000, 4000, 2048},
			[]Shape{{1000, 4000, 2048}, {2000, 4000, 2048}, {4000, 4000, 2048}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var evaluated []Shape
			duel := func(_ context.Context, inc, ch Shape) (stats.Result, stats.Result, error) {
				evaluated = append(evaluated, ch)
				return stats.Result{Estimate: stats.Estimate{Value: tt.rate(inc)}}, stats.Result{Estimate: stats.Estimate{Value: tt.rate(ch)}}, nil
			}
			start := stats.Result{Estimate: stats.Estimate{Value: tt.rate(tt.start)}}
			results, got, r, err := climb(context.Background(), space, tt.start, start, func(stats.Result, Shape, Shape) bool { return true }, duel)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want || r.Estimate.Value != tt.rate(tt.want) {
				t.Errorf("climbed to %v (%.3f), want %v", got, r.Estimate.Value, tt.want)
			}
			if !slices.Equal(evaluated, tt.evaluated) || len(results) != 2*len(evaluated) {
				t.Errorf("challenged with %v (%d results), want %v and both sides' results", evaluated, len(results), tt.evaluated)
			}
		})
	}
}

func abs(x int) int { return max(x, -x) }

// TestDuelSeesThroughDrift: the machine slows by 3% per invocation while
// the challenger is 1% faster than the incumbent. Evaluated one after the
// other, the challenger would look 8% slower; in alternating invocations
// it wins: the rounds are ordered ABBA, so drift falls on both alike.
func TestDuelSeesThroughDrift(t *testing.T) {
	inc, ch := Shape{2000, 4000, 1024}, Shape{2000, 4000, 2048}
	var order []Shape
	invoke := func(_ context.Context, s Shape, _ stats.StopRule, _ float64) (stats.Inner, error) {
		drift := math.Pow(0.97, float64(len(order)))
		order = append(order, s)
		rate := 100 * drift
		if s == ch {
			rate *= 1.01
		}
		return stats.Inner{Samples: []float64{rate}, Reason: stats.StopMaxTime}, nil
	}
	ev := Options{}.evaluator(dgemmBudget)
	incR, chR, err := duel(context.Background(), ev, inc, ch, invoke)
	if err != nil {
		t.Fatal(err)
	}
	if want := []Shape{inc, ch, ch, inc, inc, ch}; !slices.Equal(order, want) {
		t.Errorf("invocations ran %v, want ABBA: %v", order, want)
	}
	if !(chR.Estimate.Value > incR.Estimate.Value) || incR.Invocations != chR.Invocations {
		t.Errorf("incumbent %.2f (%d invocations), challenger %.2f (%d): want the challenger ahead after as many invocations",
			incR.Estimate.Value, incR.Invocations, chR.Estimate.Value, chR.Invocations)
	}
}

type failingInvoker struct{ err error }

func (f failingInvoker) Invoke(context.Context, Job) (Reply, error) { return Reply{}, f.err }

func TestDGEMMInterruptedReturnsTheErrorWithoutARoof(t *testing.T) {
	if _, err := blasFor(""); err != nil {
		t.Skipf("no BLAS to probe: %v", err)
	}
	rep := &Report{}
	err := measureDGEMM(context.Background(), Options{Invoker: failingInvoker{context.Canceled}}, rep,
		&tally{tuning: &roofline.Tuning{StopReasons: map[string]int{}}}, []int{0}, nil)
	if !errors.Is(err, context.Canceled) || rep.Roofs.DGEMM != nil {
		t.Errorf("err = %v, DGEMM roof %+v; want context.Canceled and no roof", err, rep.Roofs.DGEMM)
	}
}

func TestSpareCoreSharesTheMemoryNodeAndCoreType(t *testing.T) {
	twoNodes := machine.Topology{NUMANodes: []machine.NUMANode{{ID: 0, CPUs: []int{0, 1}}, {ID: 1, CPUs: []int{2, 3}}}}
	loneNode := machine.Topology{NUMANodes: []machine.NUMANode{{ID: 0, CPUs: []int{0}}, {ID: 1, CPUs: []int{1, 2, 3}}}}
	hybrid := machine.Topology{CoreTypes: map[string][]int{"cpu_core": {0, 2}, "cpu_atom": {1, 3}}}
	tests := []struct {
		name   string
		topo   machine.Topology
		cores  []int
		scopes [][]int
		want   map[int]int
	}{
		{"the next core of a flat machine", machine.Topology{}, []int{0, 1, 2, 3}, [][]int{{0}, {0, 1, 2, 3}}, map[int]int{0: 1}},
		{"a core on the same memory node", twoNodes, []int{0, 1, 2, 3}, [][]int{{2}}, map[int]int{2: 3}},
		{"none where the node has no other core", loneNode, []int{0, 1, 2, 3}, [][]int{{0}}, map[int]int{}},
		{"a core of the same type on a hybrid CPU", hybrid, []int{0, 1, 2, 3}, [][]int{{0}}, map[int]int{0: 2}},
		{"none with one core", machine.Topology{}, []int{5}, [][]int{{5}}, map[int]int{}},
		{"none for a wider scope", machine.Topology{}, []int{0, 1}, [][]int{{0, 1}}, map[int]int{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := spareCores(tt.topo, tt.cores, tt.scopes); !maps.Equal(got, tt.want) {
				t.Errorf("spare cores %v, want %v", got, tt.want)
			}
		})
	}
}
