package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rprof/rprof/cmd/rprof/internal/render"
	"github.com/rprof/rprof/dnnbench"
	"github.com/rprof/rprof/internal/docfile"
	"github.com/rprof/rprof/internal/stats"
	"github.com/rprof/rprof/internal/testutil"
	"github.com/rprof/rprof/roofline"
	"github.com/rprof/rprof/roofs"
)

func TestRoofsRejectsBadInputInOneLine(t *testing.T) {
	const dir = "testdata/roofs/"
	out := filepath.Join(t.TempDir(), "roofs.json")
	tests := []struct {
		name string
		args []string
		code int
	}{
		{"threads-zero", []string{"--threads", "0", "-o", out}, exitUsage},
		{"threads-not-a-list", []string{"--threads", "one,two", "-o", out}, exitUsage},
		{"fixed-negative", []string{"--fixed", "-3", "-o", out}, exitUsage},
		{"fixed-and-quick", []string{"--fixed", "5", "--quick", "-o", out}, exitUsage},
		{"unknown-method", []string{"--method", "mode", "-o", out}, exitUsage},
		{"unknown-order", []string{"--order", "random", "-o", out}, exitUsage},
		{"unknown-dgemm-space", []string{"--dgemm-space", "huge", "-o", out}, exitUsage},
		{"dgemm-budget-negative", []string{"--dgemm-budget", "-5s", "-o", out}, exitUsage},
		{"dgemm-budget-not-a-duration", []string{"--dgemm-budget", "20", "-o", out}, exitUsage},
		{"blas-arch-in-process", []string{"--blas-arch", "SkylakeX", "--in-process", "-o", out}, exitUsage},
		{"missing-blas", []string{"--blas", "/nonexistent/libopenblas.so.0", "-o", out}, exitUsage},
		{"extra-argument", []string{"-o", out, "now"}, exitUsage},
		{"dnn-unknown-problem", []string{"--dnn", "ip,conv9x9", "-o", out}, exitUsage},
		{"max-memory-too-small", []string{"--max-memory", "64K", "-o", out}, exitUsage},
		{"max-memory-not-a-size", []string{"--max-memory", "lots", "-o", out}, exitUsage},
		{"dnn-in-process", []string{"--dnn", "ip", "--in-process", "-o", out}, exitUsage},
		{"unwritable-output", []string{"-o", dir + "not-a-dir/roofs.json"}, exitInternal},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := rprofCLI(t, append([]string{"roofs"}, tt.args...)...)
			if code != tt.code {
				t.Errorf("exit %d, want %d; stderr: %s", code, tt.code, stderr)
			}
			if stdout != "" {
				t.Errorf("stdout %q, want nothing", stdout)
			}
			if n := strings.Count(stderr, "\n"); n > 2 {
				t.Errorf("error takes %d lines (want one, plus usage): %q", n, stderr)
			}
			testutil.Golden(t, dir+tt.name+".stderr", []byte(stderr))
			if _, err := os.Stat(out); err == nil {
				t.Errorf("%s was written", out)
			}
		})
	}
}

func TestRoofsRefusesAMissingOutputDirectoryAndCreatesNone(t *testing.T) {
	dir := t.TempDir()
	code, _, stderr := rprofCLI(t, "roofs", "--quick", "-o", filepath.Join(dir, "no", "such", "roofs.json"))
	if code == exitOK || !strings.Contains(stderr, "does not exist") {
		t.Errorf("exit %d, stderr %q; want a refusal naming the missing directory", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "no")); err == nil {
		t.Errorf("rprof roofs created the directory it was refused")
	}
}

func TestRoofsThreadsBeyondTheMachineIsAUsageError(t *testing.T) {
	code, _, stderr := rprofCLI(t, "roofs", "--threads", "1,100000", "-o", filepath.Join(t.TempDir(), "r.json"))
	if code != exitUsage || !strings.Contains(stderr, "thread scope 100000: rprof may use") {
		t.Errorf("exit %d, stderr %q; want a usage error naming the scope", code, stderr)
	}
}

// TestRoofsQuickWritesADocument runs the quick roof set on one thread with
// worker processes (this test binary plays the worker, see TestMain).
func TestRoofsQuickWritesADocument(t *testing.T) {
	if testing.Short() {
		t.Skip("measures for several seconds")
	}
	out := filepath.Join(t.TempDir(), "roofs.json")
	// 64 MiB keeps the test small, and short of DRAM's 512 MiB floor,
	// which the document must say.
	code, stdout, stderr := rprofCLI(t, "roofs", "--quick", "--threads", "1", "--dgemm-space", "quick", "--max-memory", "64M", "-o", out)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if stdout != "" {
		t.Errorf("stdout %q, want nothing (the table goes to stderr)", stdout)
	}
	r, err := docfile.ReadRoofs(out)
	if err != nil {
		t.Fatal(err)
	}
	checkOneThreadRoofs(t, r)
	if r.DGEMM == nil && !strings.Contains(stderr, "DGEMM skipped") {
		t.Errorf("no DGEMM roof and no word why:\n%s", stderr)
	}
	for _, want := range []string{"roof", "GFLOP/s", "GB/s", "note (memory-limit)", "note (dram-not-reached)", "wrote " + out} {
		if !strings.Contains(stderr, want) {
			t.Errorf("table lacks %q:\n%s", want, stderr)
		}
	}
	for _, b := range r.Bandwidth {
		if b.Level == "DRAM" || b.WorkingSetBytes > 64<<20 {
			t.Errorf("bandwidth roof %+v: want none at DRAM or past the 64 MiB limit", b)
		}
	}
	if len(r.CacheLevels(1)) == 0 {
		t.Error("no effective cache sizes in the document")
	}
}

// TestRoofsTableShowsValuesIntervalsTheoryAndStops renders a fixed report,
// so the table's layout is checked without measuring.
func TestRoofsTableShowsValuesIntervalsTheoryAndStops(t *testing.T) {
	rep := &roofs.Report{
		Roofs: roofline.Roofs{
			Schema:  roofline.RoofsSchema,
			Machine: roofline.Machine{CPU: roofline.CPU{ModelName: "AMD EPYC", Microarch: "amdzen4"}, Cores: 2},
			Compute: []roofline.ComputeRoof{{Name: "avx512-fma-fp64", ISA: "avx512", Precision: "fp64", Threads: 1,
				GFlops: 58.9, CI: roofline.Interval{Lo: 58.5, Hi: 59.0}, TheoreticalGFlops: 41.54},
				{Name: "onednn-ip brgemm:avx512_core fp32", Kind: roofline.ComputeKindLibrary, ISA: "avx512", Precision: "fp32", Threads: 2,
					GFlops: 380.2, CI: roofline.Interval{Lo: 371.9, Hi: 390.4},
					Library: &roofline.LibraryCall{Name: "oneDNN", Version: "v2.6.3", Runtime: "TBB", Primitive: "inner_product", Implementation: "brgemm:avx512_core",
						Problem: "mb128ic1024oc1024", WorkFlops: 268566528, LibraryThreads: 4,
						Flags: []roofline.Flag{{Code: roofline.FlagThreadsUnset, Message: "oneDNN's TBB runtime: rprof cannot set its thread count; it used 4"}}}}},
			Bandwidth: []roofline.BandwidthRoof{{Level: "L3", Kernel: "avx512-triad", Threads: 1, GBytesPerS: 98.1,
				CI: roofline.Interval{Lo: 98.1, Hi: 98.1}, IntervalUnknown: true, WorkingSetBytes: 16 << 20, LevelBytes: 136 << 20, LevelSource: roofline.CacheSourceMeasured},
				{Level: "DRAM", Kernel: "triad-nt", Threads: 1, GBytesPerS: 31.2,
					CI: roofline.Interval{Lo: 30.2, Hi: 31.7}, WorkingSetBytes: 128 << 20}},
			Caches: []roofline.CacheLevel{{Level: "L3", Threads: 1, Bytes: 136 << 20, Source: roofline.CacheSourceMeasured,
				Edge: &roofline.ByteRange{Lo: 96 << 20, Hi: 192 << 20}, DeclaredBytes: 480 << 20, DeclaredSource: roofline.CacheSourceSysfs}},
			DGEMM: &roofline.DGEMM{Library: "OpenBLAS", Version: "0.3.21", CoreName: "Cooperlake", N: 1000, M: 4000, K: 1024,
				Threads: 1, GFlops: 55.5, CI: roofline.Interval{Lo: 55.3, Hi: 55.7}},
			Tuning: roofline.Tuning{Seconds: 14.3, PartSeconds: map[string]float64{"compute": 4.1, "dgemm": 3.2, "bandwidth": 5, "dnn": 1.9},
				Steps: []roofline.Step{{Part: "setup", Name: "machine and clock", Seconds: 0.21}, {Part: "compute", Name: "1 thread", Seconds: 4.1},
					{Part: "bandwidth", Name: "1 thread placing 1 GiB", Seconds: 1.26}, {Part: "bandwidth", Name: "1 thread sweep", Seconds: 3.7},
					{Part: "dgemm", Name: "18 of 18 shapes", Seconds: 2.1}, {Part: "dgemm", Name: "climb of 1 duel(s)", Seconds: 1.1},
					{Part: "dnn", Name: "ip, 2 threads", Seconds: 1.9}},
				Configurations: 40, Evaluations: 900, Method: "median"},
			Flags: []roofline.Flag{{Code: roofline.FlagVM, Message: "measured in a virtual machine"}},
		},
		Details: roofs.Details{
			Compute: []roofs.Detail{
				{Config: "iters=65536", Reasons: map[stats.StopReason]int{stats.StopConverged: 1, stats.StopBelowBest: 1}},
				{Config: "mb128ic1024oc1024", Reasons: map[stats.StopReason]int{stats.StopConverged: 1}},
			},
			DGEMM: &roofs.Detail{Config: "n=1000 m=4000 k=1024", Reasons: map[stats.StopReason]int{stats.StopMaxTime: 3, stats.StopBelowBest: 12}},
			Bandwidth: []roofs.Detail{
				{Config: "avx512-triad at 16 MiB", Reasons: map[stats.StopReason]int{stats.StopMaxTime: 1}},
				{Config: "triad-nt at 128 MiB", Reasons: map[stats.StopReason]int{stats.StopMaxTime: 1}},
			},
		},
		DGEMMPath: "libopenblas.so.0",
	}
	var b strings.Builder
	render.WriteRoofsTable(&b, rep)
	testutil.Golden(t, "testdata/roofs/table.txt", []byte(b.String()))
}

func TestRoofsInterruptedSaysStoppingAndWritesNothing(t *testing.T) {
	out := filepath.Join(t.TempDir(), "roofs.json")
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr bytes.Buffer
	var at time.Time
	time.AfterFunc(300*time.Millisecond, func() { at = time.Now(); cancel() })
	code := run(ctx, []string{"roofs", "--quick", "--threads", "1", "-o", out}, strings.NewReader(""), &stdout, &stderr)
	took := time.Since(at)
	if code != 130 {
		t.Fatalf("exit %d, want 130; stderr: %s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "stopping") {
		t.Errorf("no stopping line:\n%s", stderr.String())
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("%s was written after the interrupt", out)
	}
	if ents, _ := os.ReadDir(filepath.Dir(out)); len(ents) != 0 {
		t.Errorf("the output directory holds %d entries after the interrupt", len(ents))
	}
	t.Logf("stopped %v after the interrupt", took)
}

// checkOneThreadRoofs checks a --threads 1 roofs document: every roof has
// a value inside its interval, and the search and its parts are timed.
func checkOneThreadRoofs(t *testing.T, r *roofline.Roofs) {
	t.Helper()
	if len(r.Compute) == 0 || len(r.Bandwidth) == 0 {
		t.Fatalf("document has %d compute and %d bandwidth roofs", len(r.Compute), len(r.Bandwidth))
	}
	for _, c := range r.Compute {
		if !(c.GFlops > 0) || c.CI.Lo > c.GFlops || c.CI.Hi < c.GFlops || c.Threads != 1 {
			t.Errorf("compute roof %+v: want a positive rate inside its interval on 1 thread", c)
		}
	}
	for _, b := range r.Bandwidth {
		if !(b.GBytesPerS > 0) || b.WorkingSetBytes <= 0 || b.Kernel == "" {
			t.Errorf("bandwidth roof %+v: want a rate, a working set and a kernel", b)
		}
	}
	if r.Tuning.Configurations == 0 || r.Tuning.Evaluations == 0 || len(r.Tuning.StopReasons) == 0 {
		t.Errorf("tuning %+v: want the search summarised", r.Tuning)
	}
	parts := 0.0
	for _, name := range []string{"compute", "dgemm", "bandwidth"} {
		s, ok := r.Tuning.PartSeconds[name]
		if !ok || s < 0 {
			t.Errorf("tuning part %q: %v, %v; want its time", name, s, ok)
		}
		parts += s
	}
	if parts > r.Tuning.Seconds {
		t.Errorf("parts take %.3f s, more than the whole run's %.3f s", parts, r.Tuning.Seconds)
	}
}

func TestMissingOneDNNAdviceNamesDebiansPackage(t *testing.T) {
	err := dnnLibraryAdvice(fmt.Errorf("%w: libdnnl.so.2: cannot open shared object file", dnnbench.ErrNoLibrary))
	if !errors.Is(err, dnnbench.ErrNoLibrary) || !strings.Contains(err.Error(), "apt-get install libdnnl2") || strings.Contains(err.Error(), "\n") {
		t.Errorf("advice %q: want one line naming libdnnl2, still an ErrNoLibrary", err)
	}
}
