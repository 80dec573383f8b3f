package main

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rprof/rprof/gpu/cuda"
	"github.com/rprof/rprof/gpu/cuda/cudatest"
	"github.com/rprof/rprof/internal/docfile"
	"github.com/rprof/rprof/internal/testutil"
	"github.com/rprof/rprof/machine"
	"github.com/rprof/rprof/roofline"
)

// rprofGPU runs rprof with drv as the CUDA driver.
func rprofGPU(t *testing.T, drv cuda.Driver, loadErr error, args ...string) (int, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr,
		cuda: func() (cuda.Driver, error) { return drv, loadErr }}
	code := runEnv(context.Background(), e, args)
	if stdout.Len() > 0 {
		t.Errorf("stdout %q", stdout.String())
	}
	return code, stderr.String()
}

func h100() *cudatest.Fake {
	return &cudatest.Fake{Devices: []cudatest.Device{cudatest.H100SXM()}}
}

// Each way the GPU cannot be measured is one line (two with usage).
func TestRoofsGPUFailuresAreOneLine(t *testing.T) {
	out := filepath.Join(t.TempDir(), "roofs.json")
	tests := []struct {
		name    string
		drv     cuda.Driver
		loadErr error
		args    []string
		code    int
		want    string
	}{
		{"no driver", nil, fmt.Errorf("%w: libcuda.so.1: cannot open shared object file", cuda.ErrNoDriver), nil, exitInternal,
			"rprof roofs: no CUDA driver: libcuda.so.1: cannot open shared object file; fix: install NVIDIA's driver"},
		{"no device", &cudatest.Fake{}, nil, nil, exitInternal, "rprof roofs: cuInit: CUDA_ERROR_NO_DEVICE (100); fix: no GPU is visible"},
		{"device out of range", h100(), nil, []string{"--device", "3"}, exitUsage, "rprof roofs: --device 3: CUDA device 3 out of range: 1 devices (0 to 0)\nusage:"},
		{"JIT error", &cudatest.Fake{Devices: []cudatest.Device{cudatest.H100SXM()}, JITLog: "line 12; error : bad\nptxas fatal : aborted\n"}, nil, nil, exitInternal,
			"rprof roofs: PTX JIT: cuModuleLoadDataEx: CUDA_ERROR_INVALID_PTX (218): line 12; error : bad; ptxas fatal : aborted\n"},
		{"flag of the CPU's", h100(), nil, []string{"--dnn", "ip"}, exitUsage, "--dnn does not apply with --gpu"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stderr := rprofGPU(t, tt.drv, tt.loadErr, append([]string{"roofs", "--gpu", "--quick", "-o", out}, tt.args...)...)
			if code != tt.code || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d, stderr %q; want %d, %q", code, stderr, tt.code, tt.want)
			}
			if n := strings.Count(stderr, "\n"); n > 2 {
				t.Errorf("%d lines", n)
			}
		})
	}
	if code, stderr := rprofGPU(t, nil, nil, "roofs", "--device", "1"); code != exitUsage || !strings.Contains(stderr, "--device needs --gpu") {
		t.Errorf("--device without --gpu: exit %d, %q", code, stderr)
	}
}

// The GPU's roofs join this machine's CPU roofs in the document, replacing
// the same device's; a document of another machine is replaced.
func TestRoofsGPUWritesTheGPUSection(t *testing.T) {
	dir := t.TempDir()
	mine, foreign := filepath.Join(dir, "mine.json"), filepath.Join(dir, "foreign.json")
	here := machine.LiveHost().Describe()
	cpuRoof := roofline.BandwidthRoof{Level: "DRAM", Threads: 1, GBytesPerS: 40, CI: roofline.Interval{Lo: 39, Hi: 41}}
	if err := testutil.WriteDoc(mine, roofline.Roofs{Schema: roofline.RoofsSchema, Machine: here, Bandwidth: []roofline.BandwidthRoof{cpuRoof},
		GPUs: []roofline.GPURoofs{{Device: roofline.GPUDevice{Index: 0, Name: "old"}}}}); err != nil {
		t.Fatal(err)
	}
	other := here
	other.Hostname += "-elsewhere"
	other.CPU.ModelName += " (another)"
	if err := testutil.WriteDoc(foreign, roofline.Roofs{Schema: roofline.RoofsSchema, Machine: other, Bandwidth: []roofline.BandwidthRoof{cpuRoof}}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		path    string
		cpuKept bool
	}{{mine, true}, {foreign, false}} {
		code, stderr := rprofGPU(t, h100(), nil, "roofs", "--gpu", "--quick", "-o", tt.path)
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		for _, want := range []string{"GPU 0: NVIDIA H100 80GB HBM3 (compute capability 9.0, 132 SMs", "gpu-fma-fp64", "gpu-fma-fp16", "\nDRAM ", "\nL2 ", "\nL1 ", "ladder (FLOP/byte: GFLOP/s): 0.125: ", "frequency-source: "} {
			if !strings.Contains(stderr, want) {
				t.Errorf("table lacks %q:\n%s", want, stderr)
			}
		}
		r, err := docfile.ReadRoofs(tt.path)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.GPUs) != 1 || r.GPUs[0].Device.Name != "NVIDIA H100 80GB HBM3" || len(r.GPUs[0].Compute) != 3 || len(r.GPUs[0].Memory) != 3 {
			t.Errorf("%s: GPUs %+v", tt.path, r.GPUs)
		}
		if kept := len(r.Bandwidth) == 1; kept != tt.cpuKept {
			t.Errorf("%s: CPU roofs kept %v, want %v", tt.path, kept, tt.cpuKept)
		}
	}
	// plot and report draw them.
	code, stdout, stderr := rprofCLI(t, "plot", "--roofs", mine, "--gpu", "--ascii")
	if code != exitOK || !strings.Contains(stdout, "gpu-fma-fp64") || !strings.Contains(stdout, "NVIDIA H100 80GB HBM3 (GPU 0)") {
		t.Errorf("plot: exit %d, %s\n%s", code, stderr, stdout)
	}
	code, stdout, stderr = rprofCLI(t, "report", "--roofs", mine, "--gpu", "--format", "md")
	if code != exitOK || !strings.Contains(stdout, "gpu-fma-fp16") {
		t.Errorf("report: exit %d, %s\n%s", code, stderr, stdout)
	}
	for _, args := range [][]string{{"--device", "1"}, {"--gpu", "--device", "1"}} {
		code, _, stderr = rprofCLI(t, append([]string{"plot", "--roofs", mine, "--ascii"}, args...)...)
		if code != exitUsage || strings.Count(stderr, "\n") > 2 {
			t.Errorf("plot %v: exit %d, %q", args, code, stderr)
		}
	}
}
