package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/rprof/rprof/internal/testutil"
)

func TestMergeCommand(t *testing.T) {
	const dir = "testdata/merge/"
	ranks := func(rs ...string) []string {
		var out []string
		for _, r := range rs {
			out = append(out, dir+"ompi-1234.rank"+r+".json")
		}
		return out
	}
	roofs := filepath.Join("..", "..", "roofline", "testdata", "roofs_zen5_vm.json")
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"complete job per node", append([]string{"merge", "--roofs", roofs, "--nodes"}, ranks("0", "1", "2", "3")...), exitOK, ""},
		{"a dead rank", append([]string{"merge", "--roofs", roofs}, ranks("0", "1", "3")...), exitFailure, ""},
		{"a dead owner", append([]string{"merge"}, ranks("0", "1", "2")...), exitFailure, ""},
		{"mixed versions", append([]string{"merge", dir + "other-version.rank1.json"}, ranks("0", "2", "3")...), exitInternal, "different rprof versions (v-fixture, v-other)"},
		{"no files", []string{"merge"}, exitUsage, "no points"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := rprofCLI(t, tt.args...)
			if code != tt.code || !strings.Contains(stderr, tt.stderr) {
				t.Fatalf("exit %d, stderr %q; want %d saying %q", code, stderr, tt.code, tt.stderr)
			}
			if tt.code == exitOK || tt.code == exitFailure {
				testutil.Golden(t, filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "-")+".golden"), []byte(stdout))
			}
		})
	}
}
