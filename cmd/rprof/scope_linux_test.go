package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rprof/rprof/measure"
	"github.com/rprof/rprof/roofline"
)

// TestRunPlacesRealProgramsUnderTheRoofsOfTheirParallelism runs real
// programs with analytic W and Q (no PMU needed) under roofs of 1 and 2
// threads: the README's single-threaded triad, and two busy processes at
// once (testdata/run/busy.c). A machine other programs keep busy gives a
// program less CPU than it asks for: there the point may go under fewer
// threads, and must then say so (busy-machine).
func TestRunPlacesRealProgramsUnderTheRoofsOfTheirParallelism(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not found")
	}
	if measure.OnlineCPUs() < 2 {
		t.Skipf("%d CPU: two busy processes cannot run at once", measure.OnlineCPUs())
	}
	dir := t.TempDir()
	build := func(src, name string) string {
		bin := filepath.Join(dir, name)
		if b, err := exec.Command("gcc", "-O2", "-o", bin, src).CombinedOutput(); err != nil {
			t.Fatalf("gcc %s: %v\n%s", src, err, b)
		}
		return bin
	}
	roofs := roofsOf(t, localMachine(t))
	tests := []struct {
		name    string
		argv    []string
		threads int
	}{
		{"the README's triad", []string{build("../../examples/triad.c", "triad"), "2000000", "5"}, 1},
		{"two busy processes", []string{build("testdata/run/busy.c", "busy"), "2", "300"}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "point.json")
			args := append([]string{"--work", "1e8", "--traffic", "1e8", "--repeat", "2", "--roofs", roofs, "--json", out, "--"}, tt.argv...)
			code, _, stderr := rprofRun(t, "", args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			p := readRunPoint(t, out)
			if p.ThreadsRule != roofline.ScopeRuleParallelism || !(p.Parallelism > 0) || !(p.CPUSeconds > 0) {
				t.Fatalf("scope %d by %q, parallelism %g, CPU %g s: want the parallelism rule", p.Threads, p.ThreadsRule, p.Parallelism, p.CPUSeconds)
			}
			busy := hasFlag(p, roofline.FlagBusyMachine)
			switch {
			case p.Threads == tt.threads:
			case busy && p.Threads < tt.threads:
				t.Logf("a busy machine gave the program %.2f CPUs: scope %d, flagged %s", p.Parallelism, p.Threads, roofline.FlagBusyMachine)
			default:
				t.Errorf("parallelism %.2f placed under %d threads, want %d (flags %+v)", p.Parallelism, p.Threads, tt.threads, p.Flags)
			}
			if !strings.Contains(stderr, "parallelism") || !strings.Contains(stderr, scopeWhy(&p)) {
				t.Errorf("the summary does not say which rule chose the scope (%q):\n%s", scopeWhy(&p), stderr)
			}
		})
	}
}
