package main

import (
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rprof/rprof/internal/docfile"
	"github.com/rprof/rprof/internal/testutil"
	"github.com/rprof/rprof/measure"
	"github.com/rprof/rprof/pmu"
	"github.com/rprof/rprof/roofline"
)

// fakeGateMeasure makes the gate measure by returning results in turn instead of
// running anything, and records the configurations it was given.
type fakeGateMeasure struct {
	results []fakeGateResult
	got     []measure.Config
}

type fakeGateResult struct {
	point *roofline.Point
	err   error
}

// measure is the env's measure: the next recorded result.
func (f *fakeGateMeasure) measure(t *testing.T) func(context.Context, measure.Config) (*roofline.Point, error) {
	return func(ctx context.Context, cfg measure.Config) (*roofline.Point, error) {
		f.got = append(f.got, cfg)
		if len(f.got) > len(f.results) {
			t.Fatalf("measured %d times, want %d", len(f.got), len(f.results))
		}
		r := f.results[len(f.got)-1]
		return r.point, r.err
	}
}

// rprofMeasuring runs rprof's CLI as rprofCLI does, measuring with
// measure instead of running anything.
func rprofMeasuring(t *testing.T, measure func(context.Context, measure.Config) (*roofline.Point, error), args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr, measure: measure}
	code := runEnv(context.Background(), e, args)
	return code, stdout.String(), stderr.String()
}

// gateOutsideCI keeps a CI runner's environment, and roofs that 'rprof
// roofs' may have written on this machine, out of the tests.
func gateOutsideCI(t *testing.T) {
	t.Setenv("GITHUB_ACTIONS", "")
	t.Setenv("GITHUB_STEP_SUMMARY", "")
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
}

func gateReadPoint(t *testing.T, path string) *roofline.Point {
	t.Helper()
	ps, err := docfile.ReadPoints(path)
	if err != nil {
		t.Fatal(err)
	}
	return &ps[0]
}

func TestGateCommand(t *testing.T) {
	const dir = "testdata/gate/"
	base := gateReadPoint(t, dir+"baseline.json")
	slower := gateReadPoint(t, dir+"slower.json")
	failed := *slower
	failed.Exit = roofline.Exit{Code: 3}
	noPMU := &measure.NoCountersError{Err: fmt.Errorf("%w: no cpu PMU in sysfs", pmu.ErrNoPMU)}
	notFound := fmt.Errorf("spin: %w", measure.ErrNotFound)
	tests := []struct {
		name     string
		args     []string
		results  []fakeGateResult
		code     int
		measured int
	}{
		{"pass", []string{"--baseline", dir + "baseline.json"}, []fakeGateResult{{point: base}}, exitOK, 1},
		{"regression", []string{"--baseline", dir + "baseline.json", "--max-slowdown", "1%"}, []fakeGateResult{{point: slower}}, exitFailure, 1},
		{"within-limit", []string{"--baseline", dir + "baseline.json"}, []fakeGateResult{{point: slower}}, exitOK, 1},
		{"time-only-without-counters", []string{"--baseline", dir + "baseline.json", "--max-slowdown", "1%"}, []fakeGateResult{{err: noPMU}, {point: slower}}, exitFailure, 2},
		{"missing-baseline", []string{"--baseline", dir + "absent.json"}, nil, exitUsage, 0},
		{"other-schema-version", []string{"--baseline", dir + "future.json"}, nil, exitUsage, 0},
		{"label-not-in-baseline", []string{"--baseline", dir + "set.json", "--label", "stream"}, nil, exitUsage, 0},
		{"command-failed", []string{"--baseline", dir + "baseline.json"}, []fakeGateResult{{point: &failed}}, exitUndecided, 1},
		{"command-not-found", []string{"--baseline", dir + "baseline.json"}, []fakeGateResult{{err: notFound}}, exitNotFound, 1},
		{"no-command", []string{"--baseline", dir + "baseline.json", "--"}, nil, exitUsage, 0},
		{"no-baseline-flag", nil, nil, exitUsage, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gateOutsideCI(t)
			f := &fakeGateMeasure{results: tt.results}
			args := append([]string{"gate"}, tt.args...)
			if !slices.Contains(tt.args, "--") {
				args = append(args, "--", "./spin", "40000000")
			}
			code, stdout, stderr := rprofMeasuring(t, f.measure(t), args...)
			if code != tt.code {
				t.Errorf("exit %d, want %d; stderr: %s", code, tt.code, stderr)
			}
			if len(f.got) != tt.measured {
				t.Errorf("measured %d times, want %d", len(f.got), tt.measured)
			}
			if lines := strings.Count(stderr, "\n"); lines != 1 && !strings.Contains(stderr, "usage:") {
				t.Errorf("stderr is %d lines, want the reason on one: %q", lines, stderr)
			}
			testutil.Golden(t, dir+tt.name+".stdout", []byte(stdout))
			testutil.Golden(t, dir+tt.name+".stderr", []byte(stderr))
		})
	}
}

func TestGatePassesSettingsToMeasure(t *testing.T) {
	gateOutsideCI(t)
	f := &fakeGateMeasure{results: []fakeGateResult{{err: &measure.NoCountersError{Err: pmu.ErrNoPMU}}, {point: gateReadPoint(t, "testdata/gate/baseline.json")}}}
	code, _, stderr := rprofMeasuring(t, f.measure(t), "gate", "--baseline", "testdata/gate/baseline.json", "--label", "spin",
		"--ci", "3%", "--max-repeat", "7", "--roofs", "../../roofline/testdata/roofs_zen5_vm.json", "--work", "1e9",
		"--overhead", "./k -n 0", "--idle-baseline", "1s", "--", "./k", "-n", "5")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	cfg := f.got[0]
	if cfg.Target.Label != "spin" || cfg.Repetition.CI != 0.03 || cfg.Repetition.MaxRepeat != 7 || cfg.Placement.RoofsPath != "../../roofline/testdata/roofs_zen5_vm.json" || cfg.Placement.Roofs == nil ||
		cfg.Counting.Work == nil || *cfg.Counting.Work != 1e9 || cfg.Counting.Traffic != nil || !slices.Equal(cfg.Target.Command, []string{"./k", "-n", "5"}) ||
		!slices.Equal(cfg.Counting.Overhead, []string{"./k", "-n", "0"}) || cfg.Counting.IdleBaseline != time.Second {
		t.Errorf("config %+v", cfg)
	}
	if len(cfg.Counting.Events) != 0 || !slices.Equal(f.got[1].Counting.Events, []string{"task-clock"}) {
		t.Errorf("events %q then %q, want none then task-clock", cfg.Counting.Events, f.got[1].Counting.Events)
	}
}

func TestGateUpdatesBaseline(t *testing.T) {
	gateOutsideCI(t)
	dir := t.TempDir()
	slower := gateReadPoint(t, "testdata/gate/slower.json")
	failed := *slower
	failed.Exit = roofline.Exit{Signal: "SIGSEGV"}

	single := filepath.Join(dir, "base.json")
	f := &fakeGateMeasure{results: []fakeGateResult{{point: slower}, {point: &failed}}}
	if code, _, stderr := rprofMeasuring(t, f.measure(t), "gate", "--baseline", single, "--update-baseline", "--", "./spin"); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if got := gateReadPoint(t, single); got.Seconds != slower.Seconds || got.Label != slower.Label {
		t.Errorf("baseline holds %q %v s, want %q %v s", got.Label, got.Seconds, slower.Label, slower.Seconds)
	}
	// A failed run never replaces a baseline.
	code, _, stderr := rprofMeasuring(t, f.measure(t), "gate", "--baseline", single, "--update-baseline", "--", "./spin")
	if code != exitUndecided || !strings.Contains(stderr, "killed by SIGSEGV") {
		t.Errorf("exit %d, stderr %q; want %d saying the command was killed", code, stderr, exitUndecided)
	}
	if got := gateReadPoint(t, single); got.Exit.Signal != "" {
		t.Error("failed run written as baseline")
	}

	// In a point set, the point of the label is replaced and the others kept.
	set := filepath.Join(dir, "set.json")
	data, err := os.ReadFile("testdata/gate/set.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(set, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f = &fakeGateMeasure{results: []fakeGateResult{{point: slower}}}
	if code, _, stderr := rprofMeasuring(t, f.measure(t), "gate", "--baseline", set, "--update-baseline", "--", "./spin"); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	ps, err := docfile.ReadPoints(set)
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 2 || ps[0].Label != "spin" || ps[0].Seconds != slower.Seconds || ps[1].Label != "triad" {
		t.Errorf("set after update: %d points, first %q %v s", len(ps), ps[0].Label, ps[0].Seconds)
	}
}

func TestGateCIOutputs(t *testing.T) {
	gateOutsideCI(t)
	dir := t.TempDir()
	summary := filepath.Join(dir, "summary.md")
	t.Setenv("GITHUB_ACTIONS", "true")
	t.Setenv("GITHUB_STEP_SUMMARY", summary)
	md, junit, bench := filepath.Join(dir, "gate.md"), filepath.Join(dir, "junit.xml"), filepath.Join(dir, "gate.bench")
	f := &fakeGateMeasure{results: []fakeGateResult{{point: gateReadPoint(t, "testdata/gate/slower.json")}, {point: gateReadPoint(t, "testdata/gate/slower.json")}}}
	for range 2 {
		code, stdout, stderr := rprofMeasuring(t, f.measure(t), "gate", "--baseline", "testdata/gate/baseline.json", "--max-slowdown", "1%",
			"--markdown", md, "--junit", junit, "--benchfmt", bench, "--", "./spin")
		if code != exitFailure {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		if !strings.HasPrefix(stdout, "::error title=rprof gate spin::regression: time 2.04%25 slower") {
			t.Errorf("stdout does not start with the error annotation: %q", stdout)
		}
	}
	mdData, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	testutil.Golden(t, "testdata/gate/regression.md", mdData)
	sum, err := os.ReadFile(summary)
	if err != nil {
		t.Fatal(err)
	}
	if string(sum) != string(mdData)+string(mdData) {
		t.Errorf("job summary is not the Markdown appended once per run:\n%s", sum)
	}
	x, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	testutil.Golden(t, "testdata/gate/regression.xml", x)
	var doc struct {
		Failures int `xml:"failures,attr"`
	}
	if err := xml.Unmarshal(x, &doc); err != nil || doc.Failures != 1 {
		t.Errorf("junit: failures=%d err=%v", doc.Failures, err)
	}
	b, err := os.ReadFile(bench)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "run: baseline\n") || !strings.Contains(string(b), "run: new\n") {
		t.Errorf("benchmark file lacks a run: %s", b)
	}
}

func TestGateAnnotatesFailuresBeforeAVerdict(t *testing.T) {
	gateOutsideCI(t)
	t.Setenv("GITHUB_ACTIONS", "true")
	f := &fakeGateMeasure{}
	code, stdout, stderr := rprofMeasuring(t, f.measure(t), "gate", "--baseline", "testdata/gate/absent.json", "--", "./spin")
	want := "::error title=rprof gate::baseline testdata/gate/absent.json does not exist; create it with --update-baseline\n"
	if code != exitUsage || stdout != want {
		t.Errorf("exit %d, stdout %q; want 2 and %q (stderr %q)", code, stdout, want, stderr)
	}
}
