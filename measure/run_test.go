package measure

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rprof/rprof/internal/launch"
	"github.com/rprof/rprof/machine"
	"github.com/rprof/rprof/pmu"
	"github.com/rprof/rprof/roofline"
)

// machineTree returns the sysfs and procfs roots of a captured machine.
func machineTree(name string) (sys, proc string) {
	dir := filepath.Join("..", "pmu", "testdata", "machines", name)
	return filepath.Join(dir, "sys"), filepath.Join(dir, "proc")
}

func resolveOn(t *testing.T, name string, cfg Config, probe func(pmu.Event) error) (resolved, error) {
	t.Helper()
	sys, proc := machineTree(name)
	return resolve(cfg, machine.NewHost(sys, proc), diagnoseTree, probe)
}

func countKind(specs []counterSpec, k Kind) int {
	n := 0
	for _, s := range specs {
		if s.kind == k {
			n++
		}
	}
	return n
}

func TestResolveChoosesWhereWorkAndTrafficComeFrom(t *testing.T) {
	probeOK := func(pmu.Event) error { return nil }
	probeFails := func(ev pmu.Event) error { return pmu.ErrNotSupported }
	tests := []struct {
		name        string
		machine     string
		cfg         Config
		probe       func(pmu.Event) error
		wantSource  string
		wantTraffic bool
		wantFlag    string
		wantErr     func(error) bool
	}{
		{name: "counters on Skylake-SP", machine: "skylake-sp", cfg: Config{Counting: Counting{Events: []string{"page-faults"}}},
			wantSource: roofline.SourceCounters, wantTraffic: true},
		{name: "analytic values on a VM without a PMU", machine: "vm-zen5", cfg: Config{Counting: Counting{Work: ptr(1e9)}},
			wantSource: roofline.SourceAnalytic, wantFlag: roofline.FlagAnalytic},
		{name: "only user events on a VM", machine: "vm-zen5", cfg: Config{Counting: Counting{Events: []string{"page-faults", "task-clock"}}}, probe: probeOK,
			wantSource: roofline.SourceEvents, wantFlag: roofline.FlagVM},
		{name: "a user event this machine cannot open", machine: "vm-zen5", cfg: Config{Counting: Counting{Events: []string{"page-faults"}}}, probe: probeFails,
			wantErr: func(err error) bool { return errors.Is(err, pmu.ErrNotSupported) }},
		{name: "refusal without counters, values or events", machine: "vm-zen5",
			wantErr: func(err error) bool {
				var nc *NoCountersError
				return errors.As(err, &nc) && errors.Is(err, pmu.ErrNoPMU) && !nc.Diagnosis.HardwarePMU
			}},
		{name: "unparsable event", machine: "skylake-sp", cfg: Config{Counting: Counting{Events: []string{"cpu/event=0x3"}}},
			wantErr: func(err error) bool { return errors.Is(err, ErrInvalidConfig) && errors.Is(err, pmu.ErrMalformed) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := resolveOn(t, tt.machine, tt.cfg, tt.probe)
			if tt.wantErr != nil {
				if err == nil || !tt.wantErr(err) {
					t.Fatalf("err = %v, not the one expected", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.source != tt.wantSource {
				t.Errorf("source = %q, want %q", res.source, tt.wantSource)
			}
			if got := countKind(res.specs, KindEvent); got != len(tt.cfg.Counting.Events) {
				t.Errorf("%d user events, want %d", got, len(tt.cfg.Counting.Events))
			}
			if tt.wantSource == roofline.SourceCounters && countKind(res.specs, KindWork) == 0 {
				t.Errorf("no work events on %s", tt.machine)
			}
			if got := countKind(res.specs, KindTraffic) > 0; got != tt.wantTraffic {
				t.Errorf("traffic events: %v, want %v", got, tt.wantTraffic)
			}
			if tt.wantFlag != "" && !hasFlagCode(res.notes, tt.wantFlag) {
				t.Errorf("notes = %+v, want %s", res.notes, tt.wantFlag)
			}
			for _, s := range res.specs {
				if (s.group < 0) != (s.event.SystemWide() || s.kind == KindTraffic) {
					t.Errorf("%s in group %d", s.event.Name, s.group)
				}
			}
			if res.machine.CPU.Vendor == "" {
				t.Errorf("machine = %+v, want the CPU identified", res.machine)
			}
		})
	}
}

func hasFlagCode(flags []roofline.Flag, code string) bool {
	for _, f := range flags {
		if f.Code == code {
			return true
		}
	}
	return false
}

// fixedBackend is a counting backend of recorded counts: it runs
// nothing, returns its outcomes in turn and records what it was asked to
// run.
type fixedBackend struct {
	counting Resolved
	outs     []Outcome
	ran      [][]string
	idleRan  bool
}

func (f *fixedBackend) Resolve(context.Context, Config) (Resolved, error) { return f.counting, nil }

func (f *fixedBackend) Count(ctx context.Context, target launch.Spec) (Outcome, error) {
	f.ran = append(f.ran, target.Argv)
	if len(f.outs) == 0 {
		return Outcome{}, errors.New("fixed backend: no more recorded runs")
	}
	o := f.outs[0]
	f.outs = f.outs[1:]
	return o, nil
}

func (f *fixedBackend) Capabilities() Capabilities { return Capabilities{} }

func (f *fixedBackend) Idle(ctx context.Context, d time.Duration) (Outcome, error) {
	f.idleRan = true
	counts := make([]pmu.Count, len(f.counting.Counters))
	for i := range counts {
		counts[i] = full(0)
	}
	return Outcome{Wall: d, Counts: counts}, nil
}

// deps runs Run on b at a fixed time with 2 CPUs.
func fixedDeps(b Backend) deps {
	return deps{backend: b, now: func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }, cpus: 2}
}

func (f *fixedBackend) deps() deps { return fixedDeps(f) }

func analyticRes() Resolved {
	return Resolved{Source: roofline.SourceAnalytic}
}

func timed(walls ...float64) []Outcome {
	var out []Outcome
	for _, w := range walls {
		out = append(out, Outcome{Wall: time.Duration(w * float64(time.Second))})
	}
	return out
}

func TestRunRepeatsAFixedNumberOfTimesWithTheOverheadBeforeEachRun(t *testing.T) {
	f := &fixedBackend{counting: analyticRes(), outs: timed(0.1, 1.1, 0.1, 1.2, 0.1, 1.0)}
	cfg := Config{Target: Target{Command: []string{"k"}}, Counting: Counting{Overhead: []string{"o"}, Work: ptr(1e9)}, Repetition: Repetition{Repeat: 3}}
	p, err := run(context.Background(), cfg, f.deps())
	if err != nil {
		t.Fatal(err)
	}
	if len(f.ran) != 6 || f.ran[0][0] != "o" || f.ran[1][0] != "k" || f.ran[5][0] != "k" {
		t.Errorf("ran %v, want o k o k o k", f.ran)
	}
	if p.CI.N != 3 || !near(p.Seconds, 1.0) {
		t.Errorf("n %d T %v, want 3 runs of 1.0 s net", p.CI.N, p.Seconds)
	}
}

func TestRunAdaptiveStopsWhenTheTimeIntervalIsNarrow(t *testing.T) {
	// Noisy first runs, then stable ones: the rule stops once the
	// half-width is within 2% of the mean.
	f := &fixedBackend{counting: analyticRes(), outs: timed(1.0, 1.3, 0.8, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0)}
	cfg := Config{Target: Target{Command: []string{"k"}}, Counting: Counting{Work: ptr(1e9)}, Repetition: Repetition{CI: 0.05, MaxRepeat: 20}}
	p, err := run(context.Background(), cfg, f.deps())
	if err != nil {
		t.Fatal(err)
	}
	if p.CI.N >= 20 || p.CI.N <= 3 {
		t.Fatalf("n = %d, want the rule to stop between 3 and 20", p.CI.N)
	}
	half := (p.CI.Seconds.Hi - p.CI.Seconds.Lo) / 2
	if half > 0.05*p.Seconds {
		t.Errorf("stopped at n=%d with half-width %v > 5%% of %v", p.CI.N, half, p.Seconds)
	}

	f = &fixedBackend{counting: analyticRes(), outs: timed(1.0, 2.0, 1.0, 2.0, 1.0, 2.0)}
	cfg.Repetition.MaxRepeat = 5
	p, err = run(context.Background(), cfg, f.deps())
	if err != nil {
		t.Fatal(err)
	}
	if p.CI.N != 5 {
		t.Errorf("n = %d, want max-repeat 5 to stop a run that never converges", p.CI.N)
	}
}

func TestRunStopsRepeatingAtTheFirstFailedRun(t *testing.T) {
	outs := timed(1, 1, 1)
	outs[1].ExitCode = 2
	f := &fixedBackend{counting: analyticRes(), outs: outs}
	p, err := run(context.Background(), Config{Target: Target{Command: []string{"k"}}, Counting: Counting{Work: ptr(1)}, Repetition: Repetition{Repeat: 3}}, f.deps())
	if err != nil {
		t.Fatal(err)
	}
	if len(f.ran) != 2 || p.Exit.Code != 2 || !hasFlag(p, roofline.FlagNonzeroExit, "repetition 2") {
		t.Errorf("ran %d times, exit %+v, flags %+v", len(f.ran), p.Exit, p.Flags)
	}
}

func TestRunRejectsAFailingOverheadCommand(t *testing.T) {
	outs := timed(0.1)
	outs[0].ExitCode = 1
	f := &fixedBackend{counting: analyticRes(), outs: outs}
	_, err := run(context.Background(), Config{Target: Target{Command: []string{"k"}}, Counting: Counting{Overhead: []string{"o", "x"}, Work: ptr(1)}}, f.deps())
	var oe *OverheadError
	if !errors.As(err, &oe) || oe.Exit != 1 {
		t.Fatalf("err = %v, want an OverheadError with status 1", err)
	}
	if len(f.ran) != 1 {
		t.Errorf("ran %v, want the target not run after its overhead failed", f.ran)
	}
}

func TestRunChecksInputBeforeRunningAnything(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want func(error) bool
	}{
		{"empty command", Config{}, faultsFields("Target.Command")},
		{"negative repeat", Config{Target: Target{Command: []string{"k"}}, Repetition: Repetition{Repeat: -1}}, faultsFields("Repetition.Repeat")},
		{"ci above 1", Config{Target: Target{Command: []string{"k"}}, Repetition: Repetition{CI: 2}}, faultsFields("Repetition.CI")},
		{"repeat and ci together", Config{Target: Target{Command: []string{"k"}}, Repetition: Repetition{Repeat: 3, CI: 0.01}}, faultsFields("Repetition.Repeat", "Repetition.CI")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fixedBackend{counting: analyticRes(), outs: timed(1)}
			_, err := run(context.Background(), tt.cfg, f.deps())
			if !tt.want(err) {
				t.Errorf("err = %v", err)
			}
			if len(f.ran) != 0 {
				t.Errorf("ran %v before rejecting the input", f.ran)
			}
		})
	}
}

// faultsFields wants a *ConfigError naming fields, which matches
// ErrInvalidConfig.
func faultsFields(fields ...string) func(error) bool {
	return func(err error) bool {
		var ce *ConfigError
		return errors.Is(err, ErrInvalidConfig) && errors.As(err, &ce) && slices.Equal(ce.Fields, fields)
	}
}

func TestRunMeasuresTheIdleBaselineOnlyWithTrafficCounters(t *testing.T) {
	for _, withTraffic := range []bool{false, true} {
		counters := skxCounters[:2]
		if withTraffic {
			counters = skxCounters[:6]
		}
		run1 := skxRun(0.5, 0)
		run1.Counts = run1.Counts[:len(counters)]
		f := &fixedBackend{counting: Resolved{Source: roofline.SourceCounters, Counters: counters}, outs: []Outcome{run1}}
		p, err := run(context.Background(), Config{Target: Target{Command: []string{"k"}}, Counting: Counting{IdleBaseline: time.Millisecond}}, f.deps())
		if err != nil {
			t.Fatal(err)
		}
		if f.idleRan != withTraffic || (p.Overhead != nil && p.Overhead.IdleBytesPerS == nil) || hasFlag(p, roofline.FlagNoUncore, "idle baseline") == withTraffic {
			t.Errorf("traffic %v: idle ran %v, overhead %+v", withTraffic, f.idleRan, p.Overhead)
		}
	}
}

// On captured machines, Run turns per-event counts into W and Q with the
// catalogue's weights, summing every memory-controller box and socket.
func TestRunOnCapturedMachinesWeighsCountsWithTheCatalogue(t *testing.T) {
	tests := []struct {
		machine string
		// counts by event name (per box for traffic events)
		counts      map[string]uint64
		work, read  float64
		write       float64
		byPrecision map[string]float64
		noUncore    bool
	}{
		{machine: "skylake-sp",
			counts: map[string]uint64{"FP_ARITH_INST_RETIRED.512B_PACKED_DOUBLE": 1, "FP_ARITH_INST_RETIRED.512B_PACKED_SINGLE": 1,
				"cas_count_read": 10, "cas_count_write": 5},
			work: 8 + 16, byPrecision: map[string]float64{roofline.Double: 8, roofline.Single: 16},
			read: 6 * 10 * 64, write: 6 * 5 * 64},
		{machine: "zen5",
			counts: map[string]uint64{"RETIRED_SSE_AVX_FLOPS_ALL_DP_PACKED": 100, "RETIRED_SSE_AVX_FLOPS_ALL_SP_SCALAR": 3,
				"umc_cas_cmd.rd": 2, "umc_cas_cmd.wr": 1},
			work: 103, byPrecision: map[string]float64{roofline.Double: 100, roofline.Single: 3},
			read: 12 * 2 * 64, write: 12 * 1 * 64},
		{machine: "neoverse-v2", counts: map[string]uint64{}, noUncore: true},
	}
	for _, tt := range tests {
		t.Run(tt.machine, func(t *testing.T) {
			b := capturedPMU(tt.machine, nil)
			b.count = func(ctx context.Context, target launch.Spec, specs []counterSpec, userOnly bool) (Outcome, error) {
				o := Outcome{Wall: time.Second, Counts: make([]pmu.Count, len(specs))}
				for i, s := range specs {
					o.Counts[i] = full(tt.counts[s.event.Name])
				}
				return o, nil
			}
			p, err := run(context.Background(), Config{Target: Target{Command: []string{"k"}}}, fixedDeps(b))
			if err != nil {
				t.Fatal(err)
			}
			if p.WorkFlops == nil || *p.WorkFlops != tt.work {
				t.Errorf("W = %v, want %v", deref(p.WorkFlops), tt.work)
			}
			for k, v := range tt.byPrecision {
				if p.WorkByPrecision[k] != v {
					t.Errorf("W[%s] = %v, want %v", k, p.WorkByPrecision[k], v)
				}
			}
			if tt.noUncore {
				if p.TrafficBytes != nil || p.Intensity != nil || !hasFlag(p, roofline.FlagNoUncore, "") || p.GFlops == nil {
					t.Errorf("Q %v I %v GFLOP/s %v flags %+v: want W and GFLOP/s, Q and intensity unknown and flagged", deref(p.TrafficBytes), deref(p.Intensity), deref(p.GFlops), p.Flags)
				}
				return
			}
			if *p.ReadBytes != tt.read || *p.WriteBytes != tt.write || *p.TrafficBytes != tt.read+tt.write {
				t.Errorf("read %v write %v Q %v, want %v + %v", *p.ReadBytes, *p.WriteBytes, *p.TrafficBytes, tt.read, tt.write)
			}
		})
	}
}

// capturedPMU is the PMU backend on a captured machine's trees, probing
// events with probe.
func capturedPMU(name string, probe func(pmu.Event) error) *pmuBackend {
	sys, proc := machineTree(name)
	return &pmuBackend{host: machine.NewHost(sys, proc), probe: probe, diagnose: diagnoseTree}
}

// diagnoseTree diagnoses a captured tree without opening anything.
func diagnoseTree(h *machine.Host, _ pmu.PMUs) (pmu.Diagnosis, error) {
	return pmu.Diagnose(h)
}

func TestPMUBackendFallsBackToUserModeOnlyWhenKernelCountingIsRefused(t *testing.T) {
	for _, refuse := range []bool{true, false} {
		var userOnly []bool
		b := capturedPMU("skylake-sp", nil)
		b.count = func(ctx context.Context, target launch.Spec, specs []counterSpec, uo bool) (Outcome, error) {
			if refuse && !uo {
				return Outcome{}, &pmu.EventError{Event: "x", CPU: -1, Err: &pmu.PermissionError{Event: "x", Paranoid: 2}}
			}
			userOnly = append(userOnly, uo)
			return Outcome{Wall: time.Second, Counts: slices.Repeat([]pmu.Count{full(1)}, len(specs))}, nil
		}
		p, err := run(context.Background(), Config{Target: Target{Command: []string{"k"}}, Repetition: Repetition{Repeat: 2}}, fixedDeps(b))
		if err != nil {
			t.Fatal(err)
		}
		flagged := hasFlag(p, roofline.FlagUserOnly, "user mode only")
		if len(userOnly) != 2 || userOnly[0] != refuse || userOnly[1] != refuse || flagged != refuse {
			t.Errorf("kernel mode refused %v: runs counted user mode only %v, flagged %v; want both runs %v", refuse, userOnly, flagged, refuse)
		}
		if n := len(slices.DeleteFunc(slices.Clone(p.Flags), func(f roofline.Flag) bool { return f.Code != roofline.FlagUserOnly })); n > 1 {
			t.Errorf("user-only flagged %d times, want once", n)
		}
	}
}

func TestRunCountsWithTheBackendConfigNames(t *testing.T) {
	if !slices.Contains(Backends(), DefaultBackend) {
		t.Fatalf("backends %v lack the default %q", Backends(), DefaultBackend)
	}
	_, err := run(context.Background(), Config{Target: Target{Command: []string{"k"}}, Counting: Counting{Backend: "no-such-backend"}}, deps{now: time.Now})
	if !faultsFields("Counting.Backend")(err) || !strings.Contains(err.Error(), DefaultBackend) {
		t.Errorf("err = %v, want an invalid configuration naming the backends there are", err)
	}
	f := &fixedBackend{counting: analyticRes(), outs: timed(1)}
	Register("fixed-for-test", func(*machine.Host) Backend { return f })
	if _, err := run(context.Background(), Config{Target: Target{Command: []string{"k"}}, Counting: Counting{Backend: "fixed-for-test", Work: ptr(1)}}, deps{now: time.Now}); err != nil || len(f.ran) != 1 {
		t.Errorf("err %v, ran %v: want the registered backend to count", err, f.ran)
	}
}

// fakeNode is a node whose election has a fixed outcome.
type fakeNode struct {
	owner          bool
	started, ended int
}

func (n *fakeNode) Elect(context.Context) (bool, error) { return n.owner, nil }
func (n *fakeNode) Started() error                      { n.started++; return nil }
func (n *fakeNode) Ended(context.Context) error         { n.ended++; return nil }

func TestRunRankCountsTrafficOnlyWhenElected(t *testing.T) {
	for _, owner := range []bool{true, false} {
		b := capturedPMU("skylake-sp", nil)
		var opened []counterSpec
		var hooks int
		b.count = func(ctx context.Context, target launch.Spec, specs []counterSpec, userOnly bool) (Outcome, error) {
			opened, hooks = specs, len(target.Hooks)
			o := Outcome{Wall: time.Second}
			for range specs {
				o.Counts = append(o.Counts, full(1000))
			}
			return o, nil
		}
		node := &fakeNode{owner: owner}
		p, err := run(context.Background(), Config{Target: Target{Command: []string{"k"}}, Counting: Counting{Node: node}}, fixedDeps(b))
		if err != nil {
			t.Fatal(err)
		}
		if got := countKind(opened, KindTraffic) > 0; got != owner {
			t.Errorf("owner %v: traffic counters opened: %v", owner, got)
		}
		if (p.TrafficBytes != nil) != owner || p.WorkFlops == nil || *p.WorkFlops == 0 {
			t.Errorf("owner %v: W %v Q %v", owner, deref(p.WorkFlops), deref(p.TrafficBytes))
		}
		if hasFlagCode(p.Flags, roofline.FlagTrafficElsewhere) == owner {
			t.Errorf("owner %v: flags %+v", owner, p.Flags)
		}
		if hooks != 1 {
			t.Errorf("owner %v: the run had %d hooks, want the node's", owner, hooks)
		}
	}
}

func TestRunRankRefusesRepetitionAndSubtraction(t *testing.T) {
	for _, tt := range []struct {
		cfg   Config
		field string
	}{
		{Config{Target: Target{Command: []string{"k"}}, Repetition: Repetition{Repeat: 2}}, "Repetition.Repeat"},
		{Config{Target: Target{Command: []string{"k"}}, Repetition: Repetition{CI: 0.05}}, "Repetition.CI"},
		{Config{Target: Target{Command: []string{"k"}}, Counting: Counting{Overhead: []string{"o"}}}, "Counting.Overhead"},
		{Config{Target: Target{Command: []string{"k"}}, Counting: Counting{IdleBaseline: time.Second}}, "Counting.IdleBaseline"},
	} {
		cfg := tt.cfg
		cfg.Counting.Node = &fakeNode{}
		f := &fixedBackend{counting: analyticRes()}
		if _, err := run(context.Background(), cfg, f.deps()); !faultsFields("Counting.Node", tt.field)(err) {
			t.Errorf("%+v: err = %v, want a *ConfigError naming Counting.Node and %s", cfg, err, tt.field)
		}
	}
}

func TestRunFlagsStdinThatOnlyTheFirstRunCanRead(t *testing.T) {
	pipeR, pipeW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pipeR.Close()
	defer pipeW.Close()
	devNull, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer devNull.Close()
	tests := []struct {
		name   string
		stdin  io.Reader
		repeat int
		want   bool
	}{
		{"pipe, 3 runs", pipeR, 3, true},
		{"pipe, 1 run", pipeR, 1, false},
		{"data in memory, 2 runs", strings.NewReader("data"), 2, true},
		{"empty reader, 3 runs", strings.NewReader(""), 3, false},
		{"/dev/null, 3 runs", devNull, 3, false},
		{"no stdin, 3 runs", nil, 3, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fixedBackend{counting: analyticRes(), outs: timed(1, 1, 1)}
			cfg := Config{Target: Target{Command: []string{"k"}, Stdin: tt.stdin}, Counting: Counting{Work: ptr(1e9)}, Repetition: Repetition{Repeat: tt.repeat}}
			p, err := run(context.Background(), cfg, f.deps())
			if err != nil {
				t.Fatal(err)
			}
			if got := hasFlagCode(p.Flags, roofline.FlagStdinOnce); got != tt.want {
				t.Errorf("stdin-once flag %v, want %v: %+v", got, tt.want, p.Flags)
			}
		})
	}
}

func TestRunFlagsChildrenThatOutlivedTheTarget(t *testing.T) {
	outs := timed(1, 1)
	outs[1].Outlived = []int{4242}
	f := &fixedBackend{counting: analyticRes(), outs: outs}
	p, err := run(context.Background(), Config{Target: Target{Command: []string{"k"}}, Counting: Counting{Work: ptr(1e9)}, Repetition: Repetition{Repeat: 2}}, f.deps())
	if err != nil {
		t.Fatal(err)
	}
	if !hasFlagCode(p.Flags, roofline.FlagOutlived) {
		t.Errorf("no %s flag: %+v", roofline.FlagOutlived, p.Flags)
	}
}

// interruptingBackend cancels the run's context while its given
// repetition runs (a SIGTERM to rprof), that repetition's target then
// ending as out says: on its own (it ignored the signal) or killed.
type interruptingBackend struct {
	fixedBackend
	cancel func()
	at     int
}

func (b *interruptingBackend) Count(ctx context.Context, target launch.Spec) (Outcome, error) {
	if len(b.ran)+1 == b.at {
		b.cancel()
	}
	return b.fixedBackend.Count(ctx, target)
}

// A run interrupted after at least one repetition ended gives a point of
// those repetitions, flagged interrupted, whether the target ignored the
// signal and exited 0 or was killed by it; before any, no point.
func TestRunInterruptedGivesAFlaggedPointOfTheRepetitionsRun(t *testing.T) {
	for _, c := range []struct {
		name   string
		at     int // the repetition during which rprof is interrupted
		signal string
		wantN  int
	}{
		{"target ignores SIGTERM and exits 0 in repetition 1", 1, "", 1},
		{"target ignores SIGTERM and exits 0 in repetition 2", 2, "", 2},
		{"target killed by SIGINT in repetition 2", 2, "SIGINT", 2},
		{"target killed by SIGKILL in repetition 1", 1, "SIGKILL", 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			outs := timed(1, 1, 1, 1, 1)
			if c.signal != "" {
				outs[c.at-1].Signal = c.signal
				outs[c.at-1].ExitCode = 137
			}
			b := &interruptingBackend{fixedBackend: fixedBackend{counting: analyticRes(), outs: outs}, cancel: cancel, at: c.at}
			p, err := run(ctx, Config{Target: Target{Command: []string{"k"}}, Counting: Counting{Work: ptr(1)}, Repetition: Repetition{Repeat: 5}}, fixedDeps(b))
			if err != nil {
				t.Fatal(err)
			}
			if p.CI.N != c.wantN || len(b.ran) != c.at {
				t.Errorf("n %d after %d runs, want %d", p.CI.N, len(b.ran), c.wantN)
			}
			if !hasFlag(p, roofline.FlagInterrupted, "of the 5 asked for") {
				t.Errorf("flags %+v, want interrupted", p.Flags)
			}
			if c.signal != "" && !hasFlag(p, roofline.FlagInterrupted, c.signal) {
				t.Errorf("flags %+v, want the last repetition cut short by %s", p.Flags, c.signal)
			}
		})
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	b := &fixedBackend{counting: analyticRes(), outs: timed(1)}
	if p, err := run(ctx, Config{Target: Target{Command: []string{"k"}}, Counting: Counting{Work: ptr(1)}, Repetition: Repetition{Repeat: 5}}, fixedDeps(b)); err == nil {
		t.Errorf("interrupted before any repetition: point %+v, want an error", p)
	}
}
