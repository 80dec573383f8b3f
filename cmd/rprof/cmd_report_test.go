package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReportCommand(t *testing.T) {
	roofs := chartFixtures + "roofs_zen5_vm.json"
	triad := chartFixtures + "point_triad.json"
	above := chartFixtures + "point_above_roof.json"
	runChartCases(t, "testdata/report", []chartCase{
		{"markdown-stdout", []string{"report", "--roofs", roofs, "--format", "md", triad, above}, exitOK},
		{"markdown-by-extension", []string{"report", "--roofs", roofs, triad, "-o", "$TMP/summary.md"}, exitOK},
		{"html-file", []string{"report", "--roofs", roofs, "-o", "$TMP/report.html", triad}, exitOK},
		{"unknown-format", []string{"report", "--roofs", roofs, "--format", "pdf", triad}, exitUsage},
		{"unknown-extension", []string{"report", "--roofs", roofs, "-o", "$TMP/report.txt", triad}, exitUsage},
		{"nothing-to-report", []string{"report", "--format", "md"}, exitUsage},
		{"not-json", []string{"report", "--roofs", roofs, "testdata/plot/not-json.json"}, exitUsage},
		{"point-is-roofs", []string{"report", "--roofs", roofs, roofs}, exitUsage},
	})
}

// The file written with -o is the report itself, the same as on stdout.
func TestReportFileMatchesStdout(t *testing.T) {
	noDefaultRoofs(t)
	roofs, triad := chartFixtures+"roofs_zen5_vm.json", chartFixtures+"point_triad.json"
	out := filepath.Join(t.TempDir(), "report.html")
	if code, _, stderr := rprofCLI(t, "report", "--roofs", roofs, "-o", out, triad); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	_, stdout, _ := rprofCLI(t, "report", "--roofs", roofs, triad)
	file, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if string(file) != stdout {
		t.Error("report written with -o differs from the one on stdout")
	}
	if !strings.HasPrefix(stdout, "<!DOCTYPE html>") || !strings.Contains(stdout, "<svg") {
		t.Error("HTML report without doctype or inline SVG chart")
	}
}
