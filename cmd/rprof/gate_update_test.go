package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/rprof/rprof/internal/docfile"
	"github.com/rprof/rprof/measure"
	"github.com/rprof/rprof/roofline"
)

// Sixteen concurrent `gate --update-baseline` runs into one point set
// (a CI matrix's jobs) keep all sixteen labels: each reads and writes the
// set under the file's lock. flock(2) locks are per open file, so
// goroutines contend as processes do.
func TestGateUpdateBaselineConcurrentlyKeepsEveryLabel(t *testing.T) {
	gateOutsideCI(t)
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	base := filepath.Join(t.TempDir(), "baseline.json")
	const n = 16
	var wg sync.WaitGroup
	codes := make([]int, n)
	stderrs := make([]string, n)
	for i := range n {
		wg.Go(func() {
			label := fmt.Sprintf("kernel-%02d", i)
			fake := func(_ context.Context, cfg measure.Config) (*roofline.Point, error) {
				return &roofline.Point{Schema: roofline.PointSchema, Label: cfg.Target.Label, Seconds: 1}, nil
			}
			codes[i], _, stderrs[i] = rprofMeasuring(t, fake, "gate", "--baseline", base, "--update-baseline", "--label", label, "--work", "1", "--traffic", "1", "--", "true")
		})
	}
	wg.Wait()
	for i := range n {
		if codes[i] != 0 {
			t.Fatalf("update %d: exit %d: %s", i, codes[i], stderrs[i])
		}
	}
	ps, err := docfile.ReadPoints(base)
	if err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, p := range ps {
		labels = append(labels, p.Label)
	}
	sort.Strings(labels)
	if len(labels) != n {
		t.Fatalf("%d of %d labels kept: %v", len(labels), n, labels)
	}
}

// The same with sixteen rprof processes, each measuring `true` at most three times.
func TestGateUpdateBaselineFromSixteenProcessesKeepsEveryLabel(t *testing.T) {
	if testing.Short() {
		t.Skip("starts 16 rprof processes")
	}
	dir := t.TempDir()
	base := filepath.Join(dir, "baseline.json")
	const n = 16
	cmds := make([]*exec.Cmd, n)
	outs := make([]strings.Builder, n)
	for i := range n {
		cmds[i] = exec.Command(os.Args[0], testRprofArg, "gate", "--baseline", base, "--update-baseline",
			"--label", fmt.Sprintf("kernel-%02d", i), "--work", "1", "--traffic", "1", "--max-repeat", "3", "--", "true")
		cmds[i].Env = append(os.Environ(), "XDG_RUNTIME_DIR="+dir, "XDG_CACHE_HOME="+dir, "GITHUB_ACTIONS=", "GITHUB_STEP_SUMMARY=")
		cmds[i].Stderr = &outs[i]
		if err := cmds[i].Start(); err != nil {
			t.Fatal(err)
		}
	}
	for i, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Errorf("update %d: %v\n%s", i, err, outs[i].String())
		}
	}
	ps, err := docfile.ReadPoints(base)
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != n {
		t.Fatalf("%d of %d labels kept", len(ps), n)
	}
}

// A baseline whose time is unknown (not positive after the overhead's
// subtraction) is not written: it wrote "0 s ± ?" before.
func TestUpdateBaselineRefusesAnUnknownTime(t *testing.T) {
	var stderr strings.Builder
	e := &env{stdout: &stderr, stderr: &stderr}
	path := filepath.Join(t.TempDir(), "base.json")
	p := &roofline.Point{Schema: roofline.PointSchema, Label: "triad", CI: roofline.Uncertainty{Confidence: 0.95, Method: "student-t", N: 3},
		Samples: roofline.Samples{Seconds: []float64{0.0005, 0.0006, -0.0001}}}
	err := updateBaseline(context.Background(), e, path, p, 0.02)
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != exitUndecided || !strings.Contains(err.Error(), "not positive") {
		t.Errorf("updateBaseline: %v, want exit %d saying the time is not positive", err, exitUndecided)
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("baseline written (%v)", err)
	}
}

// A baseline whose time interval stayed wider than --ci says so when it is
// written: every gate against it inherits that width.
func TestUpdateBaselineSaysWhenTheIntervalStayedWiderThanCI(t *testing.T) {
	for _, tt := range []struct {
		name     string
		lo, hi   float64
		wantWide bool
	}{
		{"within --ci", 0.99, 1.01, false},
		{"wider than --ci", 0.93, 1.07, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var stderr strings.Builder
			e := &env{stdout: &stderr, stderr: &stderr}
			p := &roofline.Point{Schema: roofline.PointSchema, Label: "triad", Seconds: 1,
				CI:      roofline.Uncertainty{Confidence: 0.95, Method: "student-t", N: 3, Seconds: roofline.Interval{Lo: tt.lo, Hi: tt.hi}},
				Samples: roofline.Samples{Seconds: []float64{tt.lo, 1, tt.hi}}}
			if err := updateBaseline(context.Background(), e, filepath.Join(t.TempDir(), "base.json"), p, 0.02); err != nil {
				t.Fatal(err)
			}
			if wide := strings.Contains(stderr.String(), "wider than --ci 2%"); wide != tt.wantWide {
				t.Errorf("%q: says wider than --ci %v, want %v", stderr.String(), wide, tt.wantWide)
			}
		})
	}
}
