package roofs

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/rprof/rprof/roofline"

	"github.com/rprof/rprof/internal/unit"
)

// Levels found from a sweep alone. A step between two levels must be at
// least levelStep (smaller steps are noise or a drifting level on a busy
// VM); a level spans at least minLevelPoints sweep sizes, so that a single
// slow or fast point is never a level of its own.
const (
	levelStep      = 1.15
	minLevelPoints = 2
	// maxCacheLevels bounds the levels a sweep may name: L1 to L3. A VM's
	// last-level cache often fades over an octave or more instead of
	// ending at one size; allowing an L4 would name that fade a level.
	maxCacheLevels = 3
)

// span is a run of consecutive sweep points, [first, last].
type span struct{ first, last int }

// segmentSweep splits ys (log bandwidths, smallest working set first) into
// at most maxSpans runs, each at least minLevelPoints long, each lower than
// the one before by at least levelStep: the partition with the least
// squared deviation from the runs' means, with the most runs that keeps
// every step; the last run starts at or before index lastFrom (DRAM's
// sizes are one level however noisy a busy machine makes them). The values are smoothed by a running median of three first,
// so that one disturbed point moves no edge, and made non-increasing.
func segmentSweep(ys []float64, maxSpans, lastFrom int) []span {
	n := len(ys)
	if n == 0 {
		return nil
	}
	sm := make([]float64, n)
	for i := range ys {
		if i == 0 || i == n-1 {
			sm[i] = ys[i]
			continue
		}
		w := []float64{ys[i-1], ys[i], ys[i+1]}
		slices.Sort(w)
		sm[i] = w[1]
	}
	// Bandwidth does not rise with the working set: where a smaller size
	// reads slower than a larger one, per-sample overhead (the smallest
	// sizes) or interference slowed it, and the larger size's rate stands.
	for i := n - 2; i >= 0; i-- {
		sm[i] = max(sm[i], sm[i+1])
	}
	// Prefix sums make each run's squared deviation O(1).
	s1, s2 := make([]float64, n+1), make([]float64, n+1)
	for i, y := range sm {
		s1[i+1], s2[i+1] = s1[i]+y, s2[i]+y*y
	}
	cost := func(a, b int) float64 { // run sm[a:b]
		k := float64(b - a)
		d := s1[b] - s1[a]
		return s2[b] - s2[a] - d*d/k
	}
	mean := func(s span) float64 { return (s1[s.last+1] - s1[s.first]) / float64(s.last-s.first+1) }
	best := []span{{0, n - 1}}
	for k := 2; k <= maxSpans && k*minLevelPoints <= n; k++ {
		spans := partition(n, k, lastFrom, cost)
		ok := true
		for i := 0; i+1 < len(spans); i++ {
			if mean(spans[i])-mean(spans[i+1]) < math.Log(levelStep) {
				ok = false
			}
		}
		if ok {
			best = spans
		}
	}
	return best
}

// partition is the split of n points into k runs of at least
// minLevelPoints, the last starting at or before lastFrom, that minimises
// the summed cost (dynamic programming over the end of each run).
func partition(n, k, lastFrom int, cost func(a, b int) float64) []span {
	inf := math.Inf(1)
	// c[j][i]: least cost of the first i points in j runs; from[j][i]: where
	// the last of those runs starts.
	c := make([][]float64, k+1)
	from := make([][]int, k+1)
	for j := range c {
		c[j] = make([]float64, n+1)
		from[j] = make([]int, n+1)
		for i := range c[j] {
			c[j][i] = inf
		}
	}
	c[0][0] = 0
	for j := 1; j <= k; j++ {
		for i := j * minLevelPoints; i <= n; i++ {
			top := i - minLevelPoints
			if j == k {
				top = min(top, lastFrom)
			}
			for a := (j - 1) * minLevelPoints; a <= top; a++ {
				if v := c[j-1][a] + cost(a, i); v < c[j][i] {
					c[j][i], from[j][i] = v, a
				}
			}
		}
	}
	spans := make([]span, k)
	for j, i := k, n; j > 0; j-- {
		a := from[j][i]
		spans[j-1] = span{a, i - 1}
		i = a
	}
	return spans
}

// measuredPlateaus reads the levels from the sweep's own steps, for hosts
// whose cache sizes are unknown or incomplete (no sysfs cache tree, an
// implausible CPUID). known are the levels whose sizes are trusted, L1
// upwards: they are read as knownPlateaus reads them, and the sweep past twice
// the last of them is split into the remaining levels and DRAM. The last
// run is DRAM; the runs before it are the next cache levels, named in
// order, with their sizes at the measured edges, up to maxLevels cache
// levels in all.
func measuredPlateaus(points []sweepPoint, known []cacheLevel, source string, maxLevels int) ([]plateau, []levelSize, []roofline.Flag) {
	var (
		out    []plateau
		sizes  []levelSize
		flags  []roofline.Flag
		region = points
	)
	if len(known) > 0 {
		out, flags = windowPlateaus(points, known, false)
		for _, l := range known {
			sizes = append(sizes, declaredSize(l, source))
		}
		floor := known[len(known)-1].Bytes * insideFactor
		i, _ := slices.BinarySearchFunc(points, floor, func(p sweepPoint, ws int64) int {
			return cmp.Compare(float64(p.WorkingSetBytes)*windowSlack, float64(ws))
		})
		region = points[i:]
	}
	if len(region) == 0 {
		return out, sizes, append(flags, roofline.Flag{Code: roofline.FlagNoPlateau,
			Message: "no DRAM ceiling: the sweep ends inside the known caches"})
	}
	ys := make([]float64, len(region))
	for i, p := range region {
		ys[i] = math.Log(p.GBytesPerS)
	}
	dram, _ := slices.BinarySearchFunc(region, int64(dramMinBytes), func(p sweepPoint, ws int64) int {
		return cmp.Compare(p.WorkingSetBytes, ws)
	})
	spans := segmentSweep(ys, max(1, maxLevels-len(known))+1, dram)
	if len(spans) == 1 {
		flags = append(flags, roofline.Flag{Code: roofline.FlagNoPlateau, Message: fmt.Sprintf(
			"the sweep from %s to %s shows no step of %.0f%% or more: no cache level past %s was found; its points are read as DRAM",
			unit.Bytes(region[0].WorkingSetBytes), unit.Bytes(region[len(region)-1].WorkingSetBytes), (levelStep-1)*100, lastName(known))})
	}
	for i, s := range spans {
		pts := region[s.first : s.last+1]
		name := roofline.LevelDRAM
		if i < len(spans)-1 {
			name = fmt.Sprintf("L%d", len(known)+i+1)
			edge := edgeSize(pts[len(pts)-1].WorkingSetBytes, region[s.last+1].WorkingSetBytes)
			sizes = append(sizes, levelSize{Name: name, Bytes: edge, Source: roofline.CacheSourceMeasured,
				EdgeLo: pts[len(pts)-1].WorkingSetBytes, EdgeHi: region[s.last+1].WorkingSetBytes})
		}
		in := insidePoints(pts, i > 0, name == roofline.LevelDRAM)
		best := slices.MaxFunc(in, func(a, b sweepPoint) int { return cmp.Compare(a.GBytesPerS, b.GBytesPerS) })
		out = append(out, plateau{Level: name, GBytesPerS: best.GBytesPerS, CI: best.CI, WorkingSetBytes: best.WorkingSetBytes, Points: len(in)})
	}
	// The last known level's edge is checked against the first level found
	// past it, as knownPlateaus checks its neighbours.
	if k := len(known); k > 0 && len(out) > 1 {
		if i := slices.IndexFunc(out, func(p plateau) bool { return p.Level == known[k-1].Name }); i >= 0 && i+1 < len(out) {
			flags = append(flags, crossCheck(points, out[i], out[i+1], known[k-1].Bytes)...)
		}
	}
	return out, sizes, flags
}

// levelSize is the size of one cache level as the sweep's threads see it,
// and where it came from.
type levelSize struct {
	Name  string
	Bytes int64
	// Source is roofline.CacheSourceSysfs, CacheSourceCPUID or
	// CacheSourceMeasured.
	Source string
	// EdgeLo and EdgeHi are the working sets between which bandwidth fell
	// to the next level (0 when the sweep showed no edge); a measured
	// level's Bytes is their geometric mean.
	EdgeLo, EdgeHi int64
	// DeclaredBytes and DeclaredSource are the host's own size for the
	// level (sysfs, CPUID), 0 and "" when it declared none.
	DeclaredBytes  int64
	DeclaredSource string
}

// effectiveCaches are a scope's level sizes as the roofs document records
// them.
func effectiveCaches(sizes []levelSize, threads int) []roofline.CacheLevel {
	var out []roofline.CacheLevel
	for _, l := range sizes {
		c := roofline.CacheLevel{Level: l.Name, Threads: threads, Bytes: l.Bytes, Source: l.Source,
			DeclaredBytes: l.DeclaredBytes, DeclaredSource: l.DeclaredSource}
		if l.EdgeLo > 0 {
			c.Edge = &roofline.ByteRange{Lo: l.EdgeLo, Hi: l.EdgeHi}
		}
		out = append(out, c)
	}
	return out
}

// knownCaches are the cache levels a sweep's threads see, with the source
// of their sizes. Complete says the list holds every level (sysfs lists
// them all); otherwise the levels past the last one are found from the
// sweep.
type knownCaches struct {
	Levels   []cacheLevel
	Source   string
	Complete bool
}

// ceilings reads the ceiling of each memory level from a sweep: placed by
// the cache sizes when they are complete (knownPlateaus), else found from the
// sweep's own steps past the sizes that are known, with no sizes at all if
// need be. It also returns the size of each cache level and where it came
// from.
func ceilings(points []sweepPoint, known knownCaches) ([]plateau, []levelSize, []roofline.Flag, error) {
	if len(points) == 0 {
		return nil, nil, nil, errors.New("plateaus: empty sweep")
	}
	if err := checkSweep(points, known.Levels); err != nil {
		return nil, nil, nil, err
	}
	points = slices.SortedFunc(slices.Values(points), func(a, b sweepPoint) int { return cmp.Compare(a.WorkingSetBytes, b.WorkingSetBytes) })
	levels := slices.SortedFunc(slices.Values(known.Levels), func(a, b cacheLevel) int { return cmp.Compare(a.Bytes, b.Bytes) })
	if known.Complete && len(levels) > 0 {
		out, sizes, flags := declaredCeilings(points, levels, known.Source)
		return out, sizes, flags, nil
	}
	out, sizes, flags := measuredPlateaus(points, levels, known.Source, maxCacheLevels)
	return out, sizes, flags, nil
}

// declaredCeilings reads the ceilings of a host that declares every
// cache level: the declared sizes say where to look, and the sweep's
// edges decide. Each level's edge is found (the drop between its plateau
// and the next one's, dropAfter, as crossCheck finds it; for the last
// level, where the declared sizes leave DRAM no plateau or the sweep no
// such drop, the step the sweep shows past the level before it,
// measuredPlateaus), a level whose edge lies more than mismatchFactor
// from its declared size takes the edge's size (measured), and the
// ceilings are read at the effective sizes. A level whose edge the sweep
// does not show keeps its declared size. points and levels are sorted by
// size.
func declaredCeilings(points []sweepPoint, levels []cacheLevel, source string) ([]plateau, []levelSize, []roofline.Flag) {
	n := len(levels)
	sizes := make([]levelSize, n)
	for i, l := range levels {
		sizes[i] = declaredSize(l, source)
	}
	declared, _ := windowPlateaus(points, levels, true)
	for i := range n {
		a := slices.IndexFunc(declared, func(p plateau) bool { return p.Level == levels[i].Name })
		if a < 0 || a+1 >= len(declared) {
			continue
		}
		if q, p, ok := dropAfter(points, declared[a], declared[a+1]); ok {
			sizes[i].EdgeLo, sizes[i].EdgeHi = q, p
		}
	}
	if sizes[n-1].EdgeLo == 0 {
		if _, found, _ := measuredPlateaus(points, levels[:n-1], source, n); len(found) == n && found[n-1].Source == roofline.CacheSourceMeasured {
			sizes[n-1].EdgeLo, sizes[n-1].EdgeHi = found[n-1].EdgeLo, found[n-1].EdgeHi
		}
	}
	var flags []roofline.Flag
	effective := slices.Clone(levels)
	for i, s := range sizes {
		if s.EdgeLo == 0 || !disagrees(s.EdgeLo, s.EdgeHi, s.Bytes) {
			continue
		}
		edge := edgeSize(s.EdgeLo, s.EdgeHi)
		// The effective sizes must still grow level by level.
		if (i > 0 && edge <= effective[i-1].Bytes) || (i+1 < n && edge >= effective[i+1].Bytes && sizes[i+1].Source != roofline.CacheSourceMeasured && !disagrees(sizes[i+1].EdgeLo, sizes[i+1].EdgeHi, sizes[i+1].Bytes)) {
			continue
		}
		sizes[i].Bytes, sizes[i].Source, effective[i].Bytes = edge, roofline.CacheSourceMeasured, edge
		flags = append(flags, roofline.Flag{Code: roofline.FlagCacheMismatch, Message: fmt.Sprintf(
			"%s: the host declares %s (%s), but bandwidth falls past %s between %s and %s working sets: the measured %s is used",
			s.Name, unit.Bytes(s.DeclaredBytes), s.DeclaredSource, s.Name, unit.Bytes(s.EdgeLo), unit.Bytes(s.EdgeHi), unit.Bytes(edge))})
	}
	out, windowFlags := windowPlateaus(points, effective, true)
	return out, sizes, append(flags, windowFlags...)
}

// insidePoints are the points of a run that show its level: past the first
// octave when a faster level comes before within the run's region (the
// sizes just past an edge still hold some of the faster level's data and
// read high), and for DRAM at dramMinBytes or more. A run too short for
// that keeps all its points.
func insidePoints(pts []sweepPoint, afterEdge, dram bool) []sweepPoint {
	var floor int64
	if afterEdge {
		floor = 2 * pts[0].WorkingSetBytes
	}
	if dram {
		floor = max(floor, dramMinBytes)
	}
	var kept []sweepPoint
	for _, p := range pts {
		if float64(p.WorkingSetBytes)*windowSlack >= float64(floor) {
			kept = append(kept, p)
		}
	}
	if len(kept) == 0 {
		return pts
	}
	return kept
}

// declaredSize is a level's size as the host declared it, from source.
func declaredSize(l cacheLevel, source string) levelSize {
	return levelSize{Name: l.Name, Bytes: l.Bytes, Source: source, DeclaredBytes: l.Bytes, DeclaredSource: source}
}

func lastName(known []cacheLevel) string {
	if len(known) == 0 {
		return "the smallest working set"
	}
	return known[len(known)-1].Name
}
