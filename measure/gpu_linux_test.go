package measure

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rprof/rprof/gpu/cupti"
	"github.com/rprof/rprof/gpu/cupti/cuptitest"
	"github.com/rprof/rprof/gpu/metrics"
	"github.com/rprof/rprof/roofline"
)

func TestRunGPUPlacesEachKernelWithItsDevice(t *testing.T) {
	lib, target := cuptitest.Build(t)
	h100 := &cupti.Device{Name: "NVIDIA H100 80GB HBM3", ComputeCapability: "9.0", SMClockMHz: 1980, MemClockMHz: 2619}
	c := GPUConfig{
		Target: Target{Command: []string{target}, Env: []string{
			"FAKE_CUPTI_KERNELS=0,1000,5000,_Z5triadPdPKdS1_d;1,0,700,gemm;0,9000,12000,_Z5triadPdPKdS1_d"}},
		Runtime: filepath.Join(t.TempDir(), "run"), CUPTI: lib,
		Device: func(i int) (*cupti.Device, error) {
			if i == 0 {
				return h100, nil
			}
			return nil, fmt.Errorf("device %d: CUDA_ERROR_INVALID_DEVICE", i)
		},
	}
	run, err := RunGPU(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if run.Launches != 3 || run.CUPTIVersion != 18 || run.Exit.Code != 0 || len(run.Points) != 2 || len(run.Devices) != 1 {
		t.Fatalf("run: %+v", run)
	}
	triad, gemm := run.Points[0], run.Points[1]
	if triad.Label != "triad" || triad.GPU.Kernel != "triad(double*, double const*, double const*, double)" || triad.Seconds != 7e-6 || triad.GPU.Launches != 2 || triad.GPU.DeviceName != h100.Name ||
		triad.GPU.ClockSource != roofline.ClockSourceAttribute || triad.WorkFlops != nil || triad.Command[0] != target {
		t.Errorf("triad: %+v %+v", triad, triad.GPU)
	}
	if gemm.GPU.Device != 1 || gemm.GPU.DeviceName != "" || gemm.Seconds != 7e-7 {
		t.Errorf("gemm, on a device the driver could not describe: %+v %+v", gemm, gemm.GPU)
	}
}

func TestRunGPUKeepsTheTargetsStatusWhenNothingWasRecorded(t *testing.T) {
	lib, _ := cuptitest.Build(t)
	run, err := RunGPU(context.Background(), GPUConfig{Target: Target{Command: []string{"sh", "-c", "exit 3"}},
		Runtime: filepath.Join(t.TempDir(), "run"), CUPTI: lib})
	if !errors.Is(err, cupti.ErrNoCUDA) || run == nil || run.Exit.Code != 3 {
		t.Errorf("got %+v, %v", run, err)
	}
	if _, err := RunGPU(context.Background(), GPUConfig{Target: Target{Command: []string{"no-such-program-rprof"}},
		Runtime: filepath.Join(t.TempDir(), "run"), CUPTI: lib}); !errors.Is(err, ErrNotFound) {
		t.Errorf("a target not found: %v", err)
	}
}

func TestRunGPUGivesProfiledKernelsWorkAndTraffic(t *testing.T) {
	lib, target := cuptitest.Build(t)
	// Two launches, each 500 fp64 FMA and 100 fp32 multiplies, 2048 DRAM
	// bytes, as the fake range profiler evaluates them; a negative NaN
	// for the L1 bytes, which is read as missing (the level left out),
	// not as a file rprof cannot read.
	var values []string
	for _, m := range metrics.All() {
		v := map[string]string{metrics.Work("d", "fma"): "500", metrics.Work("f", "mul"): "100", metrics.DRAM: "2048",
			metrics.L1: "-nan"}[m]
		if v == "" {
			v = "0"
		}
		values = append(values, m+"="+v)
	}
	run, err := RunGPU(context.Background(), GPUConfig{
		Target: Target{Command: []string{target, "context"}, Env: []string{
			"FAKE_CUPTI_KERNELS=0,1000,5000,_Z5triadPdPKdS1_d;0,9000,12000,_Z5triadPdPKdS1_d",
			"FAKE_PROFILER_RANGES=2*_Z5triadPdPKdS1_d:" + strings.Join(values, ",")}},
		Runtime: filepath.Join(t.TempDir(), "run"), CUPTI: lib})
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Points) != 1 {
		t.Fatalf("run: %+v", run)
	}
	p := run.Points[0]
	// W = 2 × (2×500 + 100); Q = 2 × 2048; T = 7 µs.
	if p.Source != roofline.SourceCounters || p.GPU.Tool != cupti.ToolProfiler || p.WorkFlops == nil || *p.WorkFlops != 2200 ||
		*p.TrafficBytes != 4096 || p.Seconds != 7e-6 || len(p.GPU.LevelBytes) != 2 {
		t.Errorf("point: %+v %+v", p, p.GPU)
	}
}
