package roofline

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

func writeDocFile(t *testing.T, doc string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "roofs.json")
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestReadRoofsUpgradesVersion2WithoutGPUs(t *testing.T) {
	r, err := readRoofs(writeDocFile(t, `{"schema": "rprof.roofs/v2", "bandwidth": [{"level": "DRAM", "threads": 1, "gbytes_per_s": 40}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if r.Schema != RoofsSchema || len(r.GPUs) != 0 || len(r.Bandwidth) != 1 {
		t.Errorf("read %+v", r)
	}
}

const gpuDoc = `{"schema": "rprof.roofs/v3", "gpus": [{"device": {"index": 0, "name": "NVIDIA H100 80GB HBM3", "compute_capability": "9.0", "sms": 132},
	"compute": [{"name": "gpu-fma-fp64", "precision": "fp64", "gflops": 31000, "ci": {"lo": 30900, "hi": 31100}, "theoretical_gflops": 33454,
		"kernel": "fma_fp64_ilp4_u8", "ilp": 4, "launch": {"blocks": 528, "threads": 256}, "clocks": {"sm_clock_mhz": 1980, "mem_clock_mhz": 2619, "source": "attribute"}}],
	"memory": [{"level": "DRAM", "kernel": "read", "gbytes_per_s": %s, "ci": {"lo": 2900, "hi": 3000}, "working_set_bytes": 2147483648}]}]}`

func TestGPUViewIsOneScopeOfTheGPUsRoofs(t *testing.T) {
	r, err := readRoofs(writeDocFile(t, fmt.Sprintf(gpuDoc, "2950")))
	if err != nil {
		t.Fatal(err)
	}
	g, ok := r.GPU(0)
	if !ok {
		t.Fatal("no GPU 0")
	}
	if _, ok := r.GPU(1); ok {
		t.Error("GPU 1 found")
	}
	v := r.GPUView(g)
	c, ok := v.PeakCompute(GPUThreads, Double)
	if !ok || c.GFlops != 31000 || c.TheoreticalGFlops != 33454 || c.FrequencyGHz != 1.98 {
		t.Errorf("peak %+v, %v", c, ok)
	}
	b, ok := v.BandwidthAt("DRAM", GPUThreads)
	if !ok || b.GBytesPerS != 2950 {
		t.Errorf("DRAM %+v, %v", b, ok)
	}
	pl, err := v.Place(1, 2950, GPUThreads, Double)
	if err != nil || pl.Bound.Kind != BoundMemory {
		t.Errorf("placement %+v, %v", pl, err)
	}
}

func TestReadRoofsRejectsABadGPUFigure(t *testing.T) {
	_, err := readRoofs(writeDocFile(t, fmt.Sprintf(gpuDoc, "-1")))
	if !errors.Is(err, ErrInvalid) {
		t.Errorf("err = %v", err)
	}
}
