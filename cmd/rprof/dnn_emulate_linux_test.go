package main

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rprof/rprof/internal/docfile"
	"github.com/rprof/rprof/measure"
	"github.com/rprof/rprof/measure/emulate"
	"github.com/rprof/rprof/roofline"
)

// TestDNNCountEmulateCountsEveryPrimitiveCall runs the small mode of the
// libdnnl fixture (a 3x3 convolution on 8 channels of 8x8 in NCHW and
// NHWC, GELU erf on 2x3x14x14 in NCHW and nChw8c) natively and under QEMU
// 7.2, whose AVX2 makes oneDNN pick jit:avx2 kernels.
func TestDNNCountEmulateCountsEveryPrimitiveCall(t *testing.T) {
	if _, err := emulate.FindQEMU(context.Background()); err != nil {
		t.Skipf("--count emulate needs Debian's qemu-user (scripts/test.sh installs it): %v", err)
	}
	bin := buildAllKinds(t)
	out := filepath.Join(t.TempDir(), "points.json")
	code, stdout, stderr := rprofDNN(t, context.Background(), "--count", "emulate", "--json", out, "--roofs", roofsFixture, "--", bin, "small")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	// The program's output once: the emulated run's is kept back.
	if want := "allkinds: ok\n\xffpartial line without newline"; string(stdout) != want {
		t.Errorf("stdout %q, want %q", stdout, want)
	}
	points, err := docfile.ReadPoints(out)
	if err != nil {
		t.Fatal(err)
	}
	// A point by kind and source layout (the native implementation
	// depends on the CPU).
	byLayout := func(kind, layout string) roofline.Point {
		i := slices.IndexFunc(points, func(p roofline.Point) bool {
			return strings.HasPrefix(p.Label, kind+" ") && strings.Contains(p.Label, " "+layout+" ")
		})
		if i < 0 {
			t.Fatalf("no %s point on %s among %d", kind, layout, len(points))
		}
		return points[i]
	}
	for _, tc := range []struct {
		kind, layout string
		// fp32 is the exact counted W: what the jit:avx2 kernels do.
		fp32 float64
		gap  bool // flagged counted-gap on W
	}{
		// NHWC: jit:avx2 skips the taps on zero padding (22 of 24 per
		// axis inside: 2·8·8·22·22 = 61,952) and folds the bias into the
		// accumulator (no FLOP); the formula counts 2·8·8·64·9 + 512.
		{"convolution", "acdb", 61952, false},
		// NCHW: 38 FLOP per element, as the formula (2·3·14·14·38).
		{"eltwise", "abcd", 44688, false},
		// nChw8c pads 3 channels to 8: 8/3 the work (seed 004's lesson).
		{"eltwise", "aBcd8b", 119168, true},
	} {
		p := byLayout(tc.kind, tc.layout)
		if p.Source != roofline.SourceEmulated || p.Analytic == nil || p.Emulation == nil || p.Emulation.Calls != 1 {
			t.Errorf("%s: source %s, analytic %v, emulation %+v; want counted", tc.kind+" "+tc.layout, p.Source, p.Analytic, p.Emulation)
			continue
		}
		if got := p.WorkByPrecision[roofline.Single]; got != tc.fp32 {
			t.Errorf("%s: counted %g fp32 FLOPs, want exactly %g", tc.kind+" "+tc.layout, got, tc.fp32)
		}
		hasGap := slices.ContainsFunc(p.Flags, func(f roofline.Flag) bool {
			return f.Code == roofline.FlagCountedGap && f.Subject == roofline.SubjectWork
		})
		if hasGap != tc.gap {
			t.Errorf("%s: W counted %g, analytic %g, counted-gap on W %v, want %v", tc.kind+" "+tc.layout, *p.WorkFlops, *p.Analytic.WorkFlops, hasGap, tc.gap)
		}
		if !slices.ContainsFunc(p.Flags, func(f roofline.Flag) bool { return f.Code == roofline.FlagModelled }) {
			t.Errorf("%s: no %s flag", tc.kind+" "+tc.layout, roofline.FlagModelled)
		}
		// OpenMP's threads (as many as the CPUs, unless OMP_NUM_THREADS
		// says) make the modelled Q depend on their interleaving.
		if n := p.Emulation.ImageThreads; n < 1 || hasFlag(p, roofline.FlagInterleaved) != (n > 1) || p.ExactTraffic() != (n == 1) {
			t.Errorf("%s: %d threads in one process, exact Q %v, flags %+v: want %s exactly when above 1", tc.kind+" "+tc.layout, n, p.ExactTraffic(), p.Flags, roofline.FlagInterleaved)
		}
	}
	gelu := byLayout("eltwise", "aBcd8b")
	if r := gelu.WorkByPrecision[roofline.Single] / *gelu.Analytic.WorkFlops; math.Abs(r-8.0/3) > 1e-9 {
		t.Errorf("padded GELU: counted/analytic %g, want 8/3", r)
	}
	for _, want := range []string{"Counted beside analytic", "counted-gap: counted W is 2.667x the analytic W", "jit:avx2 data aBcd8b"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
}

func TestDNNCountEmulateWithoutQEMUSaysWhatToInstall(t *testing.T) {
	empty := t.TempDir()
	t.Setenv("PATH", empty)
	t.Setenv(measure.QEMUEnv, "")
	out := filepath.Join(t.TempDir(), "points.json")
	code, stdout, stderr := rprofDNN(t, context.Background(), "--count", "emulate", "--json", out, "--", "/bin/true")
	if code != exitInternal || len(stdout) != 0 || !strings.Contains(stderr, "qemu-user") || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Errorf("exit %d, stderr %q; want %d and one line naming qemu-user", code, stderr, exitInternal)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a point set was written: %v", err)
	}
}

// TestDNNCountEmulateInterruptedWritesNothing interrupts the emulated run:
// the program returns at once natively and waits when it finds the marker
// its native run left.
func TestDNNCountEmulateInterruptedWritesNothing(t *testing.T) {
	if _, err := emulate.FindQEMU(context.Background()); err != nil {
		t.Skipf("--count emulate needs Debian's qemu-user (scripts/test.sh installs it): %v", err)
	}
	dir := t.TempDir()
	marker, out := filepath.Join(dir, "native-ran"), filepath.Join(dir, "points.json")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for {
			if _, err := os.Stat(marker); err == nil {
				time.Sleep(time.Second) // the emulated run is under way
				cancel()
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	script := "if [ -e " + marker + " ]; then sleep 6; else touch " + marker + "; fi"
	code, _, stderr := rprofDNN(t, ctx, "--count", "emulate", "--json", out, "--", "/bin/sh", "-c", script)
	if code != exitInterrupted || !strings.Contains(stderr, "interrupted") {
		t.Errorf("exit %d, stderr %q; want %d, interrupted", code, stderr, exitInterrupted)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a point set was written after the interrupt: %v", err)
	}
}
