package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rprof/rprof/internal/testutil"
)

const chartFixtures = "../../roofline/testdata/"

// noDefaultRoofs points the default roofs path at a directory that does not
// exist, so tests never pick up the roofs of the machine they run on.
func noDefaultRoofs(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", "/nonexistent/rprof-test-cache")
}

// chartCase is one run of plot or report compared with golden streams.
type chartCase struct {
	name string
	args []string
	code int
}

func runChartCases(t *testing.T, dir string, cases []chartCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			noDefaultRoofs(t)
			tmp := t.TempDir()
			args := make([]string, len(tt.args))
			for i, a := range tt.args {
				args[i] = strings.ReplaceAll(a, "$TMP", tmp)
			}
			code, stdout, stderr := rprofCLI(t, args...)
			if code != tt.code {
				t.Errorf("exit status %d, want %d; stderr:\n%s", code, tt.code, stderr)
			}
			stderr = strings.ReplaceAll(stderr, tmp, "$TMP")
			testutil.Golden(t, filepath.Join(dir, tt.name+".stdout"), []byte(stdout))
			testutil.Golden(t, filepath.Join(dir, tt.name+".stderr"), []byte(stderr))
		})
	}
}

func TestPlotCommand(t *testing.T) {
	roofs := chartFixtures + "roofs_zen5_vm.json"
	triad := chartFixtures + "point_triad.json"
	runChartCases(t, "testdata/plot", []chartCase{
		{"ascii", []string{"plot", "--roofs", roofs, "--ascii", triad, chartFixtures + "point_dgemm.json", chartFixtures + "point_above_roof.json"}, exitOK},
		{"ascii-edge-cases", []string{"plot", "--roofs", roofs, "--ascii", "--theoretical", chartFixtures + "point_no_traffic.json", chartFixtures + "points_set.json"}, exitOK},
		{"ascii-compute-only", []string{"plot", "--roofs", chartFixtures + "roofs_compute_only.json", "--ascii", triad}, exitOK},
		{"ascii-points-only", []string{"plot", "--ascii", triad}, exitOK},
		{"ascii-two-threads", []string{"plot", "--roofs", roofs, "--threads", "2", "--ascii"}, exitOK},
		{"svg-flags-after-files", []string{"plot", triad, "-o", "$TMP/chart.svg", "--roofs", roofs}, exitOK},
		{"unknown-extension", []string{"plot", "--roofs", roofs, "-o", "$TMP/chart.gif", triad}, exitUsage},
		{"no-output", []string{"plot", "--roofs", roofs, triad}, exitUsage},
		{"nothing-to-draw", []string{"plot", "--ascii"}, exitUsage},
		{"not-json", []string{"plot", "--roofs", roofs, "--ascii", "testdata/plot/not-json.json"}, exitUsage},
		{"point-is-roofs", []string{"plot", "--roofs", roofs, "--ascii", roofs}, exitUsage},
		{"roofs-is-point", []string{"plot", "--roofs", triad, "--ascii", triad}, exitUsage},
		{"missing-file", []string{"plot", "--roofs", roofs, "--ascii", "testdata/plot/absent.json"}, exitUsage},
		{"bad-size", []string{"plot", "--roofs", roofs, "--size", "9by6", "-o", "$TMP/chart.png", triad}, exitUsage},
		{"tiny-size", []string{"plot", "--roofs", roofs, "--size", "1x1", "-o", "$TMP/chart.png", triad}, exitUsage},
		{"threads-not-measured", []string{"plot", "--roofs", roofs, "--threads", "8", "--ascii"}, exitUsage},
	})
}

func TestPlotWritesEachFormat(t *testing.T) {
	noDefaultRoofs(t)
	magic := map[string]string{"png": "\x89PNG", "svg": "<?xml", "pdf": "%PDF"}
	for ext, want := range magic {
		out := filepath.Join(t.TempDir(), "chart."+ext)
		code, _, stderr := rprofCLI(t, "plot", "--roofs", chartFixtures+"roofs_zen5_vm.json", "-o", out, chartFixtures+"point_triad.json")
		if code != exitOK {
			t.Fatalf("%s: exit %d: %s", ext, code, stderr)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(b, []byte(want)) {
			t.Errorf("%s output starts with %q", ext, b[:min(len(b), 8)])
		}
	}
}

func TestPlotUsesTheDefaultRoofsWhenPresent(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	roofs, err := os.ReadFile(chartFixtures + "roofs_zen5_vm.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(cache, "rprof"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cache, "rprof", "roofs.json"), roofs, 0o644); err != nil {
		t.Fatal(err)
	}
	_, withDefault, _ := rprofCLI(t, "plot", "--ascii", chartFixtures+"point_triad.json")
	_, explicit, _ := rprofCLI(t, "plot", "--ascii", "--roofs", chartFixtures+"roofs_zen5_vm.json", chartFixtures+"point_triad.json")
	if withDefault != explicit || !strings.Contains(withDefault, "DRAM 45.6 GB/s") {
		t.Errorf("chart with the default roofs differs from the one with --roofs:\n%s\nvs\n%s", withDefault, explicit)
	}
}
