package chart

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/rprof/rprof/internal/docfile"
	"github.com/rprof/rprof/internal/testutil"
	"github.com/rprof/rprof/roofline"

	"github.com/rprof/rprof/internal/unit"
)

const fixtures = "../../../../roofline/testdata/"

func readRoofs(t *testing.T, name string) *roofline.Roofs {
	t.Helper()
	r, err := docfile.ReadRoofs(fixtures + name)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func readPoints(t *testing.T, names ...string) []roofline.Point {
	t.Helper()
	var out []roofline.Point
	for _, n := range names {
		p, err := docfile.ReadPoints(fixtures + n)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, p...)
	}
	return out
}

var allPoints = []string{"point_triad.json", "point_dgemm.json", "point_above_roof.json", "point_no_traffic.json", "points_set.json"}

// The SVG and text renderings are deterministic, so they are compared with
// golden files; regenerate with go test ./internal/chart -update.
func TestRenderMatchesGolden(t *testing.T) {
	tests := []struct {
		name   string
		roofs  string // "" for none
		points []string
		opts   Options
	}{
		{"full", "roofs_zen5_vm.json", allPoints, Options{Theoretical: true}},
		{"two-threads", "roofs_zen5_vm.json", []string{"points_set.json"}, Options{Threads: 2}},
		{"compute-only", "roofs_compute_only.json", []string{"point_triad.json", "point_dgemm.json"}, Options{}},
		{"roofs-only", "roofs_zen5_vm.json", nil, Options{Title: "Roofs of the fixture machine"}},
		{"points-only", "", []string{"point_triad.json", "point_dgemm.json"}, Options{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r *roofline.Roofs
			if tt.roofs != "" {
				r = readRoofs(t, tt.roofs)
			}
			pts := readPoints(t, tt.points...)
			var svg, text bytes.Buffer
			notes, err := Render(&svg, "svg", r, pts, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			textNotes, err := WriteText(&text, r, pts, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(notes, textNotes) {
				t.Errorf("SVG notes %q differ from text notes %q", notes, textNotes)
			}
			text.WriteString("\nnotes:\n" + strings.Join(notes, "\n") + "\n")
			testutil.Golden(t, filepath.Join("testdata", tt.name+".svg"), elideFonts(svg.Bytes()))
			testutil.Golden(t, filepath.Join("testdata", tt.name+".txt"), text.Bytes())
		})
	}
}

// elideFonts replaces the embedded fonts, 500 kB of base64, by their size,
// so golden files stay readable.
func elideFonts(svg []byte) []byte {
	return embeddedFont.ReplaceAllFunc(svg, func(m []byte) []byte {
		return fmt.Appendf(nil, "base64,<%d bytes of font>", len(m)-len("base64,"))
	})
}

var embeddedFont = regexp.MustCompile(`base64,[A-Za-z0-9+/=]+`)

func TestSVGEmbedsItsFont(t *testing.T) {
	var svg bytes.Buffer
	if _, err := Render(&svg, "svg", readRoofs(t, "roofs_zen5_vm.json"), nil, Options{}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(svg.Bytes(), []byte("@font-face")) || !embeddedFont.Match(svg.Bytes()) {
		t.Error("SVG has no embedded font")
	}
}

func TestTextChartFitsEightyColumns(t *testing.T) {
	var text bytes.Buffer
	r := readRoofs(t, "roofs_zen5_vm.json")
	r.Machine.CPU.ModelName = strings.Repeat("Very Long Processor Name ", 5)
	if _, err := WriteText(&text, r, readPoints(t, allPoints...), Options{Theoretical: true}); err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(text.String(), "\n") {
		if n := len([]rune(l)); n > 80 {
			t.Errorf("line of %d columns: %q", n, l)
		}
	}
}

func TestWrapBreaksAtSpacesWithAHangingIndent(t *testing.T) {
	long := "  A  " + strings.Repeat("word ", 30) + "end"
	got := wrap(long, "     ")
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	if len(lines) < 2 {
		t.Fatalf("not wrapped: %q", got)
	}
	for i, l := range lines {
		if len(l) > 80 {
			t.Errorf("line %d has %d columns", i, len(l))
		}
		if i > 0 && !strings.HasPrefix(l, "     word") && !strings.HasPrefix(l, "     end") {
			t.Errorf("continuation line %q lacks the indent", l)
		}
	}
	if strings.Join(strings.Fields(got), " ") != strings.Join(strings.Fields(long), " ") {
		t.Error("wrapping lost or changed words")
	}
	if got := wrap("short", "  "); got != "short\n" {
		t.Errorf("wrap(short) = %q", got)
	}
}

func TestSceneLeavesOutWhatLogAxesCannotShow(t *testing.T) {
	zero, neg := 0.0, -1.0
	base := readPoints(t, "point_triad.json")[0]
	withGFlops := func(v *float64) roofline.Point { p := base; p.GFlops = v; return p }
	withIntensity := func(v *float64) roofline.Point { p := base; p.Intensity = v; return p }
	tests := []struct {
		name  string
		point roofline.Point
		note  string
	}{
		{"unknown intensity", withIntensity(nil), "intensity unknown"},
		{"zero intensity", withIntensity(&zero), "intensity 0 FLOP/byte cannot be shown on a log axis"},
		{"unknown GFLOP/s", withGFlops(nil), "GFLOP/s unknown"},
		{"zero GFLOP/s", withGFlops(&zero), "0 GFLOP/s cannot be shown"},
		{"negative GFLOP/s", withGFlops(&neg), "-1 GFLOP/s cannot be shown"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := readRoofs(t, "roofs_zen5_vm.json")
			var out bytes.Buffer
			// Rendering, not only building the scene: gonum panics at
			// Save on a value <= 0 on a log axis.
			notes, err := Render(&out, "png", r, []roofline.Point{tt.point}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(notes) != 1 || !strings.Contains(notes[0], tt.note) {
				t.Errorf("notes = %q, want one containing %q", notes, tt.note)
			}
		})
	}
}

// Absurd figures (broken counters) must still give a chart of bounded size
// in bounded time.
func TestAbsurdValuesStayBounded(t *testing.T) {
	p := readPoints(t, "point_triad.json")
	x, y := 1e-200, 1e250
	p[0].Intensity, p[0].GFlops = &x, &y
	r := readRoofs(t, "roofs_zen5_vm.json")
	var text, png bytes.Buffer
	if _, err := WriteText(&text, r, p, Options{}); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(text.String(), "\n"); n > 60 {
		t.Errorf("text chart of %d lines", n)
	}
	if _, err := Render(&png, "png", r, p, Options{}); err != nil {
		t.Fatal(err)
	}
}

func TestSceneLeavesOutZeroRoofs(t *testing.T) {
	r := readRoofs(t, "roofs_zen5_vm.json")
	r.Compute[0].GFlops = 0
	r.Bandwidth[4].GBytesPerS = 0 // DRAM triad-nt, 1 thread
	r.Bandwidth[5].GBytesPerS = 0 // DRAM triad, 1 thread
	var out bytes.Buffer
	notes, err := Render(&out, "svg", r, readPoints(t, "point_triad.json"), Options{AllRoofs: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"compute roof avx512-fma-fp64 left out: 0 GFLOP/s is not a positive number",
		"DRAM bandwidth roof left out: 0 GB/s is not a positive number",
		`point "fixture: stream triad" not placed: place point: the binding roof (memory (DRAM)) is not a positive number`,
	}
	if !slices.Equal(notes, want) {
		t.Errorf("notes:\n got %q\nwant %q", notes, want)
	}
}

func TestScenePlacesPoints(t *testing.T) {
	s, err := buildScene(readRoofs(t, "roofs_zen5_vm.json"), readPoints(t, allPoints...), Options{})
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		bound    string
		warning  bool
		analytic bool
	}
	wants := map[string]want{
		"fixture: stream triad":              {"memory", false, false},
		"fixture: dgemm n=4096":              {"compute", false, false},
		"fixture: stencil above roof":        {"memory", true, false},
		"fixture: blocked matmul (analytic)": {"compute", false, true},
		// Measured with 2 threads: drawn with the 1-thread roofs but not
		// placed under them (it would seem above the DRAM roof).
		"fixture: stream triad, 2 threads": {"", false, false},
	}
	if len(s.points) != len(wants) {
		t.Fatalf("%d points drawn, want %d (the one without DRAM traffic left out)", len(s.points), len(wants))
	}
	for _, p := range s.points {
		w, ok := wants[p.label]
		if !ok {
			t.Errorf("unexpected point %q", p.label)
			continue
		}
		if p.bound != w.bound || p.warning != w.warning || p.analytic != w.analytic {
			t.Errorf("%s: bound %q warning %v analytic %v, want %+v", p.label, p.bound, p.warning, p.analytic, w)
		}
	}
	above := s.points[slices.IndexFunc(s.points, func(p placed) bool { return p.label == "fixture: stencil above roof" })]
	if !slices.Contains(above.flags, roofline.FlagAboveRoof) || above.fraction <= 1 {
		t.Errorf("stencil: flags %q fraction %g, want above-roof and > 1", above.flags, above.fraction)
	}
}

// Only warnings draw a point red: an emulated point (modelled traffic, a
// narrower ISA, a VM) is info, a multiplexed one a caution that its
// description lists.
func TestOnlyWarningsMarkAPoint(t *testing.T) {
	for _, c := range []struct {
		flags   []string
		warning bool
		listed  []string
	}{
		{[]string{roofline.FlagVM, roofline.FlagModelled, roofline.FlagEmulatedISA}, false, nil},
		{[]string{roofline.FlagMultiplexed}, false, []string{roofline.FlagMultiplexed}},
		{[]string{roofline.FlagModelled, roofline.FlagCountedGap}, true, []string{roofline.FlagCountedGap}},
	} {
		pts := readPoints(t, "point_triad.json")
		pts[0].Flags = nil
		for _, code := range c.flags {
			pts[0].Flags = append(pts[0].Flags, roofline.Flag{Code: code})
		}
		s, err := buildScene(readRoofs(t, "roofs_zen5_vm.json"), pts, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if p := s.points[0]; p.warning != c.warning || !slices.Equal(p.flags, c.listed) {
			t.Errorf("flags %q: warning %v listing %q, want %v listing %q", c.flags, p.warning, p.flags, c.warning, c.listed)
		}
	}
}

func TestRidgesUseThePeakOfThePointsPrecision(t *testing.T) {
	s, err := buildScene(readRoofs(t, "roofs_zen5_vm.json"), readPoints(t, "point_triad.json"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	// fp64 work: ridges on the 117.8 GFLOP/s avx512-fma-fp64 roof, not
	// on the higher fp32 one; DRAM ridge 117.8/45.6.
	i := slices.IndexFunc(s.ridges, func(r ridge) bool { return r.level == "DRAM" })
	if i < 0 || s.ridges[i].gflops != 117.8 || unit.Value(s.ridges[i].intensity) != "2.58" {
		t.Errorf("ridges = %+v, want DRAM ridge at 2.58 FLOP/byte on 117.8 GFLOP/s", s.ridges)
	}
}

func TestBadInput(t *testing.T) {
	r := readRoofs(t, "roofs_zen5_vm.json")
	tests := []struct {
		name   string
		do     func() error
		is     error
		substr string
	}{
		{"unknown extension", func() error {
			_, err := Write(context.Background(), filepath.Join(t.TempDir(), "chart.gif"), r, nil, Options{})
			return err
		}, ErrFormat, `chart.gif: unknown chart format ".gif" (want .png, .svg or .pdf)`},
		{"no extension", func() error {
			_, err := Write(context.Background(), filepath.Join(t.TempDir(), "chart"), r, nil, Options{})
			return err
		}, ErrFormat, "no file extension"},
		{"nothing to draw", func() error {
			_, err := Write(context.Background(), filepath.Join(t.TempDir(), "chart.svg"), nil, nil, Options{})
			return err
		}, ErrEmpty, "no points and no roofs"},
		{"nothing drawable", func() error {
			p := readPoints(t, "point_no_traffic.json")
			_, err := Render(&bytes.Buffer{}, "svg", nil, p, Options{})
			return err
		}, ErrEmpty, "no roof or point has a value a log axis can show (point \"fixture: spmv without DRAM counter\" left out: intensity unknown"},
		{"thread scope not measured", func() error {
			_, err := Render(&bytes.Buffer{}, "svg", r, nil, Options{Threads: 4})
			return err
		}, nil, "none measured for 4 threads (measured for 1, 2)"},
		{"unknown render format", func() error {
			_, err := Render(&bytes.Buffer{}, "gif", r, nil, Options{})
			return err
		}, ErrFormat, `"gif"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.do()
			if err == nil {
				t.Fatal("no error")
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %v is not %v", err, tt.is)
			}
			if !strings.Contains(err.Error(), tt.substr) {
				t.Errorf("error %q does not say %q", err, tt.substr)
			}
		})
	}
}

func TestWriteEachFormat(t *testing.T) {
	magic := map[string]string{"png": "\x89PNG", "svg": "<?xml", "pdf": "%PDF"}
	r := readRoofs(t, "roofs_zen5_vm.json")
	pts := readPoints(t, allPoints...)
	for _, f := range Formats {
		path := filepath.Join(t.TempDir(), "chart."+f)
		if _, err := Write(context.Background(), path, r, pts, Options{Theoretical: true}); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(b, []byte(magic[f])) {
			t.Errorf("%s file starts with %q", f, b[:min(8, len(b))])
		}
	}
}

func TestPDFTextIsWindows1252(t *testing.T) {
	for in, want := range map[string]string{
		"DRAM 45.6 GB/s ±1.6%": "DRAM 45.6 GB/s \xb11.6%",
		"café – naïve":         "caf\xe9 \x96 na\xefve",
		"漢字 kernel":            "?? kernel",
		"plain":                "plain",
		"bad \xff utf-8":       "bad ? utf-8",
	} {
		if got := pdfText(in); got != want {
			t.Errorf("pdfText(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestDecadeTicksLabelEveryDecadeInPlainNumbers(t *testing.T) {
	var labels []string
	for _, tk := range decadeTicks(0.001, 10000) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	want := []string{"0.001", "0.01", "0.1", "1", "10", "100", "1k", "10k"}
	if !slices.Equal(labels, want) {
		t.Errorf("labels %q, want %q", labels, want)
	}
}

func TestHeadlineRoofsAreTheBestFMAAndScalarRoofPerPrecision(t *testing.T) {
	cs := []roofline.ComputeRoof{
		{Name: "avx512-fma-fp64", ISA: "avx512", Precision: roofline.Double, Threads: 1, GFlops: 58},
		{Name: "avx2-fma-fp64", ISA: "avx2", Precision: roofline.Double, Threads: 1, GFlops: 59},
		{Name: "avx2-muladd-fp64", ISA: "avx2", Precision: roofline.Double, Threads: 1, GFlops: 60},
		{Name: "scalar-fma-fp64", ISA: "scalar", Precision: roofline.Double, Threads: 1, GFlops: 14},
		{Name: "scalar-muladd-fp64", ISA: "scalar", Precision: roofline.Double, Threads: 1, GFlops: 13},
		{Name: "avx512-fma-fp32", ISA: "avx512", Precision: roofline.Single, Threads: 1, GFlops: 118},
		{Name: "avx512-fma-fp64", ISA: "avx512", Precision: roofline.Double, Threads: 2, GFlops: 117},
	}
	got := headlineRoofs(cs, 1)
	want := map[string]bool{"avx2-fma-fp64": true, "scalar-fma-fp64": true, "avx512-fma-fp32": true}
	if !maps.Equal(got, want) {
		t.Errorf("headlineRoofs = %v, want %v", got, want)
	}
}

func TestLibraryRoofsAreDrawnByDefaultNotAsHeadlines(t *testing.T) {
	r := readRoofs(t, "roofs_zen5_vm.json")
	lib := roofline.ComputeRoof{Name: "onednn-ip brgemm:avx512_core fp32", Kind: roofline.ComputeKindLibrary, ISA: "avx512",
		Precision: roofline.Single, Threads: 1, GFlops: 208.8, CI: roofline.Interval{Lo: 204.1, Hi: 213},
		Library: &roofline.LibraryCall{Name: "oneDNN", Version: "v2.6.3", Primitive: "inner_product", Implementation: "brgemm:avx512_core"}}
	// Above every kernel of its precision, it would have displaced the
	// fp32 FMA headline had it been counted as one.
	lib.GFlops = 1e4
	r.Compute = append(r.Compute, lib)
	if headlineRoofs(r.Compute, 1)[lib.Name] {
		t.Error("a library roof is a headline roof")
	}
	s, err := buildScene(r, nil, Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range s.compute {
		names = append(names, c.name)
	}
	if !slices.Contains(names, lib.Name) || !slices.ContainsFunc(names, func(n string) bool { return strings.Contains(n, "fma-fp32") }) {
		t.Errorf("compute roofs drawn: %q; want the library roof and the fp32 FMA headline", names)
	}
}
