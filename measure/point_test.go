package measure

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/rprof/rprof/pmu"
	"github.com/rprof/rprof/roofline"
)

// Specs of a Skylake-SP-like plan: two FP64 work events (scalar, 512-bit
// packed), two memory-controller boxes with read and write CAS counts, and
// one user event.
var skxCounters = []Counter{
	{Name: "fp_arith_inst_retired.scalar_double", PMU: "cpu", Kind: KindWork, Weight: 1, Precision: roofline.Double},
	{Name: "fp_arith_inst_retired.512b_packed_double", PMU: "cpu", Kind: KindWork, Weight: 8, Precision: roofline.Double},
	{Name: "uncore_imc_0/cas_count_read/", PMU: "uncore_imc_0", Kind: KindTraffic, Weight: 64, Direction: pmu.Read, Level: roofline.LevelDRAM, Background: true},
	{Name: "uncore_imc_0/cas_count_write/", PMU: "uncore_imc_0", Kind: KindTraffic, Weight: 64, Direction: pmu.Write, Level: roofline.LevelDRAM, Background: true},
	{Name: "uncore_imc_1/cas_count_read/", PMU: "uncore_imc_1", Kind: KindTraffic, Weight: 64, Direction: pmu.Read, Level: roofline.LevelDRAM, Background: true},
	{Name: "uncore_imc_1/cas_count_write/", PMU: "uncore_imc_1", Kind: KindTraffic, Weight: 64, Direction: pmu.Write, Level: roofline.LevelDRAM, Background: true},
	{Name: "page-faults", PMU: "software", Kind: KindEvent},
}

// full is a count that ran all the time it was enabled.
func full(raw uint64) pmu.Count { return pmu.Count{Raw: raw, Enabled: 1e9, Running: 1e9} }

// skxRun is a recorded SKX run of wall seconds: 1e6 scalar and 1e8 packed
// FP64 instructions (801e6 FLOPs), 4e6+2e6 reads and 1e6+1e6 writes
// (384e6 + 128e6 bytes), faults page faults.
func skxRun(wall float64, faults uint64) Outcome {
	return Outcome{
		Wall: time.Duration(wall * float64(time.Second)),
		Counts: []pmu.Count{
			full(1e6), full(1e8),
			full(4e6), full(1e6), full(2e6), full(1e6),
			full(faults),
		},
	}
}

func scaled(o Outcome, f float64) Outcome {
	s := o
	s.Counts = make([]pmu.Count, len(o.Counts))
	for i, c := range o.Counts {
		c.Raw = uint64(float64(c.Raw) * f)
		s.Counts[i] = c
	}
	s.Wall = time.Duration(float64(o.Wall) * f)
	return s
}

func testConfig() Config {
	cfg, _, err := Config{Target: Target{Command: []string{"/bin/kernel", "-n", "10"}}}.withDefaults()
	if err != nil {
		panic(err)
	}
	return cfg
}

func hasFlag(p *roofline.Point, code, substr string) bool {
	for _, f := range p.Flags {
		if f.Code == code && strings.Contains(f.Message, substr) {
			return true
		}
	}
	return false
}

func near(got, want float64) bool { return math.Abs(got-want) <= 1e-9*math.Abs(want) }

func TestBuildPointComputesWorkTrafficAndRatesFromRecordedCounts(t *testing.T) {
	in := inputs{cfg: testConfig(), source: roofline.SourceCounters, counters: skxCounters,
		reps: []rep{{kernel: skxRun(0.5, 300)}}}
	p, err := buildPoint(in)
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name      string
		got, want *float64
	}{
		{"work_flops", p.WorkFlops, ptr(801e6)},
		{"traffic_bytes", p.TrafficBytes, ptr(512e6)},
		{"read_bytes", p.ReadBytes, ptr(384e6)},
		{"write_bytes", p.WriteBytes, ptr(128e6)},
		{"intensity", p.Intensity, ptr(801e6 / 512e6)},
		{"gflops", p.GFlops, ptr(801e6 / 0.5 / 1e9)},
		{"gbytes_per_s", p.GBytesPerS, ptr(512e6 / 0.5 / 1e9)},
	}
	for _, c := range checks {
		if c.got == nil || !near(*c.got, *c.want) {
			t.Errorf("%s = %v, want %v", c.name, deref(c.got), *c.want)
		}
	}
	if got := p.WorkByPrecision[roofline.Double]; !near(got, 801e6) {
		t.Errorf("work_by_precision[fp64] = %v, want 801e6", got)
	}
	if p.Seconds != 0.5 || p.CI.N != 1 || p.CI.Method != "none" {
		t.Errorf("seconds %v, ci %+v: want 0.5 from one run with no interval", p.Seconds, p.CI)
	}
	if p.Label != "kernel" || p.Schema != roofline.PointSchema {
		t.Errorf("label %q schema %q", p.Label, p.Schema)
	}
	if len(p.Events) != len(skxCounters) || p.Events[6].Value != 300 || p.Events[1].Raw != 1e8 {
		t.Errorf("events = %+v", p.Events)
	}
	if len(p.Flags) != 0 {
		t.Errorf("flags = %+v, want none", p.Flags)
	}
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

func TestTallyScalesMultiplexedCountsAndKeepsTotalOutOfReadWrite(t *testing.T) {
	counters := []Counter{
		{Name: "fp64", Kind: KindWork, Weight: 2, Precision: roofline.Double},
		{Name: "fp32", Kind: KindWork, Weight: 4, Precision: roofline.Single},
		{Name: "data_read", Kind: KindTraffic, Weight: 64, Direction: pmu.Read, Level: roofline.LevelDRAM},
		{Name: "data_total", Kind: KindTraffic, Weight: 64, Direction: pmu.Total, Level: roofline.LevelDRAM},
		{Name: "l2_fill", Kind: KindTraffic, Weight: 64, Direction: pmu.Read, Level: roofline.LevelL2},
	}
	o := Outcome{Wall: time.Second, Counts: []pmu.Count{
		{Raw: 1000, Enabled: 4e6, Running: 1e6}, // on a counter a quarter of the time
		full(10),
		full(100),
		full(50),
		full(1000),
	}}
	got := tallyOf(counters, o)
	if !near(got.work, 4000*2+10*4) || !near(got.workBy[roofline.Double], 8000) || !near(got.workBy[roofline.Single], 40) {
		t.Errorf("work = %v by %v, want 8040 (fp64 8000 from 1000 raw x 4 for multiplexing x 2, fp32 40)", got.work, got.workBy)
	}
	q, _ := got.dram()
	if !near(q.total, 150*64) || !near(q.read, 6400) || q.hasWrite || q.write != 0 {
		t.Errorf("traffic %v read %v write %v (has %v): want Q 9600, read 6400, no write", q.total, q.read, q.write, q.hasWrite)
	}
	if l2 := got.traffic[roofline.LevelL2]; !near(l2.total, 64000) || !near(l2.read, 64000) || len(got.traffic) != 2 {
		t.Errorf("traffic by level %+v: want L2 64000 read apart from DRAM", got.traffic)
	}
}

func TestBuildPointFlagsCounterProblems(t *testing.T) {
	mux := skxRun(0.5, 0)
	mux.Counts[1] = pmu.Count{Raw: 5e7, Enabled: 1e9, Running: 4e8}
	never := skxRun(0.5, 0)
	never.Counts[0] = pmu.Count{Enabled: 1e9}
	zero := skxRun(0.5, 0)
	zero.Counts[2] = full(0)
	tests := []struct {
		name string
		run  Outcome
		code string
		msg  string
	}{
		{"multiplexed with its ratio", mux, roofline.FlagMultiplexed, "40.0%"},
		{"never scheduled", never, roofline.FlagMissingCounter, "never scheduled"},
		{"counted zero", zero, roofline.FlagMissingCounter, "uncore_imc_0/cas_count_read/ counted 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := buildPoint(inputs{cfg: testConfig(), source: roofline.SourceCounters, counters: skxCounters, reps: []rep{{kernel: tt.run}}})
			if err != nil {
				t.Fatal(err)
			}
			if !hasFlag(p, tt.code, tt.msg) {
				t.Errorf("flags = %+v, want %s mentioning %q", p.Flags, tt.code, tt.msg)
			}
		})
	}
	// A user event counting zero is a result, not a problem.
	p, _ := buildPoint(inputs{cfg: testConfig(), source: roofline.SourceCounters, counters: skxCounters, reps: []rep{{kernel: skxRun(0.5, 0)}}})
	if len(p.Flags) != 0 {
		t.Errorf("flags = %+v, want none for a zero user event", p.Flags)
	}
}

func TestBuildPointSubtractsOverheadRuns(t *testing.T) {
	kernel := skxRun(0.5, 1300)
	overhead := scaled(skxRun(0.5, 1300), 0.25)
	overhead.Counts[6] = full(300)
	cfg := testConfig()
	cfg.Counting.Overhead = []string{"/bin/kernel", "-n", "0"}
	p, err := buildPoint(inputs{cfg: cfg, source: roofline.SourceCounters, counters: skxCounters, reps: []rep{{kernel: kernel, overhead: &overhead}}})
	if err != nil {
		t.Fatal(err)
	}
	if !near(*p.WorkFlops, 801e6*0.75) || !near(*p.TrafficBytes, 512e6*0.75) || !near(p.Seconds, 0.375) {
		t.Errorf("W %v Q %v T %v, want three quarters of the kernel run's", *p.WorkFlops, *p.TrafficBytes, p.Seconds)
	}
	if p.Events[6].Value != 1000 || p.Events[6].Raw != 1300 {
		t.Errorf("page-faults value %v raw %v, want net 1000 of raw 1300", p.Events[6].Value, p.Events[6].Raw)
	}
	if p.Overhead == nil || !near(*p.Overhead.WorkFlops, 801e6*0.25) || !near(p.Overhead.Seconds, 0.125) || len(p.Overhead.Command) != 3 ||
		len(p.Overhead.Events) != len(skxCounters) || p.Overhead.Events[6].Value != 300 {
		t.Errorf("overhead record = %+v", p.Overhead)
	}
}

func TestBuildPointNeverReportsANegativeSubtraction(t *testing.T) {
	cfg := testConfig()
	cfg.Counting.Overhead = []string{"setup-only"}
	kernel := skxRun(0.5, 0)
	more := skxRun(0.1, 0)
	more.Counts[1] = full(2e8) // the overhead run did more FP work than the target
	p, err := buildPoint(inputs{cfg: cfg, source: roofline.SourceCounters, counters: skxCounters, reps: []rep{{kernel: kernel, overhead: &more}}})
	if err != nil {
		t.Fatal(err)
	}
	if p.WorkFlops != nil || p.GFlops != nil || p.Intensity != nil {
		t.Errorf("W %v GFLOP/s %v I %v: want unknown after a negative subtraction", deref(p.WorkFlops), deref(p.GFlops), deref(p.Intensity))
	}
	if !hasFlag(p, roofline.FlagNegative, "work is negative") {
		t.Errorf("flags = %+v, want negative-subtraction for work", p.Flags)
	}
	if p.Events[1].Value != -1e8 || !hasFlag(p, roofline.FlagNegative, "fp_arith_inst_retired.512b_packed_double is negative") {
		t.Errorf("event %+v flags %+v: want the negative count reported and flagged", p.Events[1], p.Flags)
	}

	slow := skxRun(0.6, 0) // the overhead run took longer: no time left
	p, err = buildPoint(inputs{cfg: cfg, source: roofline.SourceCounters, counters: skxCounters, reps: []rep{{kernel: kernel, overhead: &slow}}})
	if err != nil {
		t.Fatal(err)
	}
	if p.Seconds != 0 || p.GFlops != nil || p.GBytesPerS != nil || !hasFlag(p, roofline.FlagNegative, "time is not positive") {
		t.Errorf("T %v GFLOP/s %v GB/s %v flags %+v: want time and rates unknown and flagged", p.Seconds, deref(p.GFlops), deref(p.GBytesPerS), p.Flags)
	}
}

func TestBuildPointFlagsAResultBelowTheNoise(t *testing.T) {
	cfg := testConfig()
	cfg.Counting.Overhead = []string{"setup-only"}
	var reps []rep
	// Net scalar FP64 counts of +3e6, -1e6, +1e6 on top of 8e8 packed
	// FLOPs: work is far above its noise.
	for _, d := range []float64{3e6, -1e6, 1e6} {
		k := skxRun(0.5, 0)
		k.Counts[0] = full(4e6)
		o := Outcome{Wall: 100 * time.Millisecond, Counts: make([]pmu.Count, len(skxCounters))}
		for i := range o.Counts {
			o.Counts[i] = full(0)
		}
		o.Counts[0] = full(uint64(4e6 - d))
		reps = append(reps, rep{kernel: k, overhead: &o})
	}
	p, err := buildPoint(inputs{cfg: cfg, source: roofline.SourceCounters, counters: skxCounters, reps: reps})
	if err != nil {
		t.Fatal(err)
	}
	if p.WorkFlops == nil || !near(*p.WorkFlops, 800e6+1e6) {
		t.Errorf("W = %v", deref(p.WorkFlops))
	}
	if hasFlag(p, roofline.FlagBelowNoise, "work") {
		t.Errorf("flags = %+v: work of 8e8 is far above its noise", p.Flags)
	}
	// Traffic: the overhead run counts nearly as much as the target.
	for i, d := range []float64{2e5, -1e5, 3e5} {
		reps[i].overhead.Counts[2] = full(uint64(4e6 - d))
		reps[i].overhead.Counts[3] = full(1e6)
		reps[i].overhead.Counts[4] = full(2e6)
		reps[i].overhead.Counts[5] = full(1e6)
	}
	p, err = buildPoint(inputs{cfg: cfg, source: roofline.SourceCounters, counters: skxCounters, reps: reps})
	if err != nil {
		t.Fatal(err)
	}
	if !hasFlag(p, roofline.FlagBelowNoise, "DRAM traffic") {
		t.Errorf("flags = %+v, want below-noise for DRAM traffic", p.Flags)
	}
}

func TestBuildPointSubtractsTheIdleRateTimesTime(t *testing.T) {
	cfg := testConfig()
	cfg.Counting.IdleBaseline = 200 * time.Millisecond
	// 0.2 s idle: 1e5 reads and 5e4 writes on box 0 = 9.6 MB: 48 MB/s.
	idle := Outcome{Wall: 200 * time.Millisecond, Counts: []pmu.Count{{}, {}, full(1e5), full(5e4), full(0), full(0), {}}}
	p, err := buildPoint(inputs{cfg: cfg, source: roofline.SourceCounters, counters: skxCounters, idle: &idle, reps: []rep{{kernel: skxRun(0.5, 0)}}})
	if err != nil {
		t.Fatal(err)
	}
	if !near(*p.TrafficBytes, 512e6-48e6*0.5) || !near(*p.ReadBytes, 384e6-32e6*0.5) || !near(*p.WriteBytes, 128e6-16e6*0.5) {
		t.Errorf("Q %v read %v write %v, want less 24 MB, 16 MB, 8 MB of idle traffic", *p.TrafficBytes, *p.ReadBytes, *p.WriteBytes)
	}
	if p.Overhead == nil || p.Overhead.IdleBytesPerS == nil || !near(*p.Overhead.IdleBytesPerS, 48e6) {
		t.Errorf("overhead = %+v, want idle rate 48e6 B/s", p.Overhead)
	}
}

func TestBuildPointReportsRepetitionStatistics(t *testing.T) {
	cfg := testConfig()
	var reps []rep
	walls := []float64{0.50, 0.52, 0.48, 0.51, 0.49}
	packed := []uint64{1e8, 1e8 + 10, 1e8 - 10, 1e8 + 5, 1e8 - 5}
	for i, w := range walls {
		r := skxRun(w, 0)
		r.Counts[1] = full(packed[i])
		reps = append(reps, rep{kernel: r})
	}
	p, err := buildPoint(inputs{cfg: cfg, source: roofline.SourceCounters, counters: skxCounters, reps: reps})
	if err != nil {
		t.Fatal(err)
	}
	if !near(p.Seconds, 0.5) || p.CI.N != 5 || p.CI.Method != "student-t" {
		t.Errorf("T = %v n %d method %q", p.Seconds, p.CI.N, p.CI.Method)
	}
	// s = 0.0158114, t(0.975, 4) = 2.776445: half-width 0.0196324.
	if h := (p.CI.Seconds.Hi - p.CI.Seconds.Lo) / 2; math.Abs(h-0.0196324) > 1e-6 {
		t.Errorf("T half-width = %v, want 0.0196324", h)
	}
	if !near(*p.WorkFlops, 801e6) {
		t.Errorf("W = %v, want the median 801e6", *p.WorkFlops)
	}
	if p.CI.GFlops == nil || !(p.CI.GFlops.Lo < *p.GFlops && *p.GFlops < p.CI.GFlops.Hi) {
		t.Errorf("GFLOP/s %v CI %+v", *p.GFlops, p.CI.GFlops)
	}
	if p.GBytesPerS == nil || p.CI.GBytesPerS == nil || !(p.CI.GBytesPerS.Lo < *p.GBytesPerS && *p.GBytesPerS < p.CI.GBytesPerS.Hi) {
		t.Errorf("GB/s %v CI %+v: want the interval of the mean rate, as GFLOP/s has", p.GBytesPerS, p.CI.GBytesPerS)
	}
	if len(p.Samples.Seconds) != 5 || len(p.Samples.WorkFlops) != 5 || len(p.Samples.TrafficBytes) != 5 {
		t.Errorf("samples = %+v", p.Samples)
	}
}

func TestBuildPointFlagsHowTheTargetEnded(t *testing.T) {
	failed := skxRun(0.5, 0)
	failed.ExitCode = 3
	killed := skxRun(0.5, 0)
	killed.ExitCode, killed.Signal = 128+9, "killed"
	for _, tt := range []struct {
		run  Outcome
		code string
	}{{failed, roofline.FlagNonzeroExit}, {killed, roofline.FlagSignaled}} {
		p, err := buildPoint(inputs{cfg: testConfig(), source: roofline.SourceCounters, counters: skxCounters, reps: []rep{{kernel: tt.run}}})
		if err != nil {
			t.Fatal(err)
		}
		if !hasFlag(p, tt.code, "repetition 1") || p.Exit.Code != tt.run.ExitCode || p.Exit.Signal != tt.run.Signal {
			t.Errorf("flags %+v exit %+v, want %s", p.Flags, p.Exit, tt.code)
		}
	}
}

func testRoofs() *roofline.Roofs {
	return &roofline.Roofs{
		Schema: roofline.RoofsSchema,
		Compute: []roofline.ComputeRoof{
			{Name: "avx512-fma-fp64", Precision: roofline.Double, Threads: 1, GFlops: 50},
			{Name: "avx512-fma-fp64", Precision: roofline.Double, Threads: 2, GFlops: 100},
			{Name: "avx512-fma-fp64", Precision: roofline.Double, Threads: 4, GFlops: 200},
		},
		Bandwidth: []roofline.BandwidthRoof{
			{Level: "DRAM", Kernel: "triad", Threads: 1, GBytesPerS: 10},
			{Level: "DRAM", Kernel: "triad", Threads: 2, GBytesPerS: 20},
			{Level: "DRAM", Kernel: "triad", Threads: 4, GBytesPerS: 25},
		},
	}
}

func TestBuildPointPlacesThePointUnderTheRoofs(t *testing.T) {
	cfg := testConfig()
	cfg.Placement.RoofsPath = "roofs.json"
	// I = 801/512 = 1.564 FLOP/B; 2 threads: memory roof 31.3 GFLOP/s.
	p, err := buildPoint(inputs{cfg: cfg, source: roofline.SourceCounters, counters: skxCounters, roofs: testRoofs(), cpus: 3, reps: []rep{{kernel: skxRun(0.5, 0)}}})
	if err != nil {
		t.Fatal(err)
	}
	if p.Threads != 2 || p.Bound == nil || *p.Bound != (roofline.Bound{Kind: roofline.BoundMemory, Roof: "DRAM", GBytesPerS: 20}) || !near(*p.AttainableGFlops, 20*801.0/512) || !near(*p.FractionOfAttainable, 1.602/(20*801.0/512)) {
		t.Errorf("threads %d bound %v attainable %v fraction %v", p.Threads, p.Bound, deref(p.AttainableGFlops), deref(p.FractionOfAttainable))
	}
	if p.RoofsFile != "roofs.json" || hasFlag(p, roofline.FlagAboveRoof, "") {
		t.Errorf("roofs file %q flags %+v", p.RoofsFile, p.Flags)
	}

	// 100x faster than possible: above its roof.
	p, err = buildPoint(inputs{cfg: cfg, source: roofline.SourceCounters, counters: skxCounters, roofs: testRoofs(), cpus: 2, reps: []rep{{kernel: skxRun(0.0005, 0)}}})
	if err != nil {
		t.Fatal(err)
	}
	if !hasFlag(p, roofline.FlagAboveRoof, "measurement error") {
		t.Errorf("flags = %+v, want above-roof", p.Flags)
	}
}

// TestBuildPointPlacesTheProgramUnderTheRoofsOfItsParallelism feeds
// recorded CPU and wall times: a single-threaded program, two busy
// processes, three threads (the 4-thread roofs), --threads, runs without a
// CPU time, and a busy machine.
func TestBuildPointPlacesTheProgramUnderTheRoofsOfItsParallelism(t *testing.T) {
	run := func(wall, cpu float64) rep {
		o := skxRun(wall, 0)
		o.CPU = time.Duration(cpu * float64(time.Second))
		return rep{kernel: o}
	}
	idle := func(v float64) *float64 { return &v }
	tests := []struct {
		name     string
		reps     []rep
		threads  int // --threads
		idleCPUs *float64
		// want
		parallelism float64
		scope       int
		rule        string
		busy        bool
	}{
		{name: "single-threaded", reps: []rep{run(0.5, 0.51), run(0.5, 0.50)}, idleCPUs: idle(2.9),
			parallelism: 1.01, scope: 1, rule: roofline.ScopeRuleParallelism},
		{name: "two busy processes", reps: []rep{run(0.5, 0.99), run(0.5, 0.98)}, idleCPUs: idle(1.0),
			parallelism: 1.97, scope: 2, rule: roofline.ScopeRuleParallelism},
		{name: "three threads: the next measured scope", reps: []rep{run(0.5, 1.45)}, idleCPUs: idle(0.55),
			parallelism: 2.9, scope: 4, rule: roofline.ScopeRuleParallelism},
		{name: "--threads overrides", reps: []rep{run(0.5, 0.5)}, threads: 4, idleCPUs: idle(0.1),
			parallelism: 1, scope: 4, rule: roofline.ScopeRuleAsked},
		{name: "no CPU time: the CPUs' scope", reps: []rep{run(0.5, 0)},
			scope: 2, rule: roofline.ScopeRuleCPUs},
		// Two busy processes given half a CPU between them by a loaded
		// machine (measured so at load 8 on the 2-CPU guest).
		{name: "starved on a busy machine", reps: []rep{run(1.37, 0.59)}, idleCPUs: idle(0.02),
			parallelism: 0.59 / 1.37, scope: 1, rule: roofline.ScopeRuleParallelism, busy: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testConfig()
			cfg.Placement.Threads = tt.threads
			p, err := buildPoint(inputs{cfg: cfg, source: roofline.SourceCounters, counters: skxCounters, roofs: testRoofs(),
				cpus: 3, reps: tt.reps, idleCPUs: tt.idleCPUs})
			if err != nil {
				t.Fatal(err)
			}
			if !near(p.Parallelism, tt.parallelism) && !(p.Parallelism == 0 && tt.parallelism == 0) {
				t.Errorf("parallelism %g, want %g", p.Parallelism, tt.parallelism)
			}
			if p.Threads != tt.scope || p.ThreadsRule != tt.rule {
				t.Errorf("scope %d by %q, want %d by %q", p.Threads, p.ThreadsRule, tt.scope, tt.rule)
			}
			if got := hasFlag(p, roofline.FlagBusyMachine, "stayed idle"); got != tt.busy {
				t.Errorf("busy-machine flag %v, want %v: %+v", got, tt.busy, p.Flags)
			}
		})
	}
}

// TestBusyMachineSaysHowTheCPUsWereShared: the flag tells the program's
// own CPUs from the others' (a single-threaded program that had one of two
// CPUs, the other busy, had its CPU) and says for which programs the
// scope is right.
func TestBusyMachineSaysHowTheCPUsWereShared(t *testing.T) {
	tests := []struct {
		name              string
		cpus              int
		wall, cpu, idle   float64
		busy              bool
		shares, placement string
	}{
		{"single-threaded, one of two CPUs, the other busy", 2, 1, 1, 0, true,
			"the program had 1.00 of the 2 CPUs on average while it ran, other processes or the hypervisor 1.00, and 0.00 stayed idle",
			"the 1-thread roofs it is placed under are right for a program of 1 thread; one of more threads shared the CPUs it had"},
		{"starved below one CPU", 3, 1.37, 0.59, 0.02, true,
			"the program had 0.43 of the 3 CPUs on average while it ran, other processes or the hypervisor 2.55, and 0.02 stayed idle",
			"right for a program of 1 thread"},
		{"two threads of four CPUs", 4, 0.5, 0.985, 0.2, true,
			"the program had 1.97 of the 4 CPUs on average while it ran, other processes or the hypervisor 1.83, and 0.20 stayed idle",
			"the 2-thread roofs it is placed under are right for a program of 2 threads"},
		{"three threads under the 4-thread roofs", 8, 0.5, 1.45, 0.3, true,
			"the program had 2.90 of the 8 CPUs on average while it ran, other processes or the hypervisor 4.80, and 0.30 stayed idle",
			"the 4-thread roofs it is placed under are right for a program of 3 to 4 threads"},
		{"beyond the largest measured scope", 8, 0.5, 2.45, 0.1, true,
			"the program had 4.90 of the 8 CPUs",
			"it is placed under the largest measured scope, 4 threads, below the 5 it kept busy"},
		{"single-threaded, the other CPU idle", 2, 1, 1, 1, false, "", ""},
		{"all the CPUs the program's own", 2, 1, 1.9, 0.05, false, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := skxRun(tt.wall, 0)
			o.CPU = time.Duration(tt.cpu * float64(time.Second))
			p, err := buildPoint(inputs{cfg: testConfig(), source: roofline.SourceCounters, counters: skxCounters, roofs: testRoofs(),
				cpus: tt.cpus, reps: []rep{{kernel: o}}, idleCPUs: &tt.idle})
			if err != nil {
				t.Fatal(err)
			}
			var msg string
			for _, f := range p.Flags {
				if f.Code == roofline.FlagBusyMachine {
					msg = f.Message
				}
			}
			if (msg != "") != tt.busy {
				t.Fatalf("busy-machine %q, want flagged %v", msg, tt.busy)
			}
			if !strings.HasPrefix(msg, tt.shares) || !strings.Contains(msg, tt.placement) {
				t.Errorf("busy-machine %q,\nwant it to start %q and say %q", msg, tt.shares, tt.placement)
			}
		})
	}
}

func TestBuildPointUsesAnalyticValues(t *testing.T) {
	cfg := testConfig()
	cfg.Counting.Work, cfg.Counting.Traffic = ptr(2e9), ptr(1e9)
	p, err := buildPoint(inputs{cfg: cfg, source: roofline.SourceAnalytic,
		reps: []rep{{kernel: Outcome{Wall: time.Second}}, {kernel: Outcome{Wall: 2 * time.Second}}}})
	if err != nil {
		t.Fatal(err)
	}
	if *p.WorkFlops != 2e9 || *p.TrafficBytes != 1e9 || *p.Intensity != 2 || !near(*p.GFlops, (2+1)/2.0) || p.ReadBytes != nil {
		t.Errorf("W %v Q %v I %v GFLOP/s %v read %v", *p.WorkFlops, *p.TrafficBytes, *p.Intensity, *p.GFlops, deref(p.ReadBytes))
	}
	if p.Source != roofline.SourceAnalytic || len(p.Events) != 0 || p.Events == nil {
		t.Errorf("source %q events %v", p.Source, p.Events)
	}
}
