package render

import (
	"bytes"
	"testing"
	"time"

	"github.com/rprof/rprof/gpu/cupti"
	"github.com/rprof/rprof/gpu/metrics"
	"github.com/rprof/rprof/internal/testutil"
	"github.com/rprof/rprof/roofline"
)

// A kernel the range profiler counted shows its rates and placement
// beside its time; one with times only shows dashes and why.
func TestGPUKernelsTableShowsCountedKernelsRatesAndPlacement(t *testing.T) {
	h100 := &cupti.Device{Name: "NVIDIA H100 80GB HBM3", ComputeCapability: "9.0", SMClockMHz: 1980, MemClockMHz: 2619}
	clocks := roofline.GPUClocks{SMClockMHz: 1980, MemClockMHz: 2619, Source: roofline.ClockSourceAttribute}
	roofs := &roofline.Roofs{Schema: roofline.RoofsSchema, GPUs: []roofline.GPURoofs{{
		Device:  roofline.GPUDevice{Index: 0, Name: h100.Name, ComputeCapability: "9.0", SMs: 132},
		Compute: []roofline.GPUComputeRoof{{Name: "gpu-fma-fp64", Precision: roofline.Double, GFlops: 31000, CI: roofline.Interval{Lo: 30900, Hi: 31100}, Clocks: clocks}},
		Memory:  []roofline.GPUMemoryRoof{{Level: roofline.LevelDRAM, Kernel: "read", GBytesPerS: 3000, CI: roofline.Interval{Lo: 2990, Hi: 3010}, Clocks: clocks}},
	}}}
	// triad: 2 ms, W 5e8 FLOP (fp64 FMA), Q 3e9 bytes: 250 GFLOP/s,
	// 1500 GB/s, half of DRAM's roof.
	f := metrics.Figures{Flops: 5e8, ByPrecision: map[string]float64{"fp64": 5e8}, LevelBytes: map[string]float64{roofline.LevelDRAM: 3e9}}
	triad := cupti.Group{Name: "_Z5triadPdPKdS1_d", Launches: 2, Nanoseconds: 2e6}.Point(h100, cupti.Profile{Figures: &f}, roofline.Machine{}, time.Unix(0, 0))
	if !metrics.Place(&triad, roofs) {
		t.Fatal("triad not placed")
	}
	gemm := cupti.Group{Name: "gemm_kernel", Launches: 1, Nanoseconds: 1e6}.Point(h100,
		cupti.Profile{Why: "kernel times only (tier c): CUPTI's range profiler measured 0 of its 1 launches"}, roofline.Machine{}, time.Unix(0, 0))
	var b bytes.Buffer
	WriteGPUKernels(&b, []roofline.Point{gemm, triad}, 4*time.Millisecond)
	testutil.Golden(t, "testdata/gpu-kernels-counted.txt", b.Bytes())
}
