package roofs

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/rprof/rprof/roofline"

	"github.com/rprof/rprof/internal/unit"
)

// sweepPoint is the bandwidth measured at one working-set size.
type sweepPoint struct {
	// WorkingSetBytes is the bytes all threads' arrays occupy together.
	WorkingSetBytes int64
	// GBytesPerS is 1e9 bytes per second, counting bytes as STREAM does
	// (kernels.Bandwidth.BytesPerElement).
	GBytesPerS float64
	CI         roofline.Interval
}

// sweepEvaluator measures the bandwidth of a kernel whose threads together
// use workingSetBytes, with a confidence interval.
type sweepEvaluator func(ctx context.Context, workingSetBytes int64) (gbps float64, ci roofline.Interval, err error)

// defaultPerOctave is a sweep step that finds every level: 3 sizes per
// doubling place a cache boundary within a factor of 1.26 and put at least
// one point inside each plateau window (half a cache and below, twice the
// previous level and above), even for levels only 8 times apart.
const defaultPerOctave = 3

// sweepRange is the span of a sweep's first pass over declared levels:
// from a quarter of the smallest level (well inside L1) to twice the
// largest. A declared size is only a hint of where to look: the sweep
// grows past it while DRAM's plateau is not established (dramSettled),
// and stops there when it is, whatever the host declares.
func sweepRange(levels []cacheLevel) (lo, hi int64, err error) {
	if len(levels) == 0 {
		return 0, 0, errors.New("sweep range: no cache levels")
	}
	lo, hi = math.MaxInt64, 0
	for _, l := range levels {
		if l.Bytes <= 0 {
			return 0, 0, fmt.Errorf("sweep range: cache level %s: size %d bytes", l.Name, l.Bytes)
		}
		lo, hi = min(lo, l.Bytes/4), max(hi, l.Bytes*2)
	}
	return lo, hi, nil
}

// sweepSizes returns working-set sizes from lo to hi bytes, perOctave per
// doubling, each rounded to a multiple of quantum (the bytes of one loop
// block over all threads' arrays, so every size is one the kernels can run
// without a tail), without duplicates.
func sweepSizes(lo, hi int64, perOctave int, quantum int64) ([]int64, error) {
	switch {
	case lo <= 0 || hi < lo:
		return nil, fmt.Errorf("sweep sizes: range %d to %d bytes is empty", lo, hi)
	case perOctave <= 0:
		return nil, fmt.Errorf("sweep sizes: %d steps per octave", perOctave)
	case quantum <= 0:
		return nil, fmt.Errorf("sweep sizes: quantum %d bytes", quantum)
	}
	steps := int(math.Ceil(math.Log2(float64(hi)/float64(lo))*float64(perOctave) - 1e-9))
	var sizes []int64
	for i := 0; i <= steps; i++ {
		ws := float64(lo) * math.Exp2(float64(i)/float64(perOctave))
		q := max(1, int64(math.Round(ws/float64(quantum)))) * quantum
		if len(sizes) == 0 || q > sizes[len(sizes)-1] {
			sizes = append(sizes, q)
		}
	}
	return sizes, nil
}

// sizesUpTo are sweepSizes from lo to top, none past top: where top is
// not on the sweep's grid (a memory limit), top itself, rounded down to
// quantum, ends them.
func sizesUpTo(lo, top int64, perOctave int, quantum int64) ([]int64, error) {
	sizes, err := sweepSizes(lo, top, perOctave, quantum)
	if err != nil {
		return nil, err
	}
	for len(sizes) > 1 && sizes[len(sizes)-1] > top {
		sizes = sizes[:len(sizes)-1]
	}
	if last := top / quantum * quantum; last > sizes[len(sizes)-1] {
		sizes = append(sizes, last)
	}
	return sizes, nil
}

// withDRAMSizes appends dramMinBytes and twice that (rounded up to quantum)
// to sizes where the sweep stops short of them: the fixed DRAM sizes of
// the benchmarks and recordings that compare DRAM figures.
func withDRAMSizes(sizes []int64, quantum int64) []int64 {
	for _, ws := range []int64{dramMinBytes, 2 * dramMinBytes} {
		q := (ws + quantum - 1) / quantum * quantum
		if len(sizes) == 0 || q > sizes[len(sizes)-1] {
			sizes = append(sizes, q)
		}
	}
	return sizes
}

// settleOctaves is how many octaves of a sweep's last sizes past the last
// cache's edge must agree for DRAM's plateau to be established (3 sizes
// at 2 per octave, 2 with --quick's 1), and settleSpread how far apart two
// of them may read, beyond their intervals, and still agree: a shared
// machine's DRAM moves by that much between neighbouring sizes with no
// step between them.
const (
	settleOctaves = 1
	settleSpread  = 1.1
)

// dramSettled says whether a sweep has established DRAM's plateau: it
// reaches DRAM's window past the last cache level of sizes (the effective
// sizes, ceilings), and its last settlePoints sizes past that level's edge
// agree with each other (within each other's intervals, or settleSpread).
// points are sorted by size, perOctave to an octave.
func dramSettled(points []sweepPoint, sizes []levelSize, perOctave int) bool {
	settlePoints := settleOctaves*perOctave + 1
	if len(points) == 0 {
		return false
	}
	floor, past := int64(dramMinBytes), int64(0)
	if len(sizes) > 0 {
		l := sizes[len(sizes)-1]
		floor, past = max(floor, l.Bytes*dramFactor), max(l.Bytes, l.EdgeHi)
	}
	if float64(points[len(points)-1].WorkingSetBytes)*windowSlack < float64(floor) {
		return false
	}
	var tail []sweepPoint
	for _, p := range points {
		if p.WorkingSetBytes > past {
			tail = append(tail, p)
		}
	}
	if len(tail) < settlePoints {
		return false
	}
	tail = tail[len(tail)-settlePoints:]
	for i, a := range tail {
		for _, b := range tail[i+1:] {
			if apart(a.CI, b.CI) && max(a.GBytesPerS, b.GBytesPerS) > settleSpread*min(a.GBytesPerS, b.GBytesPerS) {
				return false
			}
		}
	}
	return true
}

// growthTop is as far as a sweep grows while DRAM's plateau is not
// established: twice dramMinBytes, or twice DRAM's window past the last
// cache level of sizes when that is larger (a memory limit may stop it
// sooner).
func growthTop(sizes []levelSize) int64 {
	top := int64(2 * dramMinBytes)
	if len(sizes) > 0 {
		top = max(top, 2*dramFactor*sizes[len(sizes)-1].Bytes)
	}
	return top
}

// sweep measures each size with eval, smallest first. progress, if not nil,
// is called after each size. It stops at the first error or when ctx is
// done, returning the points measured so far with the error.
func sweep(ctx context.Context, sizes []int64, eval sweepEvaluator, progress func(done, total int)) ([]sweepPoint, error) {
	points := make([]sweepPoint, 0, len(sizes))
	for i, ws := range sizes {
		if err := ctx.Err(); err != nil {
			return points, fmt.Errorf("sweep: %w", err)
		}
		gbps, ci, err := eval(ctx, ws)
		if err != nil {
			return points, fmt.Errorf("sweep at %s: %w", unit.Bytes(ws), err)
		}
		points = append(points, sweepPoint{WorkingSetBytes: ws, GBytesPerS: gbps, CI: ci})
		if progress != nil {
			progress(i+1, len(sizes))
		}
	}
	return points, nil
}
