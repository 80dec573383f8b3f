package kernels

import (
	"math"
	"slices"
	"testing"

	"golang.org/x/sys/cpu"
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
				for _, passes := range []int{0, 1, 3} {
					want := float64(passes) * loadGo(b)
					if got := k.sum(b, passes); math.Abs(got-want) > 1e-12*math.Abs(want) {
						t.Errorf("%s n=%d off=%d, %d passes: sum %v, want %v", k.ISA, n, off, passes, got, want)
					}
				}
			}
		}
	}
}

// TestDispatchSkipsWhatTheCPULacks pretends the CPU lacks features, as older
// or virtualised x86 CPUs do, and checks those kernels are skipped with a
// reason rather than offered.
func TestDispatchSkipsWhatTheCPULacks(t *testing.T) {
	saved := cpu.X86
	t.Cleanup(func() { cpu.X86 = saved })
	tests := []struct {
		name           string
		avx, fma, a512 bool
		wantCompute    []string
		wantBandwidth  []string
	}{
		{"no AVX-512", true, true, false,
			[]string{"scalar-fma-fp64", "scalar-muladd-fp64", "scalar-fma-fp32", "scalar-muladd-fp32", "sse-fma-fp64", "sse-muladd-fp64", "sse-fma-fp32", "sse-muladd-fp32", "avx2-fma-fp64", "avx2-muladd-fp64", "avx2-fma-fp32", "avx2-muladd-fp32"},
			[]string{"avx2 triad", "avx2 triad-nt", "avx2 daxpy", "avx2 load", "avx2 update"}},
		{"AVX without FMA", true, false, false,
			[]string{"scalar-muladd-fp64", "scalar-muladd-fp32", "sse-muladd-fp64", "sse-muladd-fp32", "avx2-muladd-fp64", "avx2-muladd-fp32"},
			[]string{"avx2 load", "avx2 update"}},
		{"SSE2 only", false, false, false,
			[]string{"scalar-muladd-fp64", "scalar-muladd-fp32", "sse-muladd-fp64", "sse-muladd-fp32"},
			[]string{"go triad", "go daxpy", "go load", "go update"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cpu.X86.HasAVX, cpu.X86.HasFMA, cpu.X86.HasAVX512F = tt.avx, tt.fma, tt.a512
			ok, skipped := ComputeKernels()
			var names []string
			for _, k := range ok {
				names = append(names, k.Name)
			}
			if !slices.Equal(names, tt.wantCompute) {
				t.Errorf("compute kernels %v, want %v", names, tt.wantCompute)
			}
			if len(ok)+len(skipped) != len(computeTable) {
				t.Errorf("%d offered + %d skipped != %d kernels", len(ok), len(skipped), len(computeTable))
			}
			for _, s := range skipped {
				if s.Reason == "" {
					t.Errorf("%s skipped without a reason", s.Name)
				}
			}
			bw, _ := BandwidthKernels()
			names = nil
			for _, k := range bw {
				names = append(names, k.ISA+" "+k.Name)
			}
			if !slices.Equal(names, tt.wantBandwidth) {
				t.Errorf("bandwidth kernels %v, want %v", names, tt.wantBandwidth)
			}
		})
	}
}

// TestRunCallsTheAssemblyOncePerRun checks that Run over slices from Alloc
// of whole blocks hands the assembly every pass in one call: a call per
// pass cost 8 to 11% of the one-thread L1 roof (docs/roofs.md). Over a
// slice with an unaligned head, Go does the head and tail each pass and
// calls the assembly once a pass.
func TestRunCallsTheAssemblyOncePerRun(t *testing.T) {
	var seen []int64 // the passes of each call of the assembly
	count := func(passes int64) { seen = append(seen, passes) }
	kinds := map[string]bandwidthKernel{
		"triad":  {triad: func(_, _, _ *float64, _ int64, _ float64, passes int64) { count(passes) }},
		"daxpy":  {triad: func(_, _, _ *float64, _ int64, _ float64, passes int64) { count(passes) }, inPlace: true},
		"update": {update: func(_ *float64, _ int64, _ float64, passes int64) { count(passes) }},
		"load": {load: func(_ *float64, _, passes int64) float64 {
			count(passes)
			return 0
		}},
	}
	tests := []struct {
		name       string
		off, n     int
		wantCalls  int
		wantPasses int64
	}{
		{"whole aligned blocks", 0, 256, 1, 5},
		{"an unaligned head", 1, 200, 5, 1},
	}
	for name, k := range kinds {
		run := k.withRun().Run
		for _, tt := range tests {
			seen = nil
			x := func() []float64 { return Alloc(tt.n + tt.off)[tt.off : tt.off+tt.n] }
			run(x(), x(), x(), 1, 5)
			if len(seen) != tt.wantCalls || slices.ContainsFunc(seen, func(p int64) bool { return p != tt.wantPasses }) {
				t.Errorf("%s over %s: calls of the assembly with passes %v, want %d calls of %d", name, tt.name, seen, tt.wantCalls, tt.wantPasses)
			}
		}
	}
}
