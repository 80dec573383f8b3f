package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rprof/rprof/internal/testutil"
	"github.com/rprof/rprof/regions"
)

// probeTarget compiles regions/testdata/SRC with gcc -O1 and the flags
// for a probed run, skipping where regions cannot be probed; it returns
// the executable and the path for the run's JSON, in a directory that
// also holds this run's machine lock.
func probeTarget(t *testing.T, src string, flags ...string) (target, js string) {
	t.Helper()
	if err := regions.Supported(); err != nil {
		t.Skipf("regions cannot be probed here: %v", err)
	}
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not found")
	}
	dir := t.TempDir()
	target = filepath.Join(dir, strings.TrimSuffix(src, ".c"))
	args := append([]string{"-O1", "-o", target, filepath.Join("../../regions/testdata", src)}, flags...)
	if out, err := exec.Command("gcc", args...).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	t.Setenv("XDG_RUNTIME_DIR", dir) // the machine lock of this run only
	return target, filepath.Join(dir, "p.json")
}

// TestRunRegionsEndToEnd measures a function of a compiled C target with
// rprof run --region, and refuses bad regions before running anything.
// No descriptor of the probes may stay open afterwards.
func TestRunRegionsEndToEnd(t *testing.T) {
	target, js := probeTarget(t, "target.c", "-pthread", "-ldl")
	before := testutil.OpenFDs(t)
	code, _, stderr := rprofCLI(t, "run", "--region", "spin_us", "--region", "outer", "-e", "page-faults", "--json", js, "--", target, "spin", "3", "2000")
	if code != exitOK {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	testutil.CheckNoNewFDs(t, before)
	if !strings.Contains(stderr, " Regions (") || !strings.Contains(stderr, "spin_us") {
		t.Errorf("no regions table:\n%s", stderr)
	}
	p := readRunPoint(t, js)
	if len(p.Regions) != 2 || p.Regions[0].Name != "spin_us" || p.Regions[0].Calls != 3 || p.Regions[1].Calls != 0 {
		t.Fatalf("regions %+v", p.Regions)
	}
	// spin_us spins 2 ms by the clock, so the measured time is at least
	// 6 ms; the probe cost subtracted is an estimate, which under load may
	// exceed what the probes cost in this run by a few microseconds.
	if r := p.Regions[0]; r.MeasuredSeconds < 3*0.002 || r.Seconds < 0.99*3*0.002 || r.ProbeCostSeconds <= 0 || r.Seconds > r.MeasuredSeconds {
		t.Errorf("spin_us: %.6f s (measured %.6f s, probe cost %g s): want at least 6 ms measured, and the cost subtracted", r.Seconds, r.MeasuredSeconds, r.ProbeCostSeconds)
	}

	for _, tt := range []struct {
		name, spec, stderr string
	}{
		{"unknown symbol", "spinus", `no function "spinus" in ` + target + " (near: spin_us)"},
		{"bad syntax", target + ":0xZZ", "bad region spec"},
		{"missing library", "libnot-there.so.9:f", "region library libnot-there.so.9: not found"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := rprofCLI(t, "run", "--region", tt.spec, "--", target, "spin", "1", "1")
			if code != exitUsage || !strings.Contains(stderr, tt.stderr) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr, exitUsage, tt.stderr)
			}
			if stdout != "" {
				t.Errorf("the target ran although its region was refused: %q", stdout)
			}
		})
	}
}

// --region libm.so.6:exp probes the exp the program calls: the default
// version (exp@@GLIBC_2.29 on x86-64 glibc), not the compat one listed
// first in libm's dynamic symbols, which no new program calls.
func TestRunRegionCountsALibrarysDefaultVersion(t *testing.T) {
	target, js := probeTarget(t, "expcalls.c", "-lm")
	code, _, stderr := rprofCLI(t, "run", "--region", "libm.so.6:exp", "-e", "page-faults", "--json", js, "--", target, "1000")
	if code != exitOK {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	p := readRunPoint(t, js)
	if len(p.Regions) != 1 || p.Regions[0].Calls != 1000 {
		t.Fatalf("regions %+v, want exp called 1000 times\n%s", p.Regions, stderr)
	}
	t.Logf("probed %s", p.Regions[0].Probe)
}
