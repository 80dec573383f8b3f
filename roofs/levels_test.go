package roofs

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/rprof/rprof/roofline"

	"github.com/rprof/rprof/internal/unit"
)

func readRecorded(t *testing.T, name string) recordedSweep {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "sweep", name))
	if err != nil {
		t.Fatal(err)
	}
	var rec recordedSweep
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	return rec
}

// thin keeps every n-th point and all DRAM-sized ones: the sweeps of the
// default run (2 sizes per octave) and --quick (1) from a recorded one of
// 3 per octave.
func thin(points []sweepPoint, n int) []sweepPoint {
	var out []sweepPoint
	for i, p := range points {
		if i%n == 0 || p.WorkingSetBytes >= dramMinBytes {
			out = append(out, p)
		}
	}
	return out
}

func levelNames(ps []plateau) []string {
	var names []string
	for _, p := range ps {
		names = append(names, p.Level)
	}
	return names
}

// TestCeilingsFindTheLevelsOfAHostWithoutCacheSizes reads the sweeps of
// the Zen 5 guest that has no sysfs cache tree and no trustworthy CPUID
// L3: the levels and their sizes come from the sweep alone, at every sweep
// density rprof uses.
func TestCeilingsFindTheLevelsOfAHostWithoutCacheSizes(t *testing.T) {
	for _, name := range []string{"zen5-vm-nocache-envelope-1t.json", "zen5-vm-nocache-envelope-2t.json"} {
		rec := readRecorded(t, name)
		threads := int64(len(rec.CPUs))
		for _, every := range []int{1, 2, 3} {
			got, sizes, _, err := ceilings(thin(rec.Points, every), knownCaches{})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(levelNames(got), []string{"L1", "L2", "L3", "DRAM"}) {
				t.Fatalf("%s, every %d: levels %v, want L1 to DRAM", name, every, levelNames(got))
			}
			for i := 1; i < len(got); i++ {
				if got[i].GBytesPerS >= got[i-1].GBytesPerS {
					t.Errorf("%s, every %d: %s (%.0f GB/s) not slower than %s (%.0f)", name, every, got[i].Level, got[i].GBytesPerS, got[i-1].Level, got[i-1].GBytesPerS)
				}
			}
			// CPUID says 48 KiB L1D and 1 MiB L2 per core; the guest's L3
			// ends past 32 MiB.
			for _, want := range []struct {
				level  string
				lo, hi int64
			}{{"L1", 32 * kib, 96 * kib}, {"L2", 512 * kib, 3 * mib}, {"L3", 32 * mib, 512 * mib}} {
				i := slices.IndexFunc(sizes, func(l levelSize) bool { return l.Name == want.level })
				if i < 0 {
					t.Fatalf("%s, every %d: no size for %s", name, every, want.level)
				}
				l := sizes[i]
				per := l.Bytes / threads
				if want.level == "L3" {
					per = l.Bytes
				}
				if l.Source != roofline.CacheSourceMeasured || per < want.lo || per > want.hi || !(l.EdgeLo < l.Bytes && l.Bytes < l.EdgeHi) {
					t.Errorf("%s, every %d: %s size %+v, want measured, %s to %s per thread", name, every, want.level, l, unit.Bytes(want.lo), unit.Bytes(want.hi))
				}
			}
		}
	}
}

// TestCeilingsPlaceKnownLevelsAndMeasureTheRest gives the Zen 4 guest's
// sweeps only L1 and L2, as a CPUID whose L3 was rejected would: L3 is
// found past the L2 and its edge lies near the 32 MiB sysfs reported.
func TestCeilingsPlaceKnownLevelsAndMeasureTheRest(t *testing.T) {
	for _, name := range []string{"epyc-f25m17-vm-avx2-triad-1t.json", "epyc-f25m17-vm-avx2-load-1t.json", "epyc-f25m17-vm-avx2-triad-2t.json"} {
		rec := readRecorded(t, name)
		for _, every := range []int{1, 2, 3} {
			pts := thin(rec.Points, every)
			full, _, err := knownPlateaus(pts, rec.Levels)
			if err != nil {
				t.Fatal(err)
			}
			got, sizes, _, err := ceilings(pts, knownCaches{Levels: rec.Levels[:2], Source: roofline.CacheSourceCPUID})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(levelNames(got), []string{"L1", "L2", "L3", "DRAM"}) {
				t.Fatalf("%s, every %d: levels %v", name, every, levelNames(got))
			}
			for i := range got {
				if got[i].Level != "L3" && got[i] != full[i] {
					t.Errorf("%s, every %d: %s %+v, want %+v as with every size known", name, every, got[i].Level, got[i], full[i])
				}
			}
			if l3 := got[2].GBytesPerS / full[2].GBytesPerS; l3 < 0.95 || l3 > 1.05 {
				t.Errorf("%s, every %d: L3 %.1f GB/s, with its size known %.1f", name, every, got[2].GBytesPerS, full[2].GBytesPerS)
			}
			wantSources := []string{roofline.CacheSourceCPUID, roofline.CacheSourceCPUID, roofline.CacheSourceMeasured}
			var sources []string
			for _, l := range sizes {
				sources = append(sources, l.Source)
			}
			if !slices.Equal(sources, wantSources) || sizes[2].Bytes < 8*mib || sizes[2].Bytes > 64*mib {
				t.Errorf("%s, every %d: sizes %+v, want L1 and L2 from CPUID, L3 measured near 32 MiB", name, every, sizes)
			}
		}
	}
}

func TestCeilingsOfASweepWithoutStepsStillGiveTheMeasuredRoof(t *testing.T) {
	flat := synthetic(nil, 40, nil)
	got, sizes, flags, err := ceilings(flat, knownCaches{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Level != "DRAM" || got[0].GBytesPerS != 40 || len(sizes) != 0 {
		t.Errorf("got %+v, sizes %+v; want one DRAM ceiling of 40 GB/s and no cache sizes", got, sizes)
	}
	if len(flags) != 1 || flags[0].Code != roofline.FlagNoPlateau {
		t.Errorf("flags %+v, want one %s", flags, roofline.FlagNoPlateau)
	}
}

func TestCeilingsWithEverySizeKnownArePlateaus(t *testing.T) {
	pts := synthetic([]step{{32 * kib, 200}, {1 * mib, 100}, {32 * mib, 60}}, 25, nil)
	want, wantFlags, err := knownPlateaus(pts, threeLevels)
	if err != nil {
		t.Fatal(err)
	}
	got, sizes, flags, err := ceilings(pts, knownCaches{Levels: threeLevels, Source: roofline.CacheSourceSysfs, Complete: true})
	if err != nil || !slices.Equal(got, want) || !slices.Equal(flags, wantFlags) || len(sizes) != 3 || sizes[2].Source != roofline.CacheSourceSysfs {
		t.Errorf("ceilings = %v, %v, %v, %v; want knownPlateaus' %v, %v with sysfs sizes", got, sizes, flags, err, want, wantFlags)
	}
}

func TestCeilingsRejectBadPoints(t *testing.T) {
	if _, _, _, err := ceilings(nil, knownCaches{}); err == nil {
		t.Error("empty sweep accepted")
	}
	bad := append(synthetic(nil, 40, nil), sweepPoint{WorkingSetBytes: 4096})
	if _, _, _, err := ceilings(bad, knownCaches{}); err == nil {
		t.Error("a zero rate accepted")
	}
}

// TestCeilingsOfAHostDeclaringAFakeL3MeasureIt declares the Zen 4 guest's
// L3 sixteen times too large (as the Intel guest's 480 MiB): its edge is
// measured where bandwidth falls, and the ceilings are those read with
// the true size; declared rightly, the size stands and carries its edge.
func TestCeilingsOfAHostDeclaringAFakeL3MeasureIt(t *testing.T) {
	for _, name := range []string{"epyc-f25m17-vm-avx2-triad-1t.json", "epyc-f25m17-vm-avx2-triad-2t.json"} {
		rec := readRecorded(t, name)
		fake := slices.Clone(rec.Levels)
		fake[2].Bytes *= 16
		right, rightSizes, _, err := ceilings(rec.Points, knownCaches{Levels: rec.Levels, Source: roofline.CacheSourceSysfs, Complete: true})
		if err != nil {
			t.Fatal(err)
		}
		got, sizes, flags, err := ceilings(rec.Points, knownCaches{Levels: fake, Source: roofline.CacheSourceSysfs, Complete: true})
		if err != nil {
			t.Fatal(err)
		}
		l3 := sizes[2]
		if l3.Source != roofline.CacheSourceMeasured || l3.Bytes < rec.Levels[2].Bytes/2 || l3.Bytes > rec.Levels[2].Bytes*2 || l3.DeclaredBytes != fake[2].Bytes {
			t.Errorf("%s: L3 %+v, want measured near %s with the declared %s beside it", name, l3, unit.Bytes(rec.Levels[2].Bytes), unit.Bytes(fake[2].Bytes))
		}
		if !slices.ContainsFunc(flags, func(f roofline.Flag) bool { return f.Code == roofline.FlagCacheMismatch }) {
			t.Errorf("%s: flags %+v, want a %s naming both sizes", name, flags, roofline.FlagCacheMismatch)
		}
		if !slices.Equal(levelNames(got), levelNames(right)) || got[2].GBytesPerS != right[2].GBytesPerS || got[3].GBytesPerS != right[3].GBytesPerS {
			t.Errorf("%s: ceilings %+v, want those with the true size %+v", name, got, right)
		}
		if r := rightSizes[2]; r.Source != roofline.CacheSourceSysfs || r.Bytes != rec.Levels[2].Bytes || r.EdgeLo == 0 {
			t.Errorf("%s: declared rightly, L3 %+v: want the sysfs size with its edge", name, r)
		}
	}
}
