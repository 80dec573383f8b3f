package roofs

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/rprof/rprof/machine"
	"github.com/rprof/rprof/roofline"

	"github.com/rprof/rprof/internal/unit"
)

// cacheLevel is one data-cache level as the threads of a sweep see it.
type cacheLevel struct {
	Name string // "L1", "L2", "L3"
	// Bytes is the capacity the sweep's threads have together: the sum over
	// the cache instances serving them.
	Bytes int64
}

// scopeCaches returns the data and unified cache levels of caches (as sysfs
// lists them) seen by threads pinned to cpus, smallest first. A level's
// capacity sums the instances that serve at least one of cpus, so per-core
// L1D and L2 grow with the threads while an L3 shared by all counts once.
func scopeCaches(caches []machine.Cache, cpus []int) []cacheLevel {
	sum := map[int]int64{}
	for _, c := range caches {
		if c.Type == "Instruction" || c.SizeBytes <= 0 {
			continue
		}
		if slices.ContainsFunc(c.SharedCPUs, func(cpu int) bool { return slices.Contains(cpus, cpu) }) {
			sum[c.Level] += c.SizeBytes
		}
	}
	var levels []cacheLevel
	for _, l := range slices.Sorted(maps.Keys(sum)) {
		levels = append(levels, cacheLevel{Name: fmt.Sprintf("L%d", l), Bytes: sum[l]})
	}
	return levels
}

// plateau is the bandwidth ceiling of one memory level read from a sweep.
type plateau struct {
	Level      string // "L1", "L2", "L3", roofline.LevelDRAM
	GBytesPerS float64
	CI         roofline.Interval
	// WorkingSetBytes is the size of the sweep point the figure comes from.
	WorkingSetBytes int64
	// Points is how many sweep points lay well inside the level.
	Points int
}

const (
	// A level's ceiling comes from working sets at most half its capacity
	// and at least twice the previous level's, where neither conflict
	// misses nor leftovers of the smaller level blur it; DRAM from at least
	// 4 times the last cache and at least dramMinBytes.
	insideFactor = 2
	dramFactor   = 4
	// L1's ceiling comes from working sets up to three quarters of it.
	l1InsideNum, l1InsideDen = 3, 4
	// dramMinBytes is the smallest working set DRAM is read from,
	// whatever sysfs says of the caches: a VM's guest may be shown a
	// last-level cache smaller than the host's (one that still moves
	// cache rates at four times its size (docs/roofs.md)).
	dramMinBytes = 512 << 20
	// Sweep sizes are rounded to whole loop blocks, so a size aimed at a
	// window's edge can land a few percent outside; points this close
	// still count.
	windowSlack = 1.0625
	// Two levels whose ceilings differ by less than this are not told
	// apart.
	minStep = 1.05
	// A drop more than this factor from the sysfs capacity (either way) is
	// reported; in the recorded sweeps it lies at 0.6 to 1.3 times it.
	mismatchFactor = 2
	noisySpread    = 1.25
)

// knownPlateaus reads the ceiling of each cache level and of DRAM from a sweep.
// Each ceiling is the highest bandwidth among the points well inside the
// level: interference on a busy machine only slows a kernel down, so the
// best point is the least disturbed one (ERT keeps the maximum too). Unlike
// ERT's histogram of plateaus, levels are placed by the cache sizes given,
// and the sweep is checked against them. Warnings say where the sweep disagrees with the cache sizes given.
// Levels with no point inside them are left out, with a warning.
func knownPlateaus(points []sweepPoint, levels []cacheLevel) ([]plateau, []roofline.Flag, error) {
	if len(points) == 0 {
		return nil, nil, errors.New("plateaus: empty sweep")
	}
	if len(levels) == 0 {
		return nil, nil, errors.New("plateaus: no cache sizes to place the levels by")
	}
	if err := checkSweep(points, levels); err != nil {
		return nil, nil, err
	}
	points = slices.SortedFunc(slices.Values(points), func(a, b sweepPoint) int { return cmp.Compare(a.WorkingSetBytes, b.WorkingSetBytes) })
	levels = slices.SortedFunc(slices.Values(levels), func(a, b cacheLevel) int { return cmp.Compare(a.Bytes, b.Bytes) })
	out, flags := windowPlateaus(points, levels, true)
	return out, flags, nil
}

// checkSweep rejects sweep points that are not measurements and levels
// without a size.
func checkSweep(points []sweepPoint, levels []cacheLevel) error {
	for _, p := range points {
		if !(p.GBytesPerS > 0) || math.IsInf(p.GBytesPerS, 0) || p.WorkingSetBytes <= 0 {
			return fmt.Errorf("plateaus: sweep point %s at %g GB/s is not a measurement", unit.Bytes(p.WorkingSetBytes), p.GBytesPerS)
		}
	}
	for _, l := range levels {
		if l.Bytes <= 0 {
			return fmt.Errorf("plateaus: cache level %s: size %d bytes", l.Name, l.Bytes)
		}
	}
	return nil
}

// windowPlateaus reads each level's ceiling from the points well inside
// its capacity, and DRAM's past the last level when withDRAM, then
// cross-checks each measured drop against the capacities. points and
// levels are sorted by size.
func windowPlateaus(points []sweepPoint, levels []cacheLevel, withDRAM bool) ([]plateau, []roofline.Flag) {
	var (
		out   []plateau
		flags []roofline.Flag
		caps  []int64 // capacity of each entry of out; 0 for DRAM
	)
	n := len(levels)
	if withDRAM {
		n++
	}
	for i := 0; i < n; i++ {
		var (
			name   = roofline.LevelDRAM
			lo, hi int64
			window string
			capa   int64
		)
		if i < len(levels) {
			name, capa = levels[i].Name, levels[i].Bytes
			hi = capa / insideFactor
			if i == 0 {
				// Nothing smaller lingers in L1 and
				// sequential streams miss little below its
				// size: likwid-bench's L1 figure, read from
				// two thirds of L1, was above rprof's from
				// half (docs/roofs.md).
				hi = capa * l1InsideNum / l1InsideDen
			}
			if i > 0 {
				lo = levels[i-1].Bytes * insideFactor
			}
			window = fmt.Sprintf("between %s and %s (%s is %s)", unit.Bytes(lo), unit.Bytes(hi), name, unit.Bytes(capa))
			if lo == 0 {
				window = fmt.Sprintf("up to %s (%s is %s)", unit.Bytes(hi), name, unit.Bytes(capa))
			}
		} else {
			lo, hi = max(levels[i-1].Bytes*dramFactor, dramMinBytes), math.MaxInt64
			window = fmt.Sprintf("at or above %s (at least %dx the %s of %s and %s)", unit.Bytes(lo), dramFactor, levels[i-1].Name, unit.Bytes(levels[i-1].Bytes), unit.Bytes(dramMinBytes))
		}
		if lo > hi {
			flags = append(flags, roofline.Flag{Code: roofline.FlagNoPlateau, Message: fmt.Sprintf(
				"no %s ceiling: %s (%s) is less than %d times %s (%s), so no working set lies well inside it",
				name, name, unit.Bytes(capa), insideFactor*insideFactor, levels[i-1].Name, unit.Bytes(levels[i-1].Bytes))})
			continue
		}
		var in []sweepPoint
		for _, p := range points {
			if ws := float64(p.WorkingSetBytes); ws >= float64(lo)/windowSlack && ws <= float64(hi)*windowSlack {
				in = append(in, p)
			}
		}
		if len(in) == 0 {
			flags = append(flags, roofline.Flag{Code: roofline.FlagNoPlateau,
				Message: fmt.Sprintf("no %s ceiling: the sweep has no working set %s", name, window)})
			continue
		}
		best := slices.MaxFunc(in, func(a, b sweepPoint) int { return cmp.Compare(a.GBytesPerS, b.GBytesPerS) })
		if worst := slices.MinFunc(in, func(a, b sweepPoint) int { return cmp.Compare(a.GBytesPerS, b.GBytesPerS) }); best.GBytesPerS > noisySpread*worst.GBytesPerS {
			flags = append(flags, roofline.Flag{Code: roofline.FlagNoisyPlateau,
				Message: fmt.Sprintf("%s: working sets %s range from %s to %s GB/s; the machine was busy or the level is not flat; the ceiling is the highest",
					name, window, unit.Value(worst.GBytesPerS), unit.Value(best.GBytesPerS))})
		}
		out = append(out, plateau{Level: name, GBytesPerS: best.GBytesPerS, CI: best.CI, WorkingSetBytes: best.WorkingSetBytes, Points: len(in)})
		caps = append(caps, capa)
	}
	for i := 0; i+1 < len(out); i++ {
		flags = append(flags, crossCheck(points, out[i], out[i+1], caps[i])...)
	}
	return out, flags
}

// crossCheck finds where bandwidth falls from level a towards the next
// measured level b (dropAfter) and compares it with a's capacity.
func crossCheck(points []sweepPoint, a, b plateau, capa int64) []roofline.Flag {
	if a.GBytesPerS < minStep*b.GBytesPerS {
		return []roofline.Flag{{Code: roofline.FlagNoPlateau, Message: fmt.Sprintf(
			"%s (%s GB/s) and %s (%s GB/s) differ by less than %.0f%%: the sweep shows no step where %s ends at %s; the VM or CPU may hide it",
			a.Level, unit.Value(a.GBytesPerS), b.Level, unit.Value(b.GBytesPerS), (minStep-1)*100, a.Level, unit.Bytes(capa))}}
	}
	if q, p, ok := dropAfter(points, a, b); ok && disagrees(q, p, capa) {
		return []roofline.Flag{{Code: roofline.FlagCacheMismatch, Message: fmt.Sprintf(
			"bandwidth drops from %s towards %s between %s and %s working sets, but the cache sizes say %s holds %s",
			a.Level, b.Level, unit.Bytes(q), unit.Bytes(p), a.Level, unit.Bytes(capa))}}
	}
	return nil
}

// dropAfter finds where bandwidth falls from level a towards the next
// measured level b: before the first point past a's below their
// geometric mean after which no point up to b's reads above it again
// (interference slows a point down, never up, so a slow point followed by
// a fast one is noise, not the edge of a). The drop lies between the
// previous point (still fast), q, and that point, p; a coarse sweep only
// knows it that well. ok is false when the sweep shows no such drop.
func dropAfter(points []sweepPoint, a, b plateau) (q, p int64, ok bool) {
	if a.GBytesPerS < minStep*b.GBytesPerS {
		return 0, 0, false
	}
	mid := math.Sqrt(a.GBytesPerS * b.GBytesPerS)
	for i, pt := range points {
		if pt.WorkingSetBytes <= a.WorkingSetBytes || pt.GBytesPerS >= mid {
			continue
		}
		stays := true
		for j := i + 1; j < len(points) && (j == i+1 || points[j].WorkingSetBytes <= b.WorkingSetBytes); j++ {
			stays = stays && points[j].GBytesPerS < mid
		}
		if stays {
			return points[i-1].WorkingSetBytes, pt.WorkingSetBytes, true
		}
	}
	return 0, 0, false
}

// disagrees says whether a drop between working sets q and p lies more
// than mismatchFactor from a level's capacity, either way, taking the
// drop at their geometric mean: a sweep of one size per octave brackets
// it within a factor of 2, as wide as the factor itself.
func disagrees(q, p, capa int64) bool {
	edge := edgeSize(q, p)
	return edge*mismatchFactor < capa || edge > capa*mismatchFactor
}

// edgeSize is a level's size measured from the sweep sizes q and p either
// side of its drop: their geometric mean.
func edgeSize(q, p int64) int64 { return int64(math.Sqrt(float64(q) * float64(p))) }
