package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rprof/rprof/internal/docfile"
)

// TestGateEndToEnd gates a real program whose run time is changed on
// purpose: sleep 0.05 s as the baseline, then 0.05 s again (pass) and
// 0.25 s (regression). The limit is wide (50%) because this test runs on
// busy shared machines, where process start-up alone varies by milliseconds;
// the decision rules' precision is tested on recorded samples in
// internal/gate.
func TestGateEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("runs programs for a few seconds")
	}
	if _, err := exec.LookPath("sleep"); err != nil {
		t.Skipf("no sleep(1): %v", err)
	}
	gateOutsideCI(t)
	dir := t.TempDir()
	base := filepath.Join(dir, "baseline.json")
	junit := filepath.Join(dir, "junit.xml")
	gateArgs := func(extra ...string) []string {
		args := []string{"gate", "--baseline", base, "--label", "nap", "--max-slowdown", "50%",
			"--ci", "5%", "--max-repeat", "6", "--max-time", "10s", "--junit", junit}
		return append(args, extra...)
	}
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"no baseline yet", gateArgs("--", "sleep", "0.05"), exitUsage, "create it with --update-baseline"},
		{"write the baseline", gateArgs("--update-baseline", "--", "sleep", "0.05"), exitOK, `wrote baseline ` + base + `: "nap"`},
		{"same program passes", gateArgs("--", "sleep", "0.05"), exitOK, "rprof gate: pass: time"},
		{"five times slower fails", gateArgs("--", "sleep", "0.25"), exitFailure, "rprof gate: regression: time"},
		{"failing command cannot be measured", gateArgs("--", "sh", "-c", "exit 3"), exitUndecided, "could not measure: the command exited with status 3"},
		{"missing command cannot be measured", gateArgs("--", filepath.Join(dir, "absent")), exitNotFound, "could not measure"},
	}
	for _, tt := range tests {
		code, stdout, stderr := rprofCLI(t, tt.args...)
		if code != tt.code || !strings.Contains(stderr, tt.stderr) {
			t.Errorf("%s: exit %d, stderr %q; want %d saying %q\nstdout:\n%s", tt.name, code, stderr, tt.code, tt.stderr, stdout)
		}
		if strings.Count(stderr, "\n") != 1 {
			t.Errorf("%s: stderr is not one line: %q", tt.name, stderr)
		}
	}
	p, err := docfile.ReadPoints(base)
	if err != nil {
		t.Fatal(err)
	}
	if p[0].Label != "nap" || len(p[0].Samples.Seconds) < 3 || p[0].Seconds < 0.05 {
		t.Errorf("baseline %q: %v s over %d repetitions", p[0].Label, p[0].Seconds, len(p[0].Samples.Seconds))
	}
	// The last gate that got a point (the failing command) wrote its
	// report: an error, not a failure, since nothing was measured.
	if x, err := os.ReadFile(junit); err != nil || !strings.Contains(string(x), `failures="0" errors="1"`) ||
		!strings.Contains(string(x), "exited with status 3") {
		t.Errorf("junit after the failed command: %v\n%s", err, x)
	}
}
