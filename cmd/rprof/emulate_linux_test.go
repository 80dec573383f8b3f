package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rprof/rprof/measure"
	"github.com/rprof/rprof/measure/emulate"
	"github.com/rprof/rprof/roofline"
)

// emulateTarget compiles testdata/emulate/target.c, or skips without qemu
// or gcc.
func emulateTarget(t *testing.T) string {
	t.Helper()
	if _, err := emulate.FindQEMU(context.Background()); err != nil {
		t.Skipf("--count emulate needs Debian's qemu-user (scripts/test.sh installs it): %v", err)
	}
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not found")
	}
	out := filepath.Join(t.TempDir(), "target")
	if b, err := exec.Command("gcc", "-O1", "-pthread", "-o", out, "testdata/emulate/target.c").CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, b)
	}
	return out
}

func TestRunCountEmulateCountsExactlyAndKeepsStreamsAndStatus(t *testing.T) {
	target := emulateTarget(t)
	out := filepath.Join(t.TempDir(), "point.json")
	code, stdout, stderr := rprofRun(t, "hello, target\n", "--count", "emulate", "--repeat", "2", "--json", out, "--", target, "fma", "1000", "3")
	if code != 3 {
		t.Fatalf("exit %d, want the target's 3: %s", code, stderr)
	}
	// The emulated run and each native run copy stdin: the first gets it.
	if !strings.HasPrefix(stdout, "hello, target\n") {
		t.Errorf("stdout %q, want stdin passed through", stdout)
	}
	p := readRunPoint(t, out)
	if p.Source != roofline.SourceEmulated || p.WorkFlops == nil || *p.WorkFlops != 8000 || p.WorkByPrecision[roofline.Double] != 8000 {
		t.Errorf("source %s W %v by %v, want emulated 8000 fp64 FLOPs (1000 ymm FMAs)", p.Source, p.WorkFlops, p.WorkByPrecision)
	}
	if p.TrafficBytes == nil || len(p.Levels) < 2 || p.Emulation == nil || p.Seconds <= 0 {
		t.Errorf("Q %v levels %d emulation %v T %v: want modelled Q, levels and a native time", p.TrafficBytes, len(p.Levels), p.Emulation, p.Seconds)
	}
	if len(p.Functions) == 0 || p.Functions[0].Name != "main" || p.Functions[0].WorkFlops != 8000 {
		t.Errorf("functions %+v, want main first with all the work", p.Functions)
	}
	for _, want := range []string{"W and Q counted under emulation", "traffic between levels", "top functions", "modelled-traffic"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("summary lacks %q:\n%s", want, stderr)
		}
	}
}

func TestRunCountEmulateFollowsExecsOfChildren(t *testing.T) {
	target := emulateTarget(t)
	out := filepath.Join(t.TempDir(), "point.json")
	for _, mode := range []string{"fork-exec", "sh"} {
		code, _, stderr := rprofRun(t, "", "--count", "emulate", "--cache-model", "none", "--json", out, "--", target, mode, "1000")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", mode, code, stderr)
		}
		p := readRunPoint(t, out)
		want := 8000.0 // the exec'd child's FMAs
		if mode == "fork-exec" {
			want += 8000 // and the parent's
		}
		if p.WorkFlops == nil || *p.WorkFlops != want || hasFlag(p, roofline.FlagNotCounted) {
			t.Errorf("%s: W %v flags %+v, want %g with every exec followed", mode, p.WorkFlops, p.Flags, want)
		}
	}
}

// On one thread the modelled Q repeats to the byte; with two threads
// taking chunks of an array in turn it depends on their interleaving, and
// the point says so. (Measured here: 258,496 B in each of 11 one-thread
// runs; 272,000 to 337,600 B over 11 two-thread runs.)
func TestRunCountEmulateQIsExactOnOneThreadAndFlaggedOnTwo(t *testing.T) {
	target := emulateTarget(t)
	dir := t.TempDir()
	point := func(threads, run int) roofline.Point {
		out := filepath.Join(dir, fmt.Sprintf("%d-%d.json", threads, run))
		code, _, stderr := rprofRun(t, "", "--count", "emulate", "--cache-model", "32K/8,1M/16,32M/16", "--json", out, "--",
			target, "sweeps", fmt.Sprint(threads), "64", "8")
		if code != 0 {
			t.Fatalf("%d threads: exit %d: %s", threads, code, stderr)
		}
		if want := "Q depends on how the threads interleaved"; strings.Contains(stderr, want) != (threads > 1) {
			t.Errorf("%d threads: advice %q shown %v, want %v:\n%s", threads, want, !(threads > 1), threads > 1, stderr)
		}
		return readRunPoint(t, out)
	}
	a, b := point(1, 1), point(1, 2)
	if a.TrafficBytes == nil || b.TrafficBytes == nil || *a.TrafficBytes != *b.TrafficBytes || *a.WorkFlops != *b.WorkFlops {
		t.Errorf("one thread: W %v and %v, Q %v and %v: want both equal", a.WorkFlops, b.WorkFlops, a.TrafficBytes, b.TrafficBytes)
	}
	if !a.ExactTraffic() || hasFlag(a, roofline.FlagInterleaved) || a.Emulation.ImageThreads != 1 {
		t.Errorf("one thread: exact Q %v, flags %+v, emulation %+v: want exact and unflagged", a.ExactTraffic(), a.Flags, a.Emulation)
	}
	two := point(2, 1)
	// 64 KiB x 8 sweeps of one fp64 add per element, + one add per thread.
	if want := 64.0*128*8 + 2; two.WorkFlops == nil || *two.WorkFlops != want {
		t.Errorf("two threads: W %v, want %g", two.WorkFlops, want)
	}
	if two.ExactTraffic() || !two.ExactWork() || !hasFlag(two, roofline.FlagInterleaved) || two.Emulation.ImageThreads != 2 {
		t.Errorf("two threads: exact W %v, exact Q %v, flags %+v, emulation %+v: want exact W, Q flagged %s",
			two.ExactWork(), two.ExactTraffic(), two.Flags, two.Emulation, roofline.FlagInterleaved)
	}
}

func hasFlag(p roofline.Point, code string) bool {
	for _, f := range p.Flags {
		if f.Code == code {
			return true
		}
	}
	return false
}

func TestRunCountEmulateBadInputIsOneLine(t *testing.T) {
	target := emulateTarget(t)
	empty := t.TempDir()
	newer := t.TempDir()
	if err := os.WriteFile(filepath.Join(newer, emulate.QEMUBinary), []byte("#!/bin/sh\necho 'qemu-x86_64 version 5.2.0'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		path string // PATH for the run; "" keeps it
		args []string
		code int
		want string
	}{
		{"AVX-512 target", "", []string{target, "avx512"}, exitInternal, "x86-64-v3"},
		{"qemu-user missing", empty, []string{target, "fma", "1", "0"}, exitInternal, "install the qemu-user package"},
		{"unsupported QEMU", newer, []string{target, "fma", "1", "0"}, exitInternal, "rprof supports QEMU 6.0 to 8.x (plugin API 1), 9.0 and later (plugin API 2)"},
		{"QEMU named by --qemu", "", []string{"--qemu", filepath.Join(newer, emulate.QEMUBinary), target, "fma", "1", "0"}, exitInternal, "is QEMU 5.2.0"},
		{"unknown --emulate-cpu", "", []string{"--emulate-cpu", "Zen9", target, "fma", "1", "0"}, exitUsage, "Haswell"},
		{"--emulate-cpu without emulate", "", []string{"--count", "pmu", "--emulate-cpu", "Haswell", target}, exitUsage, "--emulate-cpu"},
		{"bad cache model", "", []string{"--cache-model", "32M", target}, exitUsage, "SIZE/WAYS"},
		{"cache model without emulate", "", []string{"--count", "pmu", "--cache-model", "32M/16", target}, exitUsage, "--cache-model"},
		{"emulate with analytic work", "", []string{"--work", "1", target}, exitUsage, "--work"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.path != "" {
				t.Setenv("PATH", tt.path)
				t.Setenv(measure.QEMUEnv, "")
			}
			args := append([]string{"--count", "emulate"}, tt.args...)
			code, _, stderr := rprofRun(t, "", args...)
			if code != tt.code {
				t.Errorf("exit %d, want %d: %s", code, tt.code, stderr)
			}
			var ours []string
			for _, l := range strings.Split(strings.TrimSpace(stderr), "\n") {
				if strings.HasPrefix(l, "rprof run: ") {
					ours = append(ours, l)
				}
			}
			if len(ours) != 1 || !strings.Contains(ours[0], tt.want) {
				t.Errorf("want one line naming %q, got:\n%s", tt.want, stderr)
			}
		})
	}
}

func TestRunCountEmulateLeavesNoFilesBehind(t *testing.T) {
	target := emulateTarget(t)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	if code, _, stderr := rprofRun(t, "", "--count", "emulate", "--", target, "fma", "10", "0"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	left, _ := os.ReadDir(tmp)
	if len(left) != 0 {
		t.Errorf("left in TMPDIR: %v", left)
	}
}

// TestCtrlCDuringTheEmulatedRunLeavesNothingBehind interrupts rprof while
// the target runs under QEMU: QEMU 7.2 writes no counts when a signal kills
// its guest, so rprof says so in one line and exits with the target's 130;
// no QEMU is left running and no temporary file is left.
func TestCtrlCDuringTheEmulatedRunLeavesNothingBehind(t *testing.T) {
	target := emulateTarget(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	marks := t.TempDir()
	started := filepath.Join(marks, "started")
	// 2e9 FMAs: a second natively, far longer under emulation.
	cmd := exec.Command(self, testRprofArg, "run", "--count", "emulate", "--cache-model", "none", "--", target, "touch", started, "2000000000")
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The native run creates the file first; the emulated run creates it
	// again once QEMU is running the target.
	waitFor := func(what string) {
		for i := 0; i < 600; i++ {
			if _, err := os.Stat(started); err == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		cmd.Process.Kill()
		t.Fatalf("%s never started: %s", what, stderr.String())
	}
	waitFor("the native run")
	os.Remove(started)
	waitFor("the emulated run")
	time.Sleep(500 * time.Millisecond)
	cmd.Process.Signal(os.Interrupt)
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 || !strings.Contains(stderr.String(), "killed by SIGINT under emulation") {
		t.Errorf("rprof ended with %v, want exit 130 and one line saying so:\n%s", err, stderr.String())
	}
	if out, _ := exec.Command("pgrep", "-f", tmp).Output(); len(out) > 0 {
		t.Errorf("processes left running: %s", out)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("left in TMPDIR: %v", left)
	}
}
