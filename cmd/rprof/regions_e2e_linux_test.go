package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rprof/rprof/internal/testutil"
	"github.com/rprof/rprof/regions"
	"github.com/rprof/rprof/roofline"
)

// TestRunRegionsEndToEnd measures a function of a compiled C target with
// rprof run --region, and refuses bad regions before running anything.
// No descriptor of the probes may stay open afterwards.
func TestRunRegionsEndToEnd(t *testing.T) {
	if err := regions.Supported(); err != nil {
		t.Skipf("regions cannot be probed here: %v", err)
	}
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not found")
	}
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	if out, err := exec.Command("gcc", "-O1", "-pthread", "-o", target, "../../regions/testdata/target.c", "-ldl").CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	t.Setenv("XDG_RUNTIME_DIR", dir) // the machine lock of this run only
	js := filepath.Join(dir, "p.json")
	before := testutil.OpenFDs(t)
	code, _, stderr := rprofCLI(t, "run", "--region", "spin_us", "--region", "outer", "-e", "page-faults", "--json", js, "--", target, "spin", "3", "2000")
	if code != exitOK {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	testutil.CheckNoNewFDs(t, before)
	if !strings.Contains(stderr, " Regions (") || !strings.Contains(stderr, "spin_us") {
		t.Errorf("no regions table:\n%s", stderr)
	}
	b, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	var p roofline.Point
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatal(err)
	}
	if len(p.Regions) != 2 || p.Regions[0].Name != "spin_us" || p.Regions[0].Calls != 3 || p.Regions[1].Calls != 0 {
		t.Fatalf("regions %+v", p.Regions)
	}
	if r := p.Regions[0]; r.Seconds < 3*0.002 || r.ProbeCostSeconds <= 0 || r.Seconds > r.MeasuredSeconds {
		t.Errorf("spin_us: %.6f s (measured %.6f s, probe cost %g s): want at least 6 ms, the cost subtracted", r.Seconds, r.MeasuredSeconds, r.ProbeCostSeconds)
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
