package roofs

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rprof/rprof/internal/testutil"
	"github.com/rprof/rprof/machine"
	"github.com/rprof/rprof/roofline"

	"github.com/rprof/rprof/internal/unit"
)

const (
	kib = int64(1) << 10
	mib = int64(1) << 20
)

// step is a level of a synthetic machine: bandwidth gbps up to bytes.
type step struct {
	bytes int64
	gbps  float64
}

// synthetic sweeps 4 KiB to 512 MiB, 3 points per octave, over a machine
// whose bandwidth falls in steps; tweak adjusts single points.
func synthetic(steps []step, dram float64, tweak map[int64]float64) []sweepPoint {
	sizes, _ := sweepSizes(4*kib, 512*mib, 3, 64)
	return syntheticAt(sizes, steps, dram, tweak)
}

func syntheticAt(sizes []int64, steps []step, dram float64, tweak map[int64]float64) []sweepPoint {
	var pts []sweepPoint
	for _, ws := range sizes {
		g := dram
		for _, s := range steps {
			if ws <= s.bytes {
				g = s.gbps
				break
			}
		}
		if f, ok := tweak[ws]; ok {
			g *= f
		}
		pts = append(pts, sweepPoint{WorkingSetBytes: ws, GBytesPerS: g, CI: roofline.Interval{Lo: g * 0.99, Hi: g * 1.01}})
	}
	return pts
}

// coarse is a quick sweep: one size per octave, rounded to a triad block
// (64 elements of 24 bytes), so sizes land just past powers of two.
func coarse(steps []step, dram float64) []sweepPoint {
	sizes, _ := sweepSizes(4*kib, 512*mib, 1, 64*24)
	return syntheticAt(sizes, steps, dram, nil)
}

var threeLevels = []cacheLevel{{"L1", 32 * kib}, {"L2", 1 * mib}, {"L3", 32 * mib}}

// nthSize is the n-th synthetic sweep size at or above ws.
func nthSize(ws int64, n int) int64 {
	sizes, _ := sweepSizes(4*kib, 512*mib, 3, 64)
	i, _ := slices.BinarySearch(sizes, ws)
	return sizes[i+n]
}

func TestPlateaus(t *testing.T) {
	clean := []step{{32 * kib, 200}, {1 * mib, 100}, {32 * mib, 60}}
	tests := []struct {
		name      string
		points    []sweepPoint
		levels    []cacheLevel
		want      map[string]float64 // level -> GB/s
		wantFlags []string
	}{
		{
			name:   "clean three-level machine",
			points: synthetic(clean, 25, nil),
			levels: threeLevels,
			want:   map[string]float64{"L1": 200, "L2": 100, "L3": 60, "DRAM": 25},
		},
		{
			name:   "levels given in any order",
			points: synthetic(clean, 25, nil),
			levels: []cacheLevel{{"L3", 32 * mib}, {"L1", 32 * kib}, {"L2", 1 * mib}},
			want:   map[string]float64{"L1": 200, "L2": 100, "L3": 60, "DRAM": 25},
		},
		{
			name:   "no L3: DRAM read from 4x the L2",
			points: synthetic([]step{{32 * kib, 200}, {1 * mib, 100}}, 25, nil),
			levels: threeLevels[:2],
			want:   map[string]float64{"L1": 200, "L2": 100, "DRAM": 25},
		},
		{
			name: "one slow point inside L2 is ignored but reported",
			points: synthetic(clean, 25, map[int64]float64{
				nthSize(128*kib, 0): 0.5,
			}),
			levels:    threeLevels,
			want:      map[string]float64{"L1": 200, "L2": 100, "L3": 60, "DRAM": 25},
			wantFlags: []string{roofline.FlagNoisyPlateau},
		},
		{
			name: "a single slow point inside L1 is not taken for its edge",
			points: synthetic(clean, 25, map[int64]float64{
				nthSize(4*kib, 2): 0.4,
			}),
			levels:    []cacheLevel{{"L1", 64 * kib}, {"L2", 1 * mib}, {"L3", 32 * mib}},
			want:      map[string]float64{"L1": 200, "L2": 100, "L3": 60, "DRAM": 25},
			wantFlags: []string{roofline.FlagNoisyPlateau},
		},
		{
			name:      "VM reporting an L2 8 times the real one",
			points:    synthetic(clean, 25, nil),
			levels:    []cacheLevel{{"L1", 32 * kib}, {"L2", 8 * mib}, {"L3", 64 * mib}},
			want:      map[string]float64{"L1": 200, "L2": 100, "L3": 60, "DRAM": 25},
			wantFlags: []string{roofline.FlagNoisyPlateau, roofline.FlagCacheMismatch},
		},
		{
			name:   "one size per octave places drops only to within a factor of 2",
			points: coarse(clean, 25),
			levels: threeLevels,
			want:   map[string]float64{"L1": 200, "L2": 100, "L3": 60, "DRAM": 25},
		},
		{
			name:      "VM hiding the L3: no step between L3 and DRAM",
			points:    synthetic([]step{{32 * kib, 200}, {1 * mib, 100}}, 25, nil),
			levels:    threeLevels,
			want:      map[string]float64{"L1": 200, "L2": 100, "L3": 25, "DRAM": 25},
			wantFlags: []string{roofline.FlagNoPlateau},
		},
		{
			name:      "sweep too short for DRAM",
			points:    synthetic(clean, 25, nil)[:30],
			levels:    threeLevels,
			want:      map[string]float64{"L1": 200, "L2": 100, "L3": 60},
			wantFlags: []string{roofline.FlagNoPlateau},
		},
		{
			name:      "levels too close for a window between them",
			points:    synthetic(clean, 25, nil),
			levels:    []cacheLevel{{"L1", 32 * kib}, {"L2", 48 * kib}, {"L3", 32 * mib}},
			want:      map[string]float64{"L1": 200, "L3": 100, "DRAM": 25},
			wantFlags: []string{roofline.FlagNoPlateau, roofline.FlagNoisyPlateau},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, flags, err := knownPlateaus(tt.points, tt.levels)
			if err != nil {
				t.Fatal(err)
			}
			gotMap := map[string]float64{}
			for _, p := range got {
				gotMap[p.Level] = p.GBytesPerS
				if p.Points == 0 || p.WorkingSetBytes <= 0 || !(p.CI.Lo <= p.GBytesPerS && p.GBytesPerS <= p.CI.Hi) {
					t.Errorf("%s: incomplete plateau %+v", p.Level, p)
				}
			}
			if fmt.Sprint(gotMap) != fmt.Sprint(tt.want) {
				t.Errorf("plateaus %v, want %v", gotMap, tt.want)
			}
			var codes []string
			for _, f := range flags {
				codes = append(codes, f.Code)
				if f.Message == "" {
					t.Errorf("flag %s has no message", f.Code)
				}
			}
			if !slices.Equal(codes, tt.wantFlags) {
				t.Errorf("flags %v, want %v: %v", codes, tt.wantFlags, flags)
			}
		})
	}
}

func TestPlateausCountPointsRoundedJustPastAWindowEdge(t *testing.T) {
	// One size per octave, rounded to 1.5 KiB blocks: 4.5, 7.5, 16.5 KiB,
	// ... The 16.5 KiB point is L1 for a 32 KiB L1; 511.99 MiB, the last
	// size, is DRAM (whose floor is dramMinBytes).
	pts := coarse([]step{{32 * kib, 200}, {1 * mib, 100}, {32 * mib, 60}}, 25)
	got, _, err := knownPlateaus(pts, threeLevels)
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Level != "L1" || got[0].Points != 3 {
		t.Errorf("L1 plateau %+v, want the 3 points up to 16.5 KiB", got[0])
	}
	if d := got[len(got)-1]; d.Level != "DRAM" || d.Points != 1 || d.WorkingSetBytes >= dramMinBytes {
		t.Errorf("DRAM plateau %+v, want the one size just under 512 MiB", d)
	}
}

func TestPlateausRejectsBadInput(t *testing.T) {
	good := synthetic([]step{{32 * kib, 200}}, 25, nil)
	tests := []struct {
		name   string
		points []sweepPoint
		levels []cacheLevel
		want   string
	}{
		{"empty sweep", nil, threeLevels, "empty sweep"},
		{"no cache sizes", good, nil, "no cache sizes"},
		{"zero-sized level", good, []cacheLevel{{"L2", 0}}, "L2"},
		{"zero bandwidth", append(slices.Clone(good), sweepPoint{WorkingSetBytes: 4096}), threeLevels, "not a measurement"},
		{"NaN bandwidth", append(slices.Clone(good), sweepPoint{WorkingSetBytes: 4096, GBytesPerS: math.NaN()}), threeLevels, "not a measurement"},
		{"infinite bandwidth", append(slices.Clone(good), sweepPoint{WorkingSetBytes: 4096, GBytesPerS: math.Inf(1)}), threeLevels, "not a measurement"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := knownPlateaus(tt.points, tt.levels)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestScopeCachesSumsPrivateAndCountsSharedOnce(t *testing.T) {
	// Two cores without SMT, as sysfs shows this VM: private L1D, L1I and L2,
	// one L3 shared by both.
	caches := []machine.Cache{
		{Level: 1, Type: "Data", SizeBytes: 32 * kib, SharedCPUs: []int{0}},
		{Level: 1, Type: "Instruction", SizeBytes: 32 * kib, SharedCPUs: []int{0}},
		{Level: 1, Type: "Data", SizeBytes: 32 * kib, SharedCPUs: []int{1}},
		{Level: 1, Type: "Instruction", SizeBytes: 32 * kib, SharedCPUs: []int{1}},
		{Level: 2, Type: "Unified", SizeBytes: 1 * mib, SharedCPUs: []int{0}},
		{Level: 2, Type: "Unified", SizeBytes: 1 * mib, SharedCPUs: []int{1}},
		{Level: 3, Type: "Unified", SizeBytes: 32 * mib, SharedCPUs: []int{0, 1}},
		{Level: 4, Type: "Unified", SizeBytes: 0, SharedCPUs: []int{0, 1}}, // no size: ignored
	}
	tests := []struct {
		cpus []int
		want []cacheLevel
	}{
		{[]int{0}, []cacheLevel{{"L1", 32 * kib}, {"L2", 1 * mib}, {"L3", 32 * mib}}},
		{[]int{1}, []cacheLevel{{"L1", 32 * kib}, {"L2", 1 * mib}, {"L3", 32 * mib}}},
		{[]int{0, 1}, []cacheLevel{{"L1", 64 * kib}, {"L2", 2 * mib}, {"L3", 32 * mib}}},
		{[]int{7}, nil},
	}
	for _, tt := range tests {
		if got := scopeCaches(caches, tt.cpus); !slices.Equal(got, tt.want) {
			t.Errorf("cpus %v: %v, want %v", tt.cpus, got, tt.want)
		}
	}
}

// TestPlateausOfRecordedSweeps reads the ceilings from sweeps recorded on
// real machines (see TestRecordSweep) and compares them, with the warnings,
// with golden files.
func TestPlateausOfRecordedSweeps(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "sweep", "*.json"))
	if len(files) == 0 {
		t.Fatal("no recorded sweeps under testdata/sweep")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var rec recordedSweep
			if err := json.Unmarshal(b, &rec); err != nil {
				t.Fatal(err)
			}
			// A sweep recorded without cache sizes (no sysfs cache tree)
			// finds its levels from its steps.
			known := knownCaches{Levels: rec.Levels, Source: roofline.CacheSourceSysfs, Complete: len(rec.Levels) > 0}
			got, sizes, flags, err := ceilings(rec.Points, known)
			if err != nil {
				t.Fatal(err)
			}
			// A real sweep must at least find every cache level it was
			// recorded with (three where none were), plus DRAM, and find
			// DRAM slowest.
			if want := max(len(rec.Levels), 3) + 1; len(got) != want {
				t.Errorf("found %d levels, want %d", len(got), want)
			}
			for _, p := range got[:len(got)-1] {
				if p.GBytesPerS <= got[len(got)-1].GBytesPerS {
					t.Errorf("%s (%.3g GB/s) not faster than DRAM (%.3g GB/s)", p.Level, p.GBytesPerS, got[len(got)-1].GBytesPerS)
				}
			}
			var out strings.Builder
			fmt.Fprintf(&out, "%s %s on cpus %v, %s\n", rec.ISA, rec.Kernel, rec.CPUs, rec.Machine)
			for _, p := range got {
				fmt.Fprintf(&out, "%-4s %8.2f GB/s  [%.2f, %.2f]  at %s  (%d points inside)\n",
					p.Level, p.GBytesPerS, p.CI.Lo, p.CI.Hi, unit.Bytes(p.WorkingSetBytes), p.Points)
			}
			for _, l := range sizes {
				fmt.Fprintf(&out, "size %s %s %s", l.Name, unit.Bytes(l.Bytes), l.Source)
				if l.DeclaredSource != "" {
					fmt.Fprintf(&out, " (declared %s %s)", unit.Bytes(l.DeclaredBytes), l.DeclaredSource)
				}
				if l.EdgeLo > 0 {
					fmt.Fprintf(&out, ": bandwidth falls between %s and %s", unit.Bytes(l.EdgeLo), unit.Bytes(l.EdgeHi))
				}
				fmt.Fprintln(&out)
			}
			for _, f := range flags {
				fmt.Fprintf(&out, "warning %s: %s\n", f.Code, f.Message)
			}
			testutil.Golden(t, strings.TrimSuffix(f, ".json")+".golden", []byte(out.String()))
		})
	}
}
