package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/rprof/rprof/measure"
	"github.com/rprof/rprof/pmu"
)

// The README's exit-status table is the one in exitCodes, row for row.
func TestREADMEExitTableIsTheCodesTable(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "## Exit status")
	if !ok {
		t.Fatal("README has no Exit status section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	row := regexp.MustCompile(`(?m)^\| (\d+) \| (.*) \|$`)
	var got []string
	for _, m := range row.FindAllStringSubmatch(section, -1) {
		got = append(got, m[1]+" "+m[2])
	}
	var want []string
	for _, c := range exitCodes {
		want = append(want, strconv.Itoa(c.code)+" "+c.meaning)
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("README exit table:\n%s\nwant (exitCodes):\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// Every command reports bad flags with 2, and nothing else.
func TestEveryCommandExitsTwoOnABadFlag(t *testing.T) {
	for _, c := range commands() {
		t.Run(c.Name, func(t *testing.T) {
			code, _, stderr := rprofCLI(t, c.Name, "--no-such-flag")
			if code != exitUsage || !strings.Contains(stderr, "usage: ") {
				t.Errorf("exit %d, stderr %q; want %d with the usage line", code, stderr, exitUsage)
			}
		})
	}
}

// report maps every error a command returns to a status of the table.
func TestErrorsMapToTheExitTable(t *testing.T) {
	cmd := &command{Name: "x", UsageLine: "rprof x"}
	tests := []struct {
		name string
		err  error
		want int
	}{
		{"no error", nil, exitOK},
		{"bad command line", usagef("bad"), exitUsage},
		{"an unclassified error is rprof's failure, not a failed check", errors.New("boom"), exitInternal},
		{"interrupted", fmt.Errorf("measure: %w", context.Canceled), exitInterrupted},
		{"a failed check", &exitError{code: exitFailure}, exitFailure},
		{"measure: bad configuration", measureFailure(fmt.Errorf("%w: repeat", measure.ErrInvalidConfig), ""), exitUsage},
		{"measure: a field refused", measureFailure(&measure.ConfigError{Kind: measure.ErrInvalidConfig, Fields: []string{"Repetition.Repeat"}, Err: errors.New("-1: must be at least 1")}, ""), exitUsage},
		{"measure: target not found", measureFailure(fmt.Errorf("k: %w", measure.ErrNotFound), ""), exitNotFound},
		{"measure: target not executable", measureFailure(fmt.Errorf("k: %w", measure.ErrNotExecutable), ""), exitNoExec},
		{"measure: the overhead command not found is not the target", measureFailure(&measure.OverheadError{Err: measure.ErrNotFound}, ""), exitInternal},
		{"measure: no counters", measureFailure(&measure.NoCountersError{Err: pmu.ErrNoPMU}, "could not measure"), exitInternal},
		{"measure: interrupted", measureFailure(context.Canceled, "could not measure"), exitInterrupted},
	}
	known := map[int]bool{}
	for _, c := range exitCodes {
		known[c.code] = true
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := report(&bytes.Buffer{}, cmd, tt.err)
			if got != tt.want {
				t.Errorf("exit %d, want %d", got, tt.want)
			}
			if !known[got] {
				t.Errorf("exit %d is not in the exit table", got)
			}
		})
	}
}

// Every status a command chooses is a named one of the table: no bare
// numbers (a target's own status passes through as p.Exit.Code).
func TestCommandsUseNamedExitStatuses(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	bare := regexp.MustCompile(`exitError\{code:\s*[0-9]`)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if loc := bare.FindIndex(src); loc != nil {
			line := 1 + strings.Count(string(src[:loc[0]]), "\n")
			t.Errorf("%s:%d: a bare exit status; name it in cli.go's table", f, line)
		}
	}
}

// A zero or negative value that means nothing is a bad command line in
// every command that has the flag, never "the default".
func TestMeaninglessZeroesAreUsageErrors(t *testing.T) {
	for _, c := range []struct {
		flag string
		args []string
	}{
		{"--confidence 0", []string{"run", "--confidence", "0", "--", "true"}},
		{"--confidence 1", []string{"run", "--confidence", "1", "--", "true"}},
		{"--repeat -1", []string{"run", "--repeat", "-1", "--", "true"}},
		{"--max-repeat 0", []string{"run", "--max-repeat", "0", "--", "true"}},
		{"--alpha 0", []string{"gate", "--alpha", "0", "--baseline", "b.json", "--", "true"}},
		{"--alpha 0", []string{"compare", "--alpha", "0", "a.json", "b.json"}},
		{"--fixed 0", []string{"roofs", "--fixed", "0"}},
		{"--invocations 0", []string{"roofs", "--invocations", "0"}},
		{"--confidence 0", []string{"dnn", "--confidence", "0", "--", "true"}},
		{"--max-repeat 0", []string{"dnn", "bench", "--max-repeat", "0", "conv3x3-nchw"}},
		{"--repeat 0", []string{"dnn", "bench", "--repeat", "0", "conv3x3-nchw"}},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			code, _, stderr := rprofCLI(t, c.args...)
			if code != exitUsage || !strings.Contains(stderr, c.flag+":") {
				t.Errorf("exit %d, stderr %q; want 2 naming %s", code, stderr, c.flag)
			}
		})
	}
}

// A document of a future schema, or whose intervals contradict
// themselves, is bad input (exit 2) for every command that reads it.
func TestBadDocumentsExitTwoInEveryReader(t *testing.T) {
	gateOutsideCI(t)
	dir := t.TempDir()
	docs := map[string]string{
		"future schema":     `{"schema": "rprof.point/v99", "label": "x", "seconds": 1}`,
		"negative n":        `{"schema": "rprof.point/v2", "label": "x", "seconds": 1, "ci": {"confidence": 0.95, "n": -3, "seconds": {"lo": 0.9, "hi": 1.1}}}`,
		"interval reversed": `{"schema": "rprof.point/v2", "label": "x", "seconds": 1, "ci": {"confidence": 0.95, "n": 3, "seconds": {"lo": 2.5, "hi": 0.5}}}`,
	}
	for name, doc := range docs {
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".json")
		os.WriteFile(path, []byte(doc), 0o644)
		for _, args := range [][]string{
			{"merge", path},
			{"compare", path, path},
			{"plot", "--ascii", path},
			{"report", "--format", "md", path},
			{"gate", "--baseline", path, "--label", "x", "--", "true"},
		} {
			t.Run(name+"/"+args[0], func(t *testing.T) {
				code, _, stderr := rprofCLI(t, args...)
				if code != exitUsage || !strings.Contains(stderr, path) {
					t.Errorf("exit %d, stderr %q; want 2 naming the file", code, stderr)
				}
			})
		}
	}
}
