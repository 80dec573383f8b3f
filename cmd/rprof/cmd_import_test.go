package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/rprof/rprof/internal/docfile"
	"github.com/rprof/rprof/internal/testutil"
	"github.com/rprof/rprof/machine"
	"github.com/rprof/rprof/roofline"
)

const ncuFixture = "../../gpu/ncu/testdata/h100-raw.csv"

// gpuRoofsDoc writes roofs of an H100 SXM as rprof roofs --gpu would:
// 31000 GFLOP/s fp64, 3000 GB/s DRAM.
func gpuRoofsDoc(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "roofs.json")
	clocks := roofline.GPUClocks{SMClockMHz: 1980, MemClockMHz: 2619, Source: roofline.ClockSourceAttribute}
	doc := roofline.Roofs{Schema: roofline.RoofsSchema, Machine: machine.LiveHost().Describe(), GPUs: []roofline.GPURoofs{{
		Device: roofline.GPUDevice{Index: 0, Name: "NVIDIA H100 80GB HBM3", ComputeCapability: "9.0", SMs: 132},
		Compute: []roofline.GPUComputeRoof{
			{Name: "gpu-fma-fp64", Precision: roofline.Double, GFlops: 31000, CI: roofline.Interval{Lo: 30900, Hi: 31100}, TheoreticalGFlops: 33454, Clocks: clocks},
			{Name: "gpu-fma-fp32", Precision: roofline.Single, GFlops: 62000, CI: roofline.Interval{Lo: 61900, Hi: 62100}, TheoreticalGFlops: 66908, Clocks: clocks}},
		Memory: []roofline.GPUMemoryRoof{
			{Level: "L1", Kernel: "read", GBytesPerS: 20000, CI: roofline.Interval{Lo: 19900, Hi: 20100}, Clocks: clocks},
			{Level: "L2", Kernel: "read", GBytesPerS: 8000, CI: roofline.Interval{Lo: 7950, Hi: 8050}, Clocks: clocks},
			{Level: "DRAM", Kernel: "read", GBytesPerS: 3000, CI: roofline.Interval{Lo: 2990, Hi: 3010}, TheoreticalGBytesPerS: 3352, Clocks: clocks}},
	}}}
	if err := testutil.WriteDoc(path, doc); err != nil {
		t.Fatal(err)
	}
	return path
}

// The fixture's triad sits on DRAM's roof, dgemm_tile under fp64's, and
// reduce_sum, whose DRAM bytes were not collected, is named.
func TestImportNCUPlacesKernelsUnderTheGPUsRoofs(t *testing.T) {
	roofs := gpuRoofsDoc(t)
	out := filepath.Join(t.TempDir(), "kernels.json")
	code, stdout, stderr := rprofCLI(t, "import", "ncu", "--roofs", roofs, "-o", out, ncuFixture)
	if code != exitOK || stdout != "" {
		t.Fatalf("exit %d, stdout %q, stderr %s", code, stdout, stderr)
	}
	testutil.Golden(t, "testdata/import/h100.stderr", []byte(strings.ReplaceAll(stderr, out, "$OUT")))
	ps, err := docfile.ReadPoints(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 2 || ps[0].Bound == nil || ps[0].Bound.Roof != "DRAM" || ps[1].Bound == nil || ps[1].Bound.Roof != "gpu-fma-fp64" || ps[0].RoofsFile != roofs {
		t.Fatalf("points %+v", ps)
	}
	// plot --gpu draws them.
	code, chart, stderr := rprofCLI(t, "plot", "--roofs", roofs, "--gpu", "--ascii", out)
	if code != exitOK || !strings.Contains(chart, "triad") || !strings.Contains(chart, "dgemm_tile") {
		t.Errorf("plot: exit %d, %s\n%s", code, stderr, chart)
	}
}

func TestImportNCUWithoutRoofsWritesUnplacedPoints(t *testing.T) {
	code, _, stderr := rprofCLI(t, "import", "ncu", "--roofs", "testdata/import/cpu-only-roofs.json", ncuFixture)
	if code != exitOK || strings.Count(stderr, "not placed (no GPU roofs)") != 2 {
		t.Errorf("exit %d: %s", code, stderr)
	}
}

func TestImportRejectsBadInputInOneLine(t *testing.T) {
	for _, tt := range []struct {
		name string
		args []string
	}{
		{"no source", nil},
		{"other source", []string{"nvprof", ncuFixture}},
		{"missing file", []string{"ncu", "testdata/import/absent.csv"}},
		{"not an export", []string{"ncu", "testdata/import/cpu-only-roofs.json"}},
		{"nothing placeable", []string{"ncu", "testdata/import/nothing-placeable.csv"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := rprofCLI(t, append([]string{"import"}, tt.args...)...)
			if code != exitUsage || stdout != "" {
				t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
			}
			if n := strings.Count(stderr, "\n"); n > 3 {
				t.Errorf("%d lines: %s", n, stderr)
			}
		})
	}
}
