package kernels

import (
	"math"
	"testing"
)

// model computes, in Go, what a compute kernel leaves in its accumulators
// after iters iterations: each lane updated iters times by acc*x + y, fused
// or rounded after the multiply. Matching it bit for bit on every lane shows
// the kernel did exactly accs*lanes*iters updates of 2 FLOP each.
func model64(k computeKernel, iters int64) []float64 {
	st := make([]float64, (k.accs+2)*k.lanes)
	initState(st, k.lanes)
	acc := st[:k.accs*k.lanes]
	for j := range acc {
		for range iters {
			if k.FMA {
				acc[j] = math.FMA(acc[j], stateX, stateY)
			} else {
				acc[j] = float64(acc[j]*stateX) + stateY
			}
		}
	}
	return acc
}

func model32(k computeKernel, iters int64) []float32 {
	st := make([]float32, (k.accs+2)*k.lanes)
	initState(st, k.lanes)
	acc := st[:k.accs*k.lanes]
	for j := range acc {
		for range iters {
			if k.FMA {
				// The float64 product of two float32 is exact; the one
				// rounding of the sum to float64 is then rounded again to
				// float32, which can differ from a float32 FMA only on an
				// exact float32 tie, which the test would report.
				acc[j] = float32(float64(acc[j])*stateX + stateY)
			} else {
				acc[j] = float32(acc[j]*stateX) + stateY
			}
		}
	}
	return acc
}

func asm64(k computeKernel, iters int64) []float64 {
	st := make([]float64, (k.accs+2)*k.lanes)
	initState(st, k.lanes)
	k.step64(iters, &st[0])
	return st[:k.accs*k.lanes]
}

func asm32(k computeKernel, iters int64) []float32 {
	st := make([]float32, (k.accs+2)*k.lanes)
	initState(st, k.lanes)
	k.step32(iters, &st[0])
	return st[:k.accs*k.lanes]
}

func TestComputeKernelsDoExactlyTheirIterations(t *testing.T) {
	for _, k := range computeTable {
		t.Run(k.Name, func(t *testing.T) {
			if r := k.needs(); r != "" {
				t.Skip(r)
			}
			k.Run(3) // the exported path: its copied state must fit the kernel
			if got, want := k.FlopsPerIter, float64(2*k.accs*k.lanes); got != want {
				t.Errorf("FlopsPerIter = %v, want %v", got, want)
			}
			for _, iters := range []int64{0, 1, 7, 100} {
				var diff, diffPrev int
				if k.step64 != nil {
					got, want, prev := asm64(k, iters), model64(k, iters), model64(k, iters+1)
					diff, diffPrev = countDiff(got, want), countDiff(got, prev)
				} else {
					got, want, prev := asm32(k, iters), model32(k, iters), model32(k, iters+1)
					diff, diffPrev = countDiff(got, want), countDiff(got, prev)
				}
				if diff != 0 {
					t.Errorf("iters=%d: %d accumulator lanes differ from the Go model", iters, diff)
				}
				// The model must tell iteration counts apart, else matching
				// it proves nothing.
				if diffPrev == 0 {
					t.Errorf("iters=%d: result also matches iters+1; the check cannot see the count", iters)
				}
			}
		})
	}
}

func countDiff[T float32 | float64](a, b []T) int {
	n := 0
	for i := range a {
		if a[i] != b[i] {
			n++
		}
	}
	return n
}

func TestAccumulatorsStartDistinct(t *testing.T) {
	st := make([]float64, 18*8)
	initState(st, 8)
	seen := map[float64]bool{}
	for _, v := range st[:16*8] {
		if seen[v] {
			t.Fatalf("accumulator value %v repeats; equal chains could be merged", v)
		}
		seen[v] = true
	}
}

func TestLoadKernelsSum(t *testing.T) {
	for _, k := range bandwidthTable {
		if k.load == nil {
			continue
		}
		if r := k.needs(); r != "" {
			t.Logf("%s %s: %s", k.ISA, k.Name, r)
			continue
		}
		for _, off := range []int{0, 1, 3} {
			for _, n := range []int{0, 5, 64, 200, 4096 + 7} {
				b := Alloc(n + off)[off : off+n]
				fill(b, 1)
				want := loadGo(b)
				if got := k.sum(b); math.Abs(got-want) > 1e-12*math.Abs(want) {
					t.Errorf("%s n=%d off=%d: sum %v, want %v", k.ISA, n, off, got, want)
				}
			}
		}
	}
}
