package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// ciEmulateMarker precedes the recipe in docs/ci.md that this test runs.
const ciEmulateMarker = "<!-- run in CI by cmd/rprof's TestCIEmulateRecipeRunsAsWritten, verbatim -->"

// The emulate recipe of docs/ci.md, run as written with this rprof on
// PATH, on a small kernel: the baseline is recorded and the gate passes.
func TestCIEmulateRecipeRunsAsWritten(t *testing.T) {
	emulateTarget(t) // skips without qemu-user or gcc
	doc, err := os.ReadFile("../../docs/ci.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(doc), ciEmulateMarker+"\n```sh\n")
	script, _, closed := strings.Cut(after, "\n```\n")
	if !ok || !closed {
		t.Fatalf("docs/ci.md has no sh block after %q", ciEmulateMarker)
	}
	dir := t.TempDir()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "bin")
	kernel := `#include <stdio.h>
static double a[20000], b[20000], c[20000];
int main(void) {
	double s = 0;
	for (int i = 0; i < 20000; i++)
		b[i] = i, c[i] = 1;
	for (int r = 0; r < 3; r++)
		for (int i = 0; i < 20000; i++)
			a[i] = b[i] + 3 * c[i];
	for (int i = 0; i < 20000; i++)
		s += a[i];
	printf("%g\n", s);
	return 0;
}
`
	for name, content := range map[string]string{
		"kernel.c":  kernel,
		"bin/rprof": "#!/bin/sh\nexec " + self + " " + testRprofArg + " \"$@\"\n",
	} {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "perf"), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "-eu", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "GITHUB_ACTIONS=")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "result: pass: W +0%") || !strings.Contains(string(out), "; Q +0%") {
		t.Errorf("the recipe: %v\n%s", err, out)
	}
}
