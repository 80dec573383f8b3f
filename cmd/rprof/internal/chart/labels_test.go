package chart

import (
	"bytes"
	"fmt"
	"html"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"

	"github.com/rprof/rprof/roofline"
)

func TestEllipsizeCutsLongLabelsToTheWidth(t *testing.T) {
	st := labelStyle(plot.New(), 8)
	tests := []struct {
		text  string
		width vg.Length
		cut   bool
	}{
		{"DRAM 45.6 GB/s", vg.Points(200), false},
		{"avx512-fma-fp64 118 GFLOP/s ±0.7%, theoretical 118", vg.Points(60), true},
		{strings.Repeat("very long kernel name ", 20), vg.Points(120), true},
	}
	for _, tt := range tests {
		got := ellipsize(st, tt.text, tt.width)
		if st.Width(got) > tt.width {
			t.Errorf("ellipsize(%q) = %q, %v wide, more than %v", tt.text, got, st.Width(got), tt.width)
		}
		if cut := got != tt.text; cut != tt.cut {
			t.Errorf("ellipsize(%q) = %q, cut %v, want %v", tt.text, got, cut, tt.cut)
		}
		if tt.cut && (!strings.HasSuffix(got, "…") || !strings.HasPrefix(tt.text, strings.TrimSuffix(got, "…"))) {
			t.Errorf("ellipsize(%q) = %q, want a prefix ending in an ellipsis", tt.text, got)
		}
	}
}

func TestIntersectsTellsOverlappingShapesApart(t *testing.T) {
	box := rectQuad(vg.Rectangle{Min: vg.Point{X: 0, Y: 0}, Max: vg.Point{X: 10, Y: 4}})
	p := func(x, y vg.Length) vg.Point { return vg.Point{X: x, Y: y} }
	tests := []struct {
		name  string
		shape []vg.Point
		want  bool
	}{
		{"horizontal line through", []vg.Point{p(-5, 2), p(15, 2)}, true},
		{"horizontal line above", []vg.Point{p(-5, 5), p(15, 5)}, false},
		{"line touching the top edge", []vg.Point{p(-5, 4), p(15, 4)}, false},
		{"sloped line crossing a corner", []vg.Point{p(8, -1), p(12, 3)}, true},
		{"sloped line passing the corner", []vg.Point{p(11, -1), p(15, 3)}, false},
		{"steep line through the left edge", []vg.Point{p(-2, -2), p(4, 10)}, true},
		{"steep line passing left of the box", []vg.Point{p(-10, -2), p(2, 10)}, false},
		{"box inside", rectQuad(vg.Rectangle{Min: p(2, 1), Max: p(3, 2)}), true},
		{"box beside", rectQuad(vg.Rectangle{Min: p(11, 0), Max: p(20, 4)}), false},
		{"rotated box over the corner", []vg.Point{p(9, 3), p(12, 6), p(11, 7), p(8, 4)}, true},
	}
	for _, tt := range tests {
		if got := intersects(box, tt.shape); got != tt.want {
			t.Errorf("%s: intersects = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// Every roof's label is on the chart, whole or cut with an ellipsis, by its
// line or, when there is no room, in the legend; however small the chart.
func TestEveryRoofIsNamedOnTheChart(t *testing.T) {
	roofs := readRoofs(t, "roofs_zen5_vm.json")
	tests := []struct {
		name string
		opts Options
	}{
		{"default size, 1 thread", Options{AllRoofs: true, Theoretical: true}},
		{"default size, 2 threads", Options{AllRoofs: true, Threads: 2}},
		{"small", Options{AllRoofs: true, Width: 4 * vg.Inch, Height: 3 * vg.Inch}},
		{"tiny", Options{AllRoofs: true, Width: 2 * vg.Inch, Height: 1.5 * vg.Inch}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := buildScene(roofs, nil, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			var svg bytes.Buffer
			if _, err := Render(&svg, "svg", roofs, nil, tt.opts); err != nil {
				t.Fatal(err)
			}
			texts := svgTexts(svg.String())
			var labels []string
			for _, c := range s.compute {
				if !c.theoretical {
					labels = append(labels, c.label("GFLOP/s"))
				}
			}
			for _, b := range s.bandwidth {
				labels = append(labels, b.label("GB/s"))
			}
			for _, l := range labels {
				if !containsLabel(texts, l) {
					t.Errorf("roof label %q is not on the chart (texts %q)", l, texts)
				}
			}
		})
	}
}

func svgTexts(svg string) []string {
	var out []string
	for _, part := range strings.Split(svg, "</text>")[:max(0, strings.Count(svg, "</text>"))] {
		out = append(out, html.UnescapeString(part[strings.LastIndex(part, ">")+1:]))
	}
	return out
}

func containsLabel(texts []string, label string) bool {
	for _, t := range texts {
		if t == label || strings.HasSuffix(t, "…") && len(t) > len("…")+3 && strings.HasPrefix(label, strings.TrimSuffix(t, "…")) {
			return true
		}
	}
	return false
}

func TestTextChartKeepsEachComputeRoofOnItsOwnRow(t *testing.T) {
	roofs := readRoofs(t, "roofs_zen5_vm.json")
	for _, opts := range []Options{{}, {Threads: 2}, {AllRoofs: true}, {AllRoofs: true, Threads: 2}, {Theoretical: true}} {
		s, err := buildScene(roofs, nil, opts)
		if err != nil {
			t.Fatal(err)
		}
		rows := s.computeRows(newTextGrid(s))
		seen := map[int]string{}
		for i, c := range s.compute {
			if c.theoretical {
				continue
			}
			if other, ok := seen[rows[i]]; ok {
				t.Errorf("%+v: %s and %s share row %d", opts, other, c.name, rows[i])
			}
			seen[rows[i]] = c.name
			if i > 0 && rows[i] < rows[i-1] {
				t.Errorf("%+v: %s drawn above the higher roof before it", opts, c.name)
			}
		}
	}
}

// Beyond maxPointLabels points, labels would smear into a blob: the points
// are drawn without them, and a note says so.
func TestManyPointsAreDrawnWithoutLabels(t *testing.T) {
	roofs := readRoofs(t, "roofs_zen5_vm.json")
	base := readPoints(t, "point_triad.json")[0]
	for _, n := range []int{1, maxPointLabels, maxPointLabels + 1, 2000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			pts := make([]roofline.Point, n)
			for i := range pts {
				pts[i] = base
				pts[i].Label = fmt.Sprintf("kernel-%d", i)
			}
			var svg bytes.Buffer
			notes, err := Render(&svg, "svg", roofs, pts, Options{})
			if err != nil {
				t.Fatal(err)
			}
			labelled := strings.Contains(svg.String(), ">kernel-0 ")
			noted := strings.Contains(strings.Join(notes, "\n"), "without labels")
			if want := n <= maxPointLabels; labelled != want || noted == want {
				t.Errorf("%d points: labelled %v, noted %v; want labels %v", n, labelled, noted, want)
			}
		})
	}
}

func TestPointLabelsAvoidLabelsThenLines(t *testing.T) {
	area := vg.Rectangle{Max: vg.Point{X: 200, Y: 200}}
	m := vg.Point{X: 100, Y: 100}
	p := func(x, y vg.Length) vg.Point { return vg.Point{X: x, Y: y} }
	// A line through the marker's row, right of it only.
	rightLine := [][]vg.Point{{p(101, 100), p(200, 100)}}
	tests := []struct {
		name     string
		taken    []vg.Rectangle
		lines    [][]vg.Point
		wantLeft bool
		crossing bool
	}{
		{"free: right of the marker", nil, nil, false, false},
		{"a line on the right: left of it", nil, rightLine, true, false},
		{"label left, line right: crosses the line rather than the label", []vg.Rectangle{{Min: p(0, 0), Max: p(99, 200)}}, [][]vg.Point{{p(120, 0), p(120, 200)}}, false, true},
	}
	for _, tt := range tests {
		b := freeBox(area, tt.taken, tt.lines, m, 40, 10, 5)
		if left := b.Max.X < m.X; left != tt.wantLeft {
			t.Errorf("%s: box %v, left of the marker %v, want %v", tt.name, b, left, tt.wantLeft)
		}
		if slices.ContainsFunc(tt.taken, func(r vg.Rectangle) bool { return overlaps(b, r) }) {
			t.Errorf("%s: box %v covers a label", tt.name, b)
		}
		crossing := slices.ContainsFunc(tt.lines, func(l []vg.Point) bool { return intersects(rectQuad(b), l) })
		if crossing != tt.crossing {
			t.Errorf("%s: box %v crosses a line %v, want %v", tt.name, b, crossing, tt.crossing)
		}
	}
}
