package roofs

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/rprof/rprof/machine"
	"github.com/rprof/rprof/roofline"
)

// growthCase is a fake machine for the sweep's growth, and what the
// sweep must make of it.
type growthCase struct {
	name    string
	known   knownCaches
	steps   []step
	noise   func(int64) float64
	limit   int64
	perOct  int
	wantTop [2]int64 // the largest size placed lies in [lo, hi]
	settled bool
	capped  bool
	wantL3  [2]int64 // the effective L3 lies in [lo, hi]
	l3From  string
	flags   []string
	dram    bool
}

// noisyBelow disturbs DRAM sizes under 600 MiB.
func noisyBelow(ws int64) float64 {
	if ws > 64*mib && ws < 600*mib && (ws/growthQuantum)%2 == 0 {
		return 0.7
	}
	return 1
}

// alwaysNoisy disturbs every other DRAM size.
func alwaysNoisy(ws int64) float64 {
	if ws > 64*mib && (ws/growthQuantum)%2 == 0 {
		return 0.7
	}
	return 1
}

// alternating disturbs every other half-octave past 64 MiB.
func alternating(ws int64) float64 {
	if ws > 64*mib && int(math.Round(2*math.Log2(float64(ws))))%2 == 1 {
		return 0.7
	}
	return 1
}

const growthQuantum = 64 * 24

// TestSweepGrowsUntilDRAMIsEstablishedWithinTheMemoryLimit runs the
// sweep's growth over fake machines: the declared sizes are hints, the
// measured edges decide, DRAM's plateau ends the sweep, and the memory
// limit is never passed.
func TestSweepGrowsUntilDRAMIsEstablishedWithinTheMemoryLimit(t *testing.T) {
	declared := func(l3 int64) knownCaches {
		return knownCaches{Levels: []cacheLevel{{"L1", 48 * kib}, {"L2", 2 * mib}, {"L3", l3}}, Source: roofline.CacheSourceSysfs, Complete: true}
	}
	real := []step{{48 * kib, 400}, {2 * mib, 200}, {32 * mib, 100}}
	tests := []growthCase{
		{name: "a host declaring its sizes right stops at the DRAM floor", known: declared(32 * mib), steps: real, limit: 6 << 30, perOct: 2,
			wantTop: [2]int64{500 * mib, 512 * mib}, settled: true, wantL3: [2]int64{32 * mib, 32 * mib}, l3From: roofline.CacheSourceSysfs, dram: true},
		{name: "a fake 480 MiB L3 is measured where bandwidth falls", known: declared(480 * mib), steps: []step{{48 * kib, 400}, {2 * mib, 200}, {128 * mib, 100}}, limit: 6 << 30, perOct: 2,
			wantTop: [2]int64{900 * mib, 1 << 30}, settled: true, wantL3: [2]int64{96 * mib, 192 * mib}, l3From: roofline.CacheSourceMeasured,
			flags: []string{roofline.FlagCacheMismatch}, dram: true},
		{name: "--quick: one size per octave", known: declared(480 * mib), steps: []step{{48 * kib, 400}, {2 * mib, 200}, {128 * mib, 100}}, limit: 6 << 30, perOct: 1,
			wantTop: [2]int64{900 * mib, 1 << 30}, settled: true, wantL3: [2]int64{96 * mib, 256 * mib}, l3From: roofline.CacheSourceMeasured,
			flags: []string{roofline.FlagCacheMismatch}, dram: true},
		{name: "a disturbed DRAM grows the sweep until its sizes agree", known: declared(32 * mib), steps: real, noise: noisyBelow, limit: 6 << 30, perOct: 2,
			wantTop: [2]int64{700 * mib, 1 << 30}, settled: true, wantL3: [2]int64{32 * mib, 32 * mib}, l3From: roofline.CacheSourceSysfs, dram: true},
		{name: "a DRAM that never settles stops growing at twice the DRAM floor", known: declared(32 * mib), steps: real, noise: alwaysNoisy, limit: 6 << 30, perOct: 2,
			wantTop: [2]int64{1000 * mib, 1 << 30}, wantL3: [2]int64{32 * mib, 32 * mib}, l3From: roofline.CacheSourceSysfs, dram: true},
		{name: "a fake 480 MiB L3 and a DRAM that never settles: the growth stops at twice DRAM's window, not an octave past it", known: declared(480 * mib),
			steps: []step{{48 * kib, 400}, {2 * mib, 200}, {128 * mib, 100}}, noise: alternating, limit: 6 << 30, perOct: 2,
			wantTop: [2]int64{1 << 30, 1300 * mib}, wantL3: [2]int64{96 * mib, 192 * mib}, l3From: roofline.CacheSourceMeasured,
			flags: []string{roofline.FlagCacheMismatch}, dram: true},
		{name: "MemAvailable below the declared L3: the sweep stays within a quarter and DRAM is not reached", known: declared(480 * mib), steps: real, limit: 256 * mib, perOct: 2,
			wantTop: [2]int64{250 * mib, 256 * mib}, capped: true, wantL3: [2]int64{16 * mib, 64 * mib}, l3From: roofline.CacheSourceMeasured,
			flags: []string{roofline.FlagCacheMismatch, roofline.FlagMemoryLimit, roofline.FlagDRAMNotReached}},
		{name: "no sizes declared: every level measured", known: knownCaches{}, steps: real, limit: 6 << 30, perOct: 2,
			wantTop: [2]int64{500 * mib, 1 << 30}, settled: true, wantL3: [2]int64{24 * mib, 48 * mib}, l3From: roofline.CacheSourceMeasured, dram: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkGrowth(t, tt) })
	}
}

// checkGrowth grows a sweep over tt's fake machine and checks what it
// placed, where it stopped, its L3, its flags and its DRAM ceiling.
func checkGrowth(t *testing.T, tt growthCase) {
	t.Helper()
	var placed int64
	extend := func(_ context.Context, sizes []int64) ([]sweepPoint, error) {
		placed = max(placed, sizes[len(sizes)-1])
		pts := syntheticAt(sizes, tt.steps, 25, nil)
		for i := range pts {
			if tt.noise != nil {
				f := tt.noise(pts[i].WorkingSetBytes)
				pts[i].GBytesPerS *= f
				pts[i].CI.Lo *= f
				pts[i].CI.Hi *= f
			}
		}
		return pts, nil
	}
	lo, hi, err := sweepSpan(tt.known, 1)
	if err != nil {
		t.Fatal(err)
	}
	limit := memoryLimit{Bytes: tt.limit, From: "a quarter of MemAvailable"}
	g, err := growSweep(context.Background(), extend, growthQuantum, tt.known, lo, hi, tt.perOct, limit)
	if err != nil {
		t.Fatal(err)
	}
	if placed > tt.limit || placed < tt.wantTop[0] || placed > tt.wantTop[1] {
		t.Errorf("placed up to %d MiB, want %d to %d MiB and at most the limit %d MiB", placed>>20, tt.wantTop[0]>>20, tt.wantTop[1]>>20, tt.limit>>20)
	}
	if g.settled != tt.settled || g.capped != tt.capped {
		t.Errorf("settled %v, capped %v; want %v, %v", g.settled, g.capped, tt.settled, tt.capped)
	}
	checkGrowthL3(t, g, tt)
	var codes []string
	for _, f := range append(g.flags, limitFlags(g, limit, hi, placed)...) {
		if f.Code != roofline.FlagNoPlateau && f.Code != roofline.FlagNoisyPlateau && !slices.Contains(codes, f.Code) {
			codes = append(codes, f.Code)
		}
	}
	slices.Sort(codes)
	want := slices.Sorted(slices.Values(tt.flags))
	if !slices.Equal(codes, want) {
		t.Errorf("flags %v, want %v (all: %+v)", codes, want, g.flags)
	}
	if hasDRAM := slices.ContainsFunc(g.plateaus, func(p plateau) bool { return p.Level == roofline.LevelDRAM }); hasDRAM != tt.dram && !(tt.capped && !tt.settled) {
		t.Errorf("DRAM ceiling %v, want %v", hasDRAM, tt.dram)
	}
}

// checkGrowthL3 checks the effective L3 size a growth found, and that the
// declared one is kept beside it.
func checkGrowthL3(t *testing.T, g sweepGrowth, tt growthCase) {
	t.Helper()
	i := slices.IndexFunc(g.levels, func(l levelSize) bool { return l.Name == "L3" })
	if i < 0 {
		t.Fatalf("no L3 size in %+v", g.levels)
	}
	l3 := g.levels[i]
	if l3.Bytes < tt.wantL3[0] || l3.Bytes > tt.wantL3[1] || l3.Source != tt.l3From {
		t.Errorf("L3 %+v, want %s between %d and %d MiB", l3, tt.l3From, tt.wantL3[0]>>20, tt.wantL3[1]>>20)
	}
	if len(tt.known.Levels) == 3 && l3.DeclaredBytes != tt.known.Levels[2].Bytes {
		t.Errorf("L3 declared %d, want the host's %d beside the effective size", l3.DeclaredBytes, tt.known.Levels[2].Bytes)
	}
}

func TestSizesUpToNeverPassTheTop(t *testing.T) {
	got, err := sizesUpTo(64, 1000, 1, 64)
	if err != nil {
		t.Fatal(err)
	}
	if want := []int64{64, 128, 256, 512, 960}; !slices.Equal(got, want) {
		t.Errorf("sizesUpTo(64, 1000) = %v, want %v", got, want)
	}
}

func TestDRAMSettlesOnSeveralAgreeingSizesPastTheLastEdge(t *testing.T) {
	l3 := []levelSize{{Name: "L3", Bytes: 32 * mib, EdgeLo: 32 * mib, EdgeHi: 45 * mib}}
	pt := func(ws int64, g, halfWidth float64) sweepPoint {
		return sweepPoint{WorkingSetBytes: ws, GBytesPerS: g, CI: roofline.Interval{Lo: g - halfWidth, Hi: g + halfWidth}}
	}
	tests := []struct {
		name   string
		points []sweepPoint
		sizes  []levelSize
		want   bool
	}{
		{"three agreeing sizes past the edge", []sweepPoint{pt(64*mib, 40, 1), pt(256*mib, 41, 1), pt(512*mib, 40.5, 1)}, l3, true},
		{"within each other's intervals though 20% apart", []sweepPoint{pt(64*mib, 40, 5), pt(256*mib, 48, 5), pt(512*mib, 44, 5)}, l3, true},
		{"one disturbed size", []sweepPoint{pt(64*mib, 40, 1), pt(256*mib, 28, 1), pt(512*mib, 40, 1)}, l3, false},
		{"too few past the edge", []sweepPoint{pt(40*mib, 40, 1), pt(256*mib, 40, 1), pt(512*mib, 40, 1)}, l3, false},
		{"short of the DRAM floor", []sweepPoint{pt(64*mib, 40, 1), pt(128*mib, 40, 1), pt(256*mib, 40, 1)}, l3, false},
		{"short of four times a large last level", []sweepPoint{pt(600*mib, 40, 1), pt(800*mib, 40, 1), pt(1024*mib, 40, 1)},
			[]levelSize{{Name: "L3", Bytes: 480 * mib}}, false},
		{"no levels: the last sizes alone", []sweepPoint{pt(256*mib, 40, 1), pt(362*mib, 40, 1), pt(512*mib, 40, 1)}, nil, true},
		{"no points", nil, l3, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := dramSettled(tt.points, tt.sizes, 2); got != tt.want {
				t.Errorf("dramSettled = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestSweepMemoryLimitIsAQuarterOfMemAvailableOrLessIfAsked(t *testing.T) {
	meminfo := func(kb string) fstest.MapFS {
		return fstest.MapFS{"meminfo": {Data: []byte("MemTotal: 33554432 kB\nMemAvailable: " + kb + " kB\n")}}
	}
	tests := []struct {
		name     string
		procfs   fstest.MapFS
		max      int64
		want     int64
		fromWant string
	}{
		{"a quarter of MemAvailable", meminfo("8388608"), 0, 2 << 30, "a quarter of MemAvailable (8 GiB)"},
		{"a lower limit asked for", meminfo("8388608"), 64 << 20, 64 << 20, "the limit asked for (64 MiB)"},
		{"a higher limit asked for is not granted", meminfo("1048576"), 4 << 30, 256 << 20, "a quarter of MemAvailable (1 GiB)"},
		{"MemAvailable unknown", fstest.MapFS{}, 0, defaultMemoryLimit, "MemAvailable being unknown"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := sweepMemoryLimit(Options{Host: machine.TreeHost(nil, tt.procfs), MaxMemory: tt.max})
			if got.Bytes != tt.want || !strings.Contains(got.From, tt.fromWant) {
				t.Errorf("limit %+v, want %d bytes from %q", got, tt.want, tt.fromWant)
			}
		})
	}
}
