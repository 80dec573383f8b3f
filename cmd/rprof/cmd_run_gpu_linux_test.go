package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rprof/rprof/gpu/cupti"
	"github.com/rprof/rprof/gpu/cupti/cuptitest"
	"github.com/rprof/rprof/internal/testutil"
	"github.com/rprof/rprof/roofline"
)

// The kernels a fake CUPTI hands rprof's injection library in the
// stand-in CUDA program: two of a triad on device 0, one GEMM on device 0
// (the fake driver's H100).
const fakeKernels = "FAKE_CUPTI_KERNELS=0,1000,801000,_Z5triadPdPKdS1_d;0,900000,2900000,gemm_kernel;0,3000000,3800000,_Z5triadPdPKdS1_d"

func TestRunGPUWritesEachKernelsTimeDeviceAndTier(t *testing.T) {
	lib, target := cuptitest.Build(t)
	t.Setenv(cupti.LibraryEnv, lib)
	t.Setenv("FAKE_CUPTI_KERNELS", strings.TrimPrefix(fakeKernels, "FAKE_CUPTI_KERNELS="))
	out := filepath.Join(t.TempDir(), "kernels.json")
	code, stderr := rprofGPU(t, h100(), nil, "run", "--gpu", "--json", out, "--", target)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	// The wall time is the fake program's own.
	stderr = regexp.MustCompile(`in [0-9.]+ [mµ]?s of wall time`).ReplaceAllString(stderr, "in WALL of wall time")
	testutil.Golden(t, "testdata/run/gpu-kernels.txt", []byte(stderr))
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var set roofline.PointSet
	if err := json.Unmarshal(b, &set); err != nil {
		t.Fatal(err)
	}
	if len(set.Points) != 2 || set.Points[0].GPU.Tool != "cupti" || set.Points[0].Source != roofline.SourceTimes ||
		set.Points[0].GPU.Launches != 2 || set.Points[1].GPU.DeviceName == "" {
		t.Errorf("points: %s", b)
	}
	// plot and report take the times-only kernels without placing them.
	roofs := filepath.Join(t.TempDir(), "roofs.json")
	if code, stderr := rprofGPU(t, h100(), nil, "roofs", "--gpu", "--quick", "-o", roofs); code != exitOK {
		t.Fatalf("roofs --gpu: exit %d: %s", code, stderr)
	}
	for _, args := range [][]string{{"plot", "--ascii"}, {"report", "--format", "md"}} {
		code, stdout, stderr := rprofCLI(t, append(args, "--roofs", roofs, "--gpu", out)...)
		if code != exitOK || !strings.Contains(stdout, "gpu-fma-fp64") ||
			!strings.Contains(stderr, `point "gemm_kernel" left out: intensity unknown (W or Q was not counted)`) {
			t.Errorf("%s: exit %d, stderr %s", args[0], code, stderr)
		}
	}
}

func TestRunGPUFailuresAreOneLine(t *testing.T) {
	lib, target := cuptitest.Build(t)
	tests := []struct {
		name string
		env  []string
		args []string
		code int
		want string
	}{
		{"no CUPTI", []string{cupti.LibraryEnv + "=", "LD_LIBRARY_PATH=", "CUDA_HOME=", "CUDA_PATH="}, []string{target}, exitInternal,
			"rprof run: no CUPTI library (libcupti.so) in $RPROF_CUPTI_LIB or "},
		{"profiling restricted", []string{"FAKE_CUPTI_ENABLE=35"}, []string{target}, exitInternal,
			"rprof run: CUPTI refused: cuptiActivityEnable: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES (35): profiling is restricted to administrators; fix: run as root"},
		{"CUPTI too old", []string{"FAKE_CUPTI_VERSION=9"}, []string{target}, exitInternal,
			"rprof run: CUPTI too old: CUPTI API version 9: rprof reads kernel records of version 10 (CUDA 9.0) and later; fix: install the CUPTI"},
		{"no CUDA", nil, []string{"sh", "-c", "exit 4"}, exitInternal,
			"rprof run: the target never initialised CUDA: no process loaded rprof's CUPTI library, so no kernel was recorded (the target exited with status 4); fix: CMD must be a CUDA program"},
		{"a CPU flag", nil, []string{"--repeat", "3", target}, exitUsage, "rprof run: --repeat does not apply with --gpu"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(cupti.LibraryEnv, lib)
			for _, kv := range tt.env {
				k, v, _ := strings.Cut(kv, "=")
				t.Setenv(k, v)
			}
			if _, err := cupti.Find("", os.Getenv); tt.name == "no CUPTI" && err == nil {
				t.Skip("this machine has a CUPTI where rprof looks")
			}
			code, stderr := rprofGPU(t, h100(), nil, append([]string{"run", "--gpu"}, tt.args...)...)
			if code != tt.code || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d, stderr %q; want %d, %q", code, stderr, tt.code, tt.want)
			}
			if n := strings.Count(stderr, "\n"); n > 2 {
				t.Errorf("%d lines: %q", n, stderr)
			}
		})
	}
}
