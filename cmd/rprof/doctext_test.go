package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A label carrying escape sequences reaches no terminal raw, whichever
// command prints it: chart, Markdown, tables, merge's errors.
func TestDocumentTextReachesTheTerminalClean(t *testing.T) {
	gateOutsideCI(t)
	dir := t.TempDir()
	write := func(name, label string) string {
		p := filepath.Join(dir, name)
		doc := `{"schema": "rprof.point/v2", "label": "` + label + `", "seconds": 1, "work_flops": 1e9, "gflops": 1,
			"ci": {"confidence": 0.95, "n": 1, "seconds": {"lo": 1, "hi": 1}},
			"rank": {"job": "j\u001b[2J", "rank": 0, "size": 2, "node": "n", "launcher": "mpirun"},
			"flags": [{"code": "vm", "message": "m\u001b]0;title\u0007"}]}`
		os.WriteFile(p, []byte(doc), 0o644)
		return p
	}
	a := write("a.json", `evil\u001b]0;owned\u0007\u001b[31m`)
	b := write("b.json", `other\u001b[1m`)
	for _, args := range [][]string{
		{"plot", "--ascii", a},
		{"report", "--format", "md", a},
		{"compare", a, b},
		{"merge", a, b},
	} {
		t.Run(args[0], func(t *testing.T) {
			_, stdout, stderr := rprofCLI(t, args...)
			if strings.ContainsAny(stdout+stderr, "\x1b\x07") {
				t.Errorf("output carries escape sequences:\n%q\n%q", stdout, stderr)
			}
			if !strings.Contains(stdout+stderr, "evil?]0;owned?") && args[0] != "merge" {
				t.Errorf("the label is not shown, cleaned:\n%s\n%s", stdout, stderr)
			}
		})
	}
}
