package measure

import (
	"testing"
	"time"

	"github.com/rprof/rprof/gpu/cupti"
	"github.com/rprof/rprof/gpu/metrics"
	"github.com/rprof/rprof/roofline"
)

// A kernel the range profiler measured lands under its device's GPU
// roofs; one it did not keeps its time alone, unplaced.
func TestGPUPointsPlaceProfiledKernelsUnderTheDevicesRoofs(t *testing.T) {
	// triad: 2 launches of 1 ms, each 1.25e8 fp64 FMA and 1.5e9 DRAM
	// bytes: W 5e8 FLOP, Q 3e9 bytes, 1/6 FLOP/byte, 1500 GB/s, half of
	// DRAM's 3000 GB/s roof.
	values := map[string]float64{metrics.DRAM: 1.5e9, metrics.L2: 1.6e9}
	for _, m := range metrics.Required()[:9] {
		values[m] = 0
	}
	values[metrics.Work("d", "fma")] = 1.25e8
	rec := cupti.Recording{Processes: []cupti.Process{{PID: 7, Recording: true, Profiling: true, Complete: true,
		Kernels: []cupti.Kernel{{Name: "triad", Start: 0, End: 1e6}, {Name: "triad", Start: 2e6, End: 3e6}, {Name: "scale", Start: 4e6, End: 5e6}},
		Ranges:  []cupti.Range{{Name: "triad", Values: values}, {Name: "triad", Values: values}}}}}
	h100 := "NVIDIA H100 80GB HBM3"
	clocks := roofline.GPUClocks{SMClockMHz: 1980, MemClockMHz: 2619, Source: roofline.ClockSourceAttribute}
	roofs := &roofline.Roofs{Schema: roofline.RoofsSchema, GPUs: []roofline.GPURoofs{{
		Device:  roofline.GPUDevice{Index: 0, Name: h100, ComputeCapability: "9.0", SMs: 132},
		Compute: []roofline.GPUComputeRoof{{Name: "gpu-fma-fp64", Precision: roofline.Double, GFlops: 31000, CI: roofline.Interval{Lo: 30900, Hi: 31100}, Clocks: clocks}},
		Memory: []roofline.GPUMemoryRoof{{Level: roofline.LevelDRAM, Kernel: "read", GBytesPerS: 3000, CI: roofline.Interval{Lo: 2990, Hi: 3010}, Clocks: clocks},
			{Level: roofline.LevelL2, Kernel: "read", GBytesPerS: 8000, CI: roofline.Interval{Lo: 7950, Hi: 8050}, Clocks: clocks}},
	}}}
	c := GPUConfig{Roofs: roofs, RoofsFile: "/r/roofs.json",
		Device: func(int) (*cupti.Device, error) { return &cupti.Device{Name: h100, ComputeCapability: "9.0"}, nil }}
	var run GPURun
	if err := gpuPoints(c, rec, &run, time.Unix(0, 0)); err != nil {
		t.Fatal(err)
	}
	if len(run.Points) != 2 {
		t.Fatalf("%d points, want 2", len(run.Points))
	}
	triad, scale := run.Points[0], run.Points[1]
	if triad.GPU.Tool != cupti.ToolProfiler || *triad.WorkFlops != 5e8 || *triad.TrafficBytes != 3e9 || triad.Seconds != 2e-3 ||
		triad.RoofsFile != "/r/roofs.json" || triad.FractionOfAttainable == nil || *triad.FractionOfAttainable < 0.4999 || *triad.FractionOfAttainable > 0.5001 {
		t.Errorf("triad: %+v", triad)
	}
	if scale.WorkFlops != nil || scale.RoofsFile != "" || scale.FractionOfAttainable != nil || len(scale.Flags) != 1 ||
		scale.Flags[0].Message != "kernel times only (tier c): CUPTI's range profiler measured 0 of its 1 launches" {
		t.Errorf("scale: %+v", scale)
	}
}
