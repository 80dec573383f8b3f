package roofline

import (
	"errors"
	"math"
	"path/filepath"
	"testing"
)

func readFixtureRoofs(t *testing.T, name string) *Roofs {
	t.Helper()
	r, err := readRoofs(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestPlaceChoosesTheLowerOfTheDRAMAndComputeRoofs(t *testing.T) {
	r := &Roofs{
		Compute: []ComputeRoof{
			{Name: "avx512-fma-fp64", Precision: Double, Threads: 1, GFlops: 100},
			{Name: "avx512-fma-fp32", Precision: Single, Threads: 1, GFlops: 200},
			{Name: "avx512-fma-fp64", Precision: Double, Threads: 2, GFlops: 190},
		},
		Bandwidth: []BandwidthRoof{
			{Level: "L1", Threads: 1, GBytesPerS: 400},
			{Level: "DRAM", Kernel: "triad", Threads: 1, GBytesPerS: 20},
			{Level: "DRAM", Kernel: "triad-nt", Threads: 1, GBytesPerS: 25},
		},
	}
	tests := []struct {
		name      string
		intensity float64
		gflops    float64
		precision string
		bound     string
		attain    float64
	}{
		{"left of the ridge is memory-bound on the best DRAM kernel", 1, 10, Double, "memory (DRAM)", 25},
		{"right of the ridge is compute-bound", 10, 50, Double, "compute (avx512-fma-fp64)", 100},
		{"fp32 work meets the fp32 peak", 10, 50, Single, "compute (avx512-fma-fp32)", 200},
		{"unknown precision meets the highest peak", 100, 50, "", "compute (avx512-fma-fp32)", 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl, err := r.Place(tt.intensity, tt.gflops, 1, tt.precision)
			if err != nil {
				t.Fatal(err)
			}
			if pl.Bound.String() != tt.bound || pl.AttainableGFlops != tt.attain {
				t.Errorf("Place = %q at %v GFLOP/s, want %q at %v", pl.Bound, pl.AttainableGFlops, tt.bound, tt.attain)
			}
			if want := tt.gflops / tt.attain; math.Abs(pl.Fraction-want) > 1e-12 {
				t.Errorf("fraction = %v, want %v", pl.Fraction, want)
			}
		})
	}
}

func TestPlaceRejectsWhatItCannotPlace(t *testing.T) {
	r := &Roofs{
		Compute:   []ComputeRoof{{Name: "fma", Precision: Double, Threads: 1, GFlops: 100}},
		Bandwidth: []BandwidthRoof{{Level: "L2", Threads: 1, GBytesPerS: 200}},
	}
	tests := []struct {
		name      string
		intensity float64
		threads   int
	}{
		{"zero intensity", 0, 1},
		{"infinite intensity", math.Inf(1), 1},
		{"NaN intensity", math.NaN(), 1},
		{"no roofs for the thread scope", 1, 4},
		{"no DRAM roof", 1, 1},
	}
	for _, tt := range tests {
		if _, err := r.Place(tt.intensity, 1, tt.threads, Double); err == nil {
			t.Errorf("%s: Place succeeded, want an error", tt.name)
		}
	}
}

func TestPlaceUsesDGEMMWhenItIsTheHighestFP64Roof(t *testing.T) {
	r := &Roofs{
		Compute:   []ComputeRoof{{Name: "fma", Precision: Double, Threads: 1, GFlops: 50}},
		Bandwidth: []BandwidthRoof{{Level: "DRAM", Threads: 1, GBytesPerS: 10}},
		DGEMM:     &DGEMM{Library: "OpenBLAS", Threads: 1, GFlops: 60},
	}
	pl, err := r.Place(100, 30, 1, Double)
	if err != nil {
		t.Fatal(err)
	}
	if want := (Bound{Kind: BoundCompute, Roof: "dgemm", GFlops: 60}); pl.Bound != want || pl.AttainableGFlops != 60 {
		t.Errorf("Place = %+v at %v, want %+v at 60", pl.Bound, pl.AttainableGFlops, want)
	}
}

func TestPrecisionIsTheOnlyPrecisionWithWork(t *testing.T) {
	tests := []struct {
		by   map[string]float64
		want string
	}{
		{nil, ""},
		{map[string]float64{Double: 5}, Double},
		{map[string]float64{Double: 5, Single: 0}, Double},
		{map[string]float64{Double: 5, Single: 1}, ""},
		{map[string]float64{Mixed: 5}, ""},
	}
	for _, tt := range tests {
		p := &Point{WorkByPrecision: tt.by}
		if got := p.Precision(); got != tt.want {
			t.Errorf("Precision(%v) = %q, want %q", tt.by, got, tt.want)
		}
	}
}

func TestAboveRoofAllowsForBothIntervals(t *testing.T) {
	r := readFixtureRoofs(t, "roofs_zen5_vm.json")
	// DRAM roof 45.6 GB/s [44.9, 46.3]; at 1 FLOP/byte the compute peak
	// does not bind, so the roof is 45.6 GFLOP/s, up to 46.3.
	tests := []struct {
		name   string
		gflops float64
		ci     *Interval
		above  bool
	}{
		{"below", 40, &Interval{Lo: 39, Hi: 41}, false},
		{"above the estimate, within the roof's interval", 46, &Interval{Lo: 45.8, Hi: 46.2}, false},
		{"interval reaches down to the roof", 47, &Interval{Lo: 46, Hi: 48}, false},
		{"whole interval above the roof", 48, &Interval{Lo: 47, Hi: 49}, true},
		{"no interval, above", 46.5, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			intensity, g := 1.0, tt.gflops
			p := &Point{Intensity: &intensity, GFlops: &g, CI: Uncertainty{GFlops: tt.ci}}
			pl, err := r.PlacePoint(p, 1)
			if err != nil {
				t.Fatal(err)
			}
			if got := pl.AboveRoof(p); got != tt.above {
				t.Errorf("AboveRoof = %v, want %v (placement %+v)", got, tt.above, pl)
			}
		})
	}
}

func TestPlacePointNeedsIntensityAndRate(t *testing.T) {
	r := readFixtureRoofs(t, "roofs_zen5_vm.json")
	g := 10.0
	if _, err := r.PlacePoint(&Point{GFlops: &g}, 1); err == nil {
		t.Error("PlacePoint without intensity succeeded")
	}
}

func TestReadersRejectOtherSchemas(t *testing.T) {
	dir := t.TempDir()
	roofs := filepath.Join(dir, "roofs.json")
	point := filepath.Join(dir, "point.json")
	if err := writeDoc(roofs, Roofs{Schema: RoofsSchema}); err != nil {
		t.Fatal(err)
	}
	if err := writeDoc(point, Point{Schema: "rprof.point/v0"}); err != nil {
		t.Fatal(err)
	}
	if _, err := readPoints(roofs); !errors.Is(err, ErrSchema) {
		t.Errorf("readPoints(roofs document) = %v, want ErrSchema", err)
	}
	if _, err := readPoints(point); !errors.Is(err, ErrSchema) {
		t.Errorf("readPoints(v0 point) = %v, want ErrSchema", err)
	}
	if _, err := readRoofs(point); !errors.Is(err, ErrSchema) {
		t.Errorf("readRoofs(point) = %v, want ErrSchema", err)
	}
	if _, err := readRoofs(roofs); err != nil {
		t.Errorf("readRoofs(roofs) = %v", err)
	}
}

func TestPlaceRecordsTheBindingRoofsNameAndValue(t *testing.T) {
	r := &Roofs{
		Compute:   []ComputeRoof{{Name: "avx2-fma-fp64", Precision: Double, Threads: 1, GFlops: 50}},
		Bandwidth: []BandwidthRoof{{Level: "DRAM", Threads: 1, GBytesPerS: 10}},
	}
	tests := []struct {
		intensity float64
		want      Bound
		value     float64
		unit      string
	}{
		{1, Bound{Kind: BoundMemory, Roof: "DRAM", GBytesPerS: 10}, 10, "GB/s"},
		{100, Bound{Kind: BoundCompute, Roof: "avx2-fma-fp64", GFlops: 50}, 50, "GFLOP/s"},
	}
	for _, tt := range tests {
		pl, err := r.Place(tt.intensity, 1, 1, Double)
		if err != nil {
			t.Fatal(err)
		}
		v, unit := pl.Bound.Value()
		if pl.Bound != tt.want || v != tt.value || unit != tt.unit {
			t.Errorf("at %g FLOP/B: bound %+v, value %g %s; want %+v, %g %s", tt.intensity, pl.Bound, v, unit, tt.want, tt.value, tt.unit)
		}
	}
}

func TestThreadScopeIsOneRuleForEveryCommand(t *testing.T) {
	scopes := []int{4, 1, 2}
	tests := []struct {
		name                 string
		scopes               []int
		want, recorded, cpus int
		parallelism          float64
		got                  int
		rule                 string
	}{
		{"asked for wins", scopes, 4, 2, 1, 1.0, 4, ScopeRuleAsked},
		{"asked for, even when not measured", scopes, 3, 0, 0, 0, 3, ScopeRuleAsked},
		{"the point's recorded scope", scopes, 0, 1, 4, 3.9, 1, ScopeRuleRecorded},
		{"a recorded scope these roofs lack is ignored", scopes, 0, 3, 2, 0, 2, ScopeRuleCPUs},
		// A single-threaded program reads about 1, two busy processes
		// about 2 (cmd/rprof's TestRunPlacesRealProgramsUnderTheRoofsOf
		// TheirParallelism runs both).
		{"a single-threaded program: 1 thread", scopes, 0, 0, 2, 1.00, 1, ScopeRuleParallelism},
		{"a runtime's helper threads stay within the slack", scopes, 0, 0, 2, 1.24, 1, ScopeRuleParallelism},
		{"a second busy thread", scopes, 0, 0, 2, 1.98, 2, ScopeRuleParallelism},
		{"a quarter CPU over one thread is a second", scopes, 0, 0, 2, 1.26, 2, ScopeRuleParallelism},
		{"mostly waiting: 1 thread", scopes, 0, 0, 2, 0.05, 1, ScopeRuleParallelism},
		{"3 threads go under the 4-thread roofs", scopes, 0, 0, 64, 2.9, 4, ScopeRuleParallelism},
		{"more threads than any scope: the largest", scopes, 0, 0, 64, 11.5, 4, ScopeRuleParallelism},
		{"the largest scope not above the CPUs", scopes, 0, 0, 3, 0, 2, ScopeRuleCPUs},
		{"all CPUs", scopes, 0, 0, 64, 0, 4, ScopeRuleCPUs},
		{"one CPU", scopes, 0, 0, 1, 0, 1, ScopeRuleCPUs},
		{"CPUs unknown: the smallest", scopes, 0, 0, 0, 0, 1, ScopeRuleSmallest},
		{"no roofs: the recorded scope", nil, 0, 2, 4, 1, 2, ScopeRuleRecorded},
		{"no roofs, nothing known", nil, 0, 0, 4, 1, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := ScopeInputs{Scopes: tt.scopes, Want: tt.want, Recorded: tt.recorded, Parallelism: tt.parallelism, CPUs: tt.cpus}
			if got := ThreadScope(in); got.Threads != tt.got || got.Rule != tt.rule {
				t.Errorf("ThreadScope(%+v) = %+v, want %d by %q", in, got, tt.got, tt.rule)
			}
		})
	}
}

func TestUsedThreadsRoundsUpPastTheSlack(t *testing.T) {
	for _, tt := range []struct {
		parallelism float64
		want        int
	}{{0, 1}, {0.5, 1}, {1, 1}, {1.25, 1}, {1.2501, 2}, {2, 2}, {2.25, 2}, {2.3, 3}, {7.9, 8}} {
		if got := UsedThreads(tt.parallelism); got != tt.want {
			t.Errorf("UsedThreads(%g) = %d, want %d", tt.parallelism, got, tt.want)
		}
	}
}

func TestReadPointsUpgradesVersion1(t *testing.T) {
	tests := []struct {
		file string
		want *Bound
	}{
		{"point_triad.json", &Bound{Kind: BoundMemory, Roof: "DRAM"}},
		{"point_dgemm.json", &Bound{Kind: BoundCompute, Roof: "avx512-fma-fp64"}},
		{"point_no_traffic.json", nil},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			ps, err := readPoints(filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			p := ps[0]
			if p.Schema != PointSchema {
				t.Errorf("schema %q, want %q", p.Schema, PointSchema)
			}
			if (p.Bound == nil) != (tt.want == nil) {
				t.Fatalf("bound %+v, want %+v", p.Bound, tt.want)
			}
			if tt.want == nil {
				return
			}
			if p.Bound.Kind != tt.want.Kind || p.Bound.Roof != tt.want.Roof {
				t.Errorf("bound %+v, want kind %s roof %s", p.Bound, tt.want.Kind, tt.want.Roof)
			}
			// Version 1 did not record the roof's value; it follows from
			// the attainable performance.
			v, _ := p.Bound.Value()
			want := *p.AttainableGFlops
			if p.Bound.Memory() {
				want /= *p.Intensity
			}
			if math.Abs(v/want-1) > 1e-12 {
				t.Errorf("roof value %g, want %g", v, want)
			}
		})
	}
}

func TestReadPointsReadsWhatEncodeWrote(t *testing.T) {
	in := Point{Schema: PointSchema, Label: "x", Seconds: 1, Bound: &Bound{Kind: BoundMemory, Roof: "L3", GBytesPerS: 80},
		Flags: []Flag{{Code: FlagMultiplexed, Subject: EventSubject("cycles"), Message: "m"}}}
	path := filepath.Join(t.TempDir(), "p.json")
	if err := writeDoc(path, in); err != nil {
		t.Fatal(err)
	}
	ps, err := readPoints(path)
	if err != nil {
		t.Fatal(err)
	}
	if *ps[0].Bound != *in.Bound || ps[0].Flags[0] != in.Flags[0] {
		t.Errorf("read %+v %+v, wrote %+v %+v", ps[0].Bound, ps[0].Flags, in.Bound, in.Flags)
	}
	if ev, ok := ps[0].Flags[0].Event(); !ok || ev != "cycles" {
		t.Errorf("Event() = %q, %v; want cycles", ev, ok)
	}
}

func TestReadPointsReadsOnePointOrASet(t *testing.T) {
	one, err := readPoints(filepath.Join("testdata", "point_triad.json"))
	if err != nil || len(one) != 1 {
		t.Fatalf("readPoints(point) = %d points, %v; want 1", len(one), err)
	}
	set, err := readPoints(filepath.Join("testdata", "points_set.json"))
	if err != nil || len(set) < 2 {
		t.Fatalf("readPoints(set) = %d points, %v; want several", len(set), err)
	}
}

func TestPeakComputeLeavesLibraryRoofsOut(t *testing.T) {
	r := Roofs{Compute: []ComputeRoof{
		{Name: "avx512-fma-fp32", ISA: "avx512", Precision: Single, Threads: 1, GFlops: 219},
		// A library ceiling measured above the kernels (noise, or a clock
		// that rose) is still not the machine's peak.
		{Name: "onednn-ip brgemm:avx512_core fp32", Kind: ComputeKindLibrary, Precision: Single, Threads: 1, GFlops: 225},
		{Name: "onednn-conv3x3-nChw16c jit:avx512_core fp32", Kind: ComputeKindLibrary, Precision: Single, Threads: 2, GFlops: 380},
	}}
	if c, ok := r.PeakCompute(1, Single); !ok || c.Name != "avx512-fma-fp32" {
		t.Errorf("1-thread fp32 peak = %+v, %v; want the FMA kernel", c, ok)
	}
	if c, ok := r.PeakCompute(2, ""); ok {
		t.Errorf("2-thread peak = %+v from library roofs alone; want none", c)
	}
}

func TestMicroarchWordsSayWhenTheFeaturesNamedIt(t *testing.T) {
	for _, tt := range []struct {
		cpu  CPU
		want string
	}{
		{CPU{}, "-"},
		{CPU{Microarch: "amdzen5", MicroarchSource: "model"}, "amdzen5"},
		{CPU{Microarch: "amdzen4"}, "amdzen4"}, // a document before the source was recorded
		{CPU{Microarch: "sapphirerapids", MicroarchSource: MicroarchFromFeatures}, "sapphirerapids from its features"},
	} {
		if got := tt.cpu.MicroarchWords(); got != tt.want {
			t.Errorf("%+v: %q, want %q", tt.cpu, got, tt.want)
		}
	}
}
