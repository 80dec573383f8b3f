package gate

import (
	"math"
	"strings"
	"testing"

	"github.com/rprof/rprof/internal/docfile"
	"github.com/rprof/rprof/internal/stats"
	"github.com/rprof/rprof/roofline"
)

// load reads a recorded point (see testdata/record).
func load(t *testing.T, name string) roofline.Point {
	t.Helper()
	ps, err := docfile.ReadPoints("testdata/" + name + ".json")
	if err != nil {
		t.Fatal(err)
	}
	return ps[0]
}

func ptr(v float64) *float64 { return &v }

// scaled returns p with every time multiplied by k, as on a slower machine.
func scaled(p roofline.Point, k float64) roofline.Point {
	q := p
	q.Seconds *= k
	q.CI.Seconds = roofline.Interval{Lo: p.CI.Seconds.Lo * k, Hi: p.CI.Seconds.Hi * k}
	q.Samples.Seconds = nil
	for _, s := range p.Samples.Seconds {
		q.Samples.Seconds = append(q.Samples.Seconds, s*k)
	}
	return q
}

// placed returns p with W, Q and a memory-bound placement under a DRAM roof
// of gbs GB/s, computed the way `rprof run` places points.
func placed(p roofline.Point, work, traffic, gbs float64) roofline.Point {
	q := p
	i := work / traffic
	gf := work / p.Seconds / 1e9
	att := gbs * i
	q.WorkFlops, q.TrafficBytes, q.Intensity, q.GFlops = ptr(work), ptr(traffic), ptr(i), ptr(gf)
	q.Bound = &roofline.Bound{Kind: roofline.BoundMemory, Roof: "DRAM", GBytesPerS: gbs}
	q.AttainableGFlops, q.FractionOfAttainable = ptr(att), ptr(gf/att)
	return q
}

func withCPU(p roofline.Point, name string) roofline.Point {
	q := p
	q.Machine.CPU.ModelName = name
	return q
}

func check(t *testing.T, v *Verdict, name string) Check {
	t.Helper()
	for _, c := range v.Checks {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no %q check in %+v", name, v.Checks)
	return Check{}
}

func TestDecideOnRecordedSamples(t *testing.T) {
	slowOld, slowNew := load(t, "slowdown-old"), load(t, "slowdown-new")
	noiseOld, noiseNew := load(t, "noise-old"), load(t, "noise-new")
	tight := DefaultLimits
	tight.MaxSlowdown = 0.01
	summaryOnly := func(p roofline.Point) roofline.Point {
		p.Samples.Seconds = nil
		return p
	}
	tests := []struct {
		name     string
		old, new roofline.Point
		limits   Limits
		opts     Options
		want     Outcome
		basis    string
		detail   string // in the speed check's detail
	}{
		// The loop ran 3% more iterations: +2.0% measured, tight intervals.
		{"real slowdown with tight intervals fails", slowOld, slowNew, tight, DefaultOptions, Regression, CheckTime, "slower"},
		{"real slowdown fails with Mann-Whitney U too", slowOld, slowNew, tight, Options{Test: stats.TestMannWhitney}, Regression, CheckTime, "Mann-Whitney U"},
		{"real slowdown tested on summaries only fails", summaryOnly(slowOld), summaryOnly(slowNew), tight, DefaultOptions, Regression, CheckTime, "Welch t"},
		{"real slowdown within the limit passes", slowOld, slowNew, DefaultLimits, DefaultOptions, Pass, CheckTime, "within limit 5%"},
		// The same loop, +3.0% between two batches, wide intervals.
		{"noise with wide intervals passes", noiseOld, noiseNew, tight, DefaultOptions, Pass, CheckTime, "not significant"},
		{"speedup passes", slowNew, slowOld, tight, DefaultOptions, Pass, CheckTime, "faster"},
		{"one repetition each cannot decide", summaryOnly(withN(slowOld, 1)), summaryOnly(withN(slowNew, 1)), tight, DefaultOptions, Undecided, CheckTime, "too few repetitions"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := Decide(tt.old, tt.new, tt.limits, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if v.Outcome != tt.want || v.Basis != tt.basis {
				t.Fatalf("outcome %s on %s, want %s on %s: %s", v.Outcome, v.Basis, tt.want, tt.basis, v.Reason)
			}
			if c := check(t, v, tt.basis); !strings.Contains(c.Detail, tt.detail) {
				t.Errorf("detail %q does not say %q", c.Detail, tt.detail)
			}
			if strings.Contains(v.Reason, "\n") {
				t.Errorf("reason spans lines: %q", v.Reason)
			}
		})
	}
}

func withN(p roofline.Point, n int) roofline.Point {
	p.CI.N = n
	return p
}

func TestChangedRoofIsNotARegression(t *testing.T) {
	rec := load(t, "slowdown-old")
	base := placed(rec, 4e7, 3.2e8, 50)
	other := withCPU(rec, "Other CPU")
	tests := []struct {
		name   string
		new    roofline.Point
		basis  string
		want   Outcome
		detail string
	}{
		// A machine with 20% less memory bandwidth: the kernel takes 25%
		// longer at the same fraction of its (lower) roof.
		{"slower machine, lower roof", placed(scaled(other, 1/0.8), 4e7, 3.2e8, 40), CheckFraction, Pass, "not significant"},
		// On the other machine the kernel really lost 20% of its fraction.
		{"other machine, real loss of fraction", placed(scaled(other, 1/0.8/0.8), 4e7, 3.2e8, 40), CheckFraction, Regression, "lower"},
		// The same machine, roofs measured again: lower (a noisy neighbour
		// slowed both the roofs and the kernel), or higher (the kernel did
		// not change, its fraction fell).
		{"same machine, roofs and kernel slower", placed(scaled(rec, 1/0.8), 4e7, 3.2e8, 40), CheckTimeAndFraction, Pass, "not counted as a kernel regression"},
		{"same machine, roofs higher", placed(rec, 4e7, 3.2e8, 62.5), CheckTimeAndFraction, Pass, "not counted as a kernel regression"},
		// Roofs 10% higher and the kernel 25% slower: both figures worse.
		{"same machine, kernel slower under other roofs", placed(scaled(rec, 1.25), 4e7, 3.2e8, 55), CheckTimeAndFraction, Regression, "slower"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := Decide(base, tt.new, DefaultLimits, DefaultOptions)
			if err != nil {
				t.Fatal(err)
			}
			if v.Basis != tt.basis || v.Outcome != tt.want {
				t.Fatalf("%s on %s, want %s on %s: %s", v.Outcome, v.Basis, tt.want, tt.basis, v.Reason)
			}
			if c := check(t, v, tt.basis); !strings.Contains(c.Detail, tt.detail) {
				t.Errorf("detail %q does not say %q", c.Detail, tt.detail)
			}
			traffic := check(t, v, CheckTraffic)
			if otherMachine := tt.basis == CheckFraction; otherMachine != (traffic.Outcome == Skipped) {
				t.Errorf("counted traffic on another machine: %s, want skipped only there", traffic.Outcome)
			}
			if !strings.Contains(strings.Join(v.Notes, "\n"), "because the") {
				t.Errorf("notes do not say what was compared and why: %q", v.Notes)
			}
		})
	}
}

// withCommand is p measured by another command, less overhead (nil: none).
func withCommand(p roofline.Point, command, overhead []string) roofline.Point {
	p.Command = command
	p.Overhead = nil
	if overhead != nil {
		p.Overhead = &roofline.Overhead{Command: overhead}
	}
	return p
}

func TestContextComparesTheBindingRoofsByNameAndValue(t *testing.T) {
	rec := load(t, "slowdown-old")
	base := placed(rec, 4e7, 3.2e8, 50)
	withRoof := func(p roofline.Point, b roofline.Bound) roofline.Point {
		p.Bound = &b
		return p
	}
	tests := []struct {
		name       string
		new        roofline.Point
		same, diff bool
		context    string
	}{
		{"same roof, same value", placed(rec, 4e7, 3.2e8, 50), true, false, ""},
		{"same roof measured again", placed(rec, 4e7, 3.2e8, 40), false, true, "roofs differ: memory roof 50 GB/s → 40 GB/s"},
		{"another memory level", withRoof(base, roofline.Bound{Kind: roofline.BoundMemory, Roof: "L3", GBytesPerS: 50}), false, true, "roofs differ: memory roof DRAM 50 GB/s → L3 50 GB/s"},
		{"another kind of roof: the kernel crossed the ridge", withRoof(base, roofline.Bound{Kind: roofline.BoundCompute, Roof: "dgemm", GFlops: 60}), false, false, ""},
		{"another command under the label", withCommand(base, []string{"./triad", "20000000", "20"}, []string{"./triad", "20000000", "1"}), true, false,
			"command differs: " + strings.Join(base.Command, " ") + " → ./triad 20000000 20 (less ./triad 20000000 1)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pr := comparePair(base, tt.new, DefaultOptions)
			if pr.SameRoofs != tt.same || pr.OtherRoofs != tt.diff {
				t.Errorf("same roofs %v, other roofs %v; want %v, %v", pr.SameRoofs, pr.OtherRoofs, tt.same, tt.diff)
			}
			if got := strings.Join(pr.Context, "; "); got != tt.context {
				t.Errorf("context %q, want %q", got, tt.context)
			}
		})
	}
}

// The gate's machine is roofline.CompareMachines': the CPU and its cores,
// not rprof's name for the microarchitecture, which another version of
// rprof may infer differently on the same CPU. A point that names no CPU
// keeps time as the basis, with a note.
func TestGateJudgesAnotherMachineByCPUAndCores(t *testing.T) {
	base := placed(load(t, "slowdown-old"), 4e7, 3.2e8, 50)
	base.Machine.Cores = 2
	inferred, moreCores, unknown := base, base, base
	inferred.Machine.CPU.Microarch, inferred.Machine.CPU.MicroarchSource = "amdzen3", roofline.MicroarchFromFeatures
	moreCores.Machine.Cores = 4
	unknown.Machine = roofline.Machine{}
	tests := []struct {
		name     string
		old, new roofline.Point
		basis    string
		context  string
	}{
		{"microarchitecture named by another rprof", base, inferred, CheckTime, ""},
		{"another CPU", base, withCPU(base, "Other CPU"), CheckFraction, "machine differs: AMD EPYC → Other CPU"},
		{"more cores", base, moreCores, CheckFraction, "machine differs: AMD EPYC, 2 cores → AMD EPYC, 4 cores"},
		{"baseline without machine information", unknown, base, CheckTime, "machine unknown: unknown CPU → AMD EPYC; compared as the same machine"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := Decide(tt.old, tt.new, DefaultLimits, DefaultOptions)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(v.Pair.Context, "; "); v.Basis != tt.basis || got != tt.context {
				t.Errorf("basis %s, context %q; want %s, %q", v.Basis, got, tt.basis, tt.context)
			}
		})
	}
}

func TestAnalyticTrafficComparesAcrossMachines(t *testing.T) {
	base := placed(load(t, "slowdown-old"), 4e7, 3.2e8, 50)
	other := placed(withCPU(load(t, "slowdown-old"), "Other CPU"), 4e7, 3.2e8, 40)
	base.Source, other.Source = roofline.SourceAnalytic, roofline.SourceAnalytic
	v, err := Decide(base, other, DefaultLimits, DefaultOptions)
	if err != nil {
		t.Fatal(err)
	}
	if c := check(t, v, CheckTraffic); c.Outcome != Pass {
		t.Errorf("analytic traffic across machines: %s (%s), want pass", c.Outcome, c.Detail)
	}
}

func TestOtherMachineWithoutComparableRoofsIsUndecided(t *testing.T) {
	old := load(t, "slowdown-old")
	tests := []struct {
		name   string
		old    roofline.Point
		new    roofline.Point
		detail string
	}{
		{"no W, no roofs", old, withCPU(old, "Other CPU"), "fraction of attainable is unknown"},
		{"same roofs document", placed(old, 4e7, 3.2e8, 50), placed(withCPU(scaled(old, 1.3), "Other CPU"), 4e7, 3.2e8, 50), "same roofs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := Decide(tt.old, tt.new, DefaultLimits, DefaultOptions)
			if err != nil {
				t.Fatal(err)
			}
			if v.Outcome != Undecided || !strings.Contains(v.Reason, tt.detail) {
				t.Fatalf("outcome %s (%s), want undecided saying %q", v.Outcome, v.Reason, tt.detail)
			}
		})
	}
}

func TestCountedFigures(t *testing.T) {
	old := placed(load(t, "slowdown-old"), 4e7, 3.2e8, 50)
	grown := placed(load(t, "slowdown-old"), 4.2e7, 3.2e8, 50)
	moreTraffic := placed(load(t, "slowdown-old"), 4e7, 3.6e8, 50)
	noCounters := load(t, "slowdown-old")
	analytic := grown
	analytic.Source = "analytic"
	off := DefaultLimits
	off.MaxWorkGrowth = math.Inf(1)
	tests := []struct {
		name   string
		old    roofline.Point
		new    roofline.Point
		limits Limits
		check  string
		want   Outcome
		detail string
	}{
		{"W grew 5% beyond 1%", old, grown, DefaultLimits, CheckWork, Regression, "W grew 5%"},
		{"analytic W says so", old, analytic, DefaultLimits, CheckWork, Regression, "analytic"},
		{"W check turned off", old, grown, off, CheckWork, Skipped, "turned off"},
		{"W unknown here", old, noCounters, DefaultLimits, CheckWork, Skipped, "pass --work"},
		{"W unknown in baseline", noCounters, old, DefaultLimits, CheckWork, Skipped, "--update-baseline"},
		{"Q grew 12.5% beyond 10%", old, moreTraffic, DefaultLimits, CheckTraffic, Regression, "Q grew 12.5%"},
		{"Q unchanged", old, old, DefaultLimits, CheckTraffic, Pass, "Q +0%"},
		{"W fell", grown, old, DefaultLimits, CheckWork, Pass, "not like for like"},
		{"Q unknown in both", noCounters, noCounters, DefaultLimits, CheckTraffic, Skipped, "pass --traffic"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := Decide(tt.old, tt.new, tt.limits, DefaultOptions)
			if err != nil {
				t.Fatal(err)
			}
			c := check(t, v, tt.check)
			if c.Outcome != tt.want || !strings.Contains(c.Detail, tt.detail) {
				t.Errorf("%s: %s %q, want %s saying %q", tt.check, c.Outcome, c.Detail, tt.want, tt.detail)
			}
		})
	}
}

func TestMinFraction(t *testing.T) {
	// 4e7 FLOP in ~44 ms is ~0.9 GFLOP/s; intensity 0.125 under 50 GB/s
	// gives 6.25 GFLOP/s attainable: about 14.4%.
	p := placed(load(t, "slowdown-old"), 4e7, 3.2e8, 50)
	tests := []struct {
		min  float64
		want Outcome
	}{
		{0.10, Pass},
		{0.20, Regression},
	}
	for _, tt := range tests {
		l := DefaultLimits
		l.MinFraction = tt.min
		v, err := Decide(p, p, l, DefaultOptions)
		if err != nil {
			t.Fatal(err)
		}
		if c := check(t, v, CheckMinFraction); c.Outcome != tt.want {
			t.Errorf("min %v: %s (%s), want %s", tt.min, c.Outcome, c.Detail, tt.want)
		}
	}
}

func TestFailedCommandIsUndecided(t *testing.T) {
	old := load(t, "slowdown-old")
	tests := []struct {
		exit   roofline.Exit
		detail string
	}{
		{roofline.Exit{Code: 3}, "exited with status 3"},
		{roofline.Exit{Code: 137, Signal: "SIGKILL"}, "killed by SIGKILL"},
	}
	for _, tt := range tests {
		p := old
		p.Exit = tt.exit
		v, err := Decide(old, p, DefaultLimits, DefaultOptions)
		if err != nil {
			t.Fatal(err)
		}
		if v.Outcome != Undecided || !strings.Contains(v.Reason, tt.detail) {
			t.Errorf("exit %+v: %s %q, want undecided saying %q", tt.exit, v.Outcome, v.Reason, tt.detail)
		}
	}
}

func TestDecideRefusesBadSettings(t *testing.T) {
	p := load(t, "slowdown-old")
	if _, err := Decide(p, p, Limits{MaxSlowdown: -1}, DefaultOptions); err == nil {
		t.Error("negative limit accepted")
	}
	if _, err := Decide(p, p, DefaultLimits, Options{Test: "sign"}); err == nil {
		t.Error("unknown test accepted")
	}
}

func TestNoiseWiderThanTheLimitIsSaid(t *testing.T) {
	tight := DefaultLimits
	tight.MaxSlowdown = 0.01
	tests := []struct {
		name     string
		old, new string
		limits   Limits
		want     bool
	}{
		{"noise of ±6.7% against 1%", "noise-old", "noise-new", tight, true},
		{"noise of ±6.7% against 10%", "noise-old", "noise-new", Limits{MaxSlowdown: 0.10}, false},
		{"a significant change needs no warning", "slowdown-old", "slowdown-new", tight, false},
	}
	for _, tt := range tests {
		v, err := Decide(load(t, tt.old), load(t, tt.new), tt.limits, DefaultOptions)
		if err != nil {
			t.Fatal(err)
		}
		got := strings.Contains(strings.Join(v.Notes, "\n"), "noise is wider than the limit")
		if got != tt.want {
			t.Errorf("%s: warned %v, want %v: %q", tt.name, got, tt.want, v.Notes)
		}
	}
}

// The recorded points are emulated runs of one program (cmd/rprof's
// test target, "sweeps": threads take 1 KiB chunks of a 64 KiB array in
// turn, 8 times): two on one thread, with equal W and Q, and two on two
// threads, with equal W and Q of 331,776 and 272,000 B.
func TestEmulatedWorkIsExactAndTrafficOnlyOnOneThread(t *testing.T) {
	one, oneAgain := load(t, "emulated-1thread-a"), load(t, "emulated-1thread-b")
	two, twoAgain := load(t, "emulated-2threads-a"), load(t, "emulated-2threads-b")
	unrecorded := func(p roofline.Point) roofline.Point {
		em := *p.Emulation
		em.ImageThreads = 0
		p.Emulation = &em
		return p
	}
	counters := func(p roofline.Point) roofline.Point {
		p.Source, p.Emulation = roofline.SourceCounters, nil
		return p
	}
	moreWork := oneAgain
	moreWork.WorkFlops = ptr(*one.WorkFlops + 1)
	moreWork.Intensity = ptr(*moreWork.WorkFlops / *moreWork.TrafficBytes)
	type want struct {
		exact       bool
		inexact     string
		significant bool
	}
	for _, tt := range []struct {
		name              string
		old, new          roofline.Point
		work, traffic, fi want
	}{
		{"one thread: W and Q repeat exactly", one, oneAgain,
			want{exact: true}, want{exact: true}, want{exact: true}},
		{"one thread: one FLOP more is a change", one, moreWork,
			want{exact: true, significant: true}, want{exact: true}, want{exact: true, significant: true}},
		{"two threads: W exact, Q moved beyond the tolerance", two, twoAgain,
			want{exact: true}, want{inexact: InexactThreads, significant: true}, want{inexact: InexactThreads, significant: true}},
		{"one thread against two: Q compared with the tolerance", one, two,
			want{exact: true, significant: true}, want{inexact: InexactThreads, significant: true}, want{inexact: InexactThreads, significant: true}},
		{"threads not recorded: Q compared with the tolerance", unrecorded(one), oneAgain,
			want{exact: true}, want{inexact: InexactUnrecorded}, want{inexact: InexactUnrecorded}},
		{"one side counted by counters keeps the tolerance", counters(one), moreWork,
			want{}, want{}, want{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pr := comparePair(tt.old, tt.new, DefaultOptions)
			for metric, w := range map[string]want{MetricWork: tt.work, MetricTraffic: tt.traffic, MetricIntensity: tt.fi} {
				r := pr.Row(metric)
				if got := (want{r.Exact, r.Inexact, r.Significant}); got != w {
					t.Errorf("%s: change %g: %+v, want %+v", metric, r.Change, got, w)
				}
			}
		})
	}
}

func TestCompareMatchesRegionsByName(t *testing.T) {
	mk := func(label string, regions ...roofline.Region) roofline.Point {
		return roofline.Point{Schema: roofline.PointSchema, Label: label, Seconds: 1,
			CI:      roofline.Uncertainty{Confidence: 0.95, N: 1, Method: "none", Seconds: roofline.Interval{Lo: 1, Hi: 1}},
			Samples: roofline.Samples{Seconds: []float64{1}}, Regions: regions}
	}
	old := mk("app", roofline.Region{Name: "a", Seconds: 0.5}, roofline.Region{Name: "gone", Seconds: 0.1})
	new := mk("app", roofline.Region{Name: "a", Seconds: 0.25}, roofline.Region{Name: "added", Seconds: 0.1})
	c, err := Compare([]roofline.Point{old}, []roofline.Point{new}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Pairs) != 2 || c.Pairs[1].Label != "app/a" {
		t.Fatalf("pairs %+v, want the point's and region a's", c.Pairs)
	}
	flags := strings.Join(c.Pairs[0].Flags, "; ")
	if !strings.Contains(flags, `region "gone" is only in old`) || !strings.Contains(flags, `region "added" is only in new`) {
		t.Errorf("flags %q", flags)
	}
	if r := c.Pairs[1].Rows[0]; r.Old.Center != 0.5 || r.New.Center != 0.25 {
		t.Errorf("region a's time row %+v", r)
	}
}

// An exact modelled Q may move by a few lines between environments (the
// lines of the argument and environment block the program reads): a gate
// with no traffic growth allowed passes within that block's size and fails
// beyond it.
func TestExactEmulatedTrafficMayMoveByTheEnvironmentBlock(t *testing.T) {
	one := load(t, "emulated-1thread-a")
	withEnv := func(p roofline.Point, dq float64, env int64) roofline.Point {
		em := *p.Emulation
		em.EnvironmentBytes = env
		p.Emulation = &em
		p.TrafficBytes = ptr(*p.TrafficBytes + dq)
		return p
	}
	limits := Limits{MaxSlowdown: math.Inf(1), MaxWorkGrowth: 0, MaxTrafficGrowth: 0}
	for _, tt := range []struct {
		name     string
		dq       float64
		env      int64
		outcome  Outcome
		inDetail string
	}{
		{"3 lines more with a 1.5 KB block", 192, 1500, Pass, "may move between environments"},
		{"a page more with a 1.5 KB block", 4096, 1500, Regression, "grew"},
		{"a line more, block not recorded", 64, 0, Regression, "grew"},
	} {
		v, err := Decide(withEnv(one, 0, tt.env), withEnv(one, tt.dq, tt.env), limits, DefaultOptions)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, c := range v.Checks {
			if c.Name != CheckTraffic {
				continue
			}
			found = true
			if c.Outcome != tt.outcome || !strings.Contains(c.Detail, tt.inDetail) {
				t.Errorf("%s: %v %q, want %v naming %q", tt.name, c.Outcome, c.Detail, tt.outcome, tt.inDetail)
			}
		}
		if !found {
			t.Errorf("%s: no traffic check in %+v", tt.name, v.Checks)
		}
	}
}

func TestASlowdownLimitOfInfinityTurnsTheTimeCheckOff(t *testing.T) {
	old, new := load(t, "emulated-1thread-a"), load(t, "emulated-1thread-b")
	new.Samples.Seconds = append([]float64(nil), old.Samples.Seconds...)
	for i := range new.Samples.Seconds {
		new.Samples.Seconds[i] *= 3
	}
	new.Seconds *= 3
	v, err := Decide(old, new, Limits{MaxSlowdown: math.Inf(1)}, DefaultOptions)
	if err != nil {
		t.Fatal(err)
	}
	if v.Outcome != Pass || len(v.Checks) == 0 || v.Checks[0].Name != CheckTime || v.Checks[0].Outcome != Skipped {
		t.Errorf("3 times slower with the time check off: %v, checks %+v; want a pass on W and Q with time skipped", v.Outcome, v.Checks)
	}
}

// gate and compare take the same statistic of a point: the time row's
// test, from samples where there are two or more, else from the
// intervals, is the same in the verdict and in the comparison.
func TestGateAndCompareTestTheSameStatistic(t *testing.T) {
	old, new := load(t, "noise-old"), load(t, "noise-new")
	noSamples := func(p roofline.Point) roofline.Point {
		p.Samples = roofline.Samples{}
		return p
	}
	for name, pts := range map[string][2]roofline.Point{
		"samples":   {old, new},
		"intervals": {noSamples(old), noSamples(new)},
	} {
		t.Run(name, func(t *testing.T) {
			v, err := Decide(pts[0], pts[1], DefaultLimits, DefaultOptions)
			if err != nil {
				t.Fatal(err)
			}
			c, err := Compare([]roofline.Point{pts[0]}, []roofline.Point{pts[1]}, DefaultOptions)
			if err != nil {
				t.Fatal(err)
			}
			g, k := v.Pair.Row(MetricTime), c.Pairs[0].Row(MetricTime)
			if g == nil || k == nil || g.Test == nil || k.Test == nil {
				t.Fatalf("time rows %+v and %+v: want a test in both", g, k)
			}
			if g.Test.P != k.Test.P || g.FromIntervals != k.FromIntervals || g.FromIntervals != (name == "intervals") {
				t.Errorf("gate p %v (from intervals %v), compare p %v (%v)", g.Test.P, g.FromIntervals, k.Test.P, k.FromIntervals)
			}
		})
	}
}
