package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rprof/rprof/internal/testutil"
)

// rprofCLI runs rprof with args and returns the exit status and
// streams.
func rprofCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), args, strings.NewReader(""), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func TestCompareCommand(t *testing.T) {
	const dir = "testdata/compare/"
	tests := []struct {
		name string
		args []string
		code int
	}{
		{"sets", []string{dir + "old.json", dir + "new.json"}, exitOK},
		{"mann-whitney", []string{"--test", "mann-whitney-u", dir + "old.json", dir + "new.json"}, exitOK},
		{"labels-do-not-match", []string{dir + "old.json", dir + "new-other-labels.json"}, exitUsage},
		{"other-schema-version", []string{dir + "old.json", dir + "future.json"}, exitUsage},
		{"missing-file", []string{dir + "old.json", dir + "absent.json"}, exitUsage},
		{"one-file", []string{dir + "old.json"}, exitUsage},
		{"bad-tolerance", []string{"--tolerance", "5x", dir + "old.json", dir + "new.json"}, exitUsage},
		{"unknown-test", []string{"--test", "sign", dir + "old.json", dir + "new.json"}, exitUsage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := rprofCLI(t, append([]string{"compare"}, tt.args...)...)
			if code != tt.code {
				t.Errorf("exit %d, want %d; stderr: %s", code, tt.code, stderr)
			}
			// The flag package prints the flag list itself on a bad flag.
			if tt.code != exitOK && !strings.HasPrefix(tt.name, "bad-") && strings.Count(stderr, "\n") > 2 {
				t.Errorf("error is not one line (plus usage): %q", stderr)
			}
			testutil.Golden(t, dir+tt.name+".stdout", []byte(stdout))
			testutil.Golden(t, dir+tt.name+".stderr", []byte(stderr))
		})
	}
}

func TestCompareWritesMarkdownAndBenchfmt(t *testing.T) {
	dir := t.TempDir()
	md, bench := filepath.Join(dir, "cmp.md"), filepath.Join(dir, "cmp.bench")
	code, _, stderr := rprofCLI(t, "compare", "--markdown", md, "--benchfmt", bench, "testdata/compare/old.json", "testdata/compare/new.json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for golden, path := range map[string]string{"testdata/compare/sets.md": md, "testdata/compare/sets.bench": bench} {
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		testutil.Golden(t, golden, got)
	}
}
