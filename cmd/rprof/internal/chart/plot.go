package chart

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"slices"
	"strings"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgpdf"

	"github.com/rprof/rprof/roofline"

	"github.com/rprof/rprof/internal/unit"
)

const xAxisTitle = "Arithmetic intensity (FLOP per byte of DRAM traffic)"

const (
	defaultWidth  = 9 * vg.Inch
	defaultHeight = 6 * vg.Inch
	pngDPI        = 120
	chartMargin   = 2 * vg.Millimeter
)

var (
	computeColors = []color.Color{
		rgb(0xb2182b), rgb(0xd6604d), rgb(0x8c510a), rgb(0xbf812d), rgb(0x762a83), rgb(0x9970ab),
	}
	bandwidthColors = []color.Color{
		rgb(0x2166ac), rgb(0x4393c3), rgb(0x1b7837), rgb(0x5aae61), rgb(0x35978f), rgb(0x01665e),
	}
	pointColor   color.Color = color.Black
	warningColor             = rgb(0xe41a1c)
	ridgeColor               = color.Gray{Y: 0x60}
	gridColor                = color.Gray{Y: 0xe0}
)

func rgb(v uint32) color.Color {
	return color.RGBA{R: uint8(v >> 16), G: uint8(v >> 8), B: uint8(v), A: 0xff}
}

// pdfCanvas writes text in the code page gonum's PDF fonts are encoded in
// (Windows-1252): vgpdf passes strings through as they are, so the UTF-8
// of "±" or of an accented label would print as two wrong glyphs.
type pdfCanvas struct{ *vgpdf.Canvas }

func (c pdfCanvas) FillString(f font.Face, pt vg.Point, s string) {
	c.Canvas.FillString(f, pt, pdfText(s))
}

// pdfText encodes s in Windows-1252, with '?' for what it lacks.
func pdfText(s string) string {
	// ReplaceUnsupported also replaces invalid UTF-8, so this encoder
	// does not fail; were it to, the text is left as it is.
	enc, err := encoding.ReplaceUnsupported(charmap.Windows1252.NewEncoder()).String(s)
	if err != nil {
		return s
	}
	return strings.ReplaceAll(enc, string(encoding.ASCIISub), "?")
}

// render builds the gonum plot of the scene and writes it to w.
func (s *scene) render(w io.Writer, format string, opts Options) error {
	width, height := opts.Width, opts.Height
	if width <= 0 {
		width = defaultWidth
	}
	if height <= 0 {
		height = defaultHeight
	}
	p, err := s.plot()
	if err != nil {
		return fmt.Errorf("draw chart: %w", err)
	}
	var c vg.CanvasWriterTo
	switch format {
	case "png":
		c = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(width, height), vgimg.UseDPI(pngDPI))}
	case "svg":
		// The font is embedded, so that a viewer without Liberation Serif
		// draws the labels in the font they were placed by.
		c = newSVGCanvas(width, height)
	case "pdf":
		c = pdfCanvas{vgpdf.New(width, height)}
	default:
		return fmt.Errorf("%w %q", ErrFormat, format)
	}
	// gonum sets the title and the y label flush with the image's edges by
	// Liberation Serif's ascent; a fallback font with a taller one (DejaVu
	// Serif, in a browser showing the SVG inline) would be clipped there.
	m := chartMargin
	p.Draw(draw.Crop(draw.New(c), m, -m, m, -m))
	if _, err := c.WriteTo(w); err != nil {
		return fmt.Errorf("write %s chart: %w", format, err)
	}
	return nil
}

func (s *scene) plot() (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = s.title
	// gonum centres the x label at the linear mean of the range when it
	// pads the axes, which on a log axis pushes the data area far from
	// the right edge; a blank label keeps the room, the labels plotter
	// writes the text.
	p.X.Label.Text = " "
	p.Y.Label.Text = "Performance (GFLOP/s)"
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Scale = plot.LogScale{}
		a.Tick.Marker = plot.TickerFunc(decadeTicks)
	}
	p.X.Min, p.X.Max = s.xmin, s.xmax
	p.Y.Min, p.Y.Max = s.ymin, s.ymax

	grid := plotter.NewGrid()
	grid.Vertical.Color, grid.Horizontal.Color = gridColor, gridColor
	p.Add(grid)

	for _, b := range s.bandwidth {
		l, err := plotter.NewLine(plotter.XYs{{X: b.from, Y: b.value * b.from}, {X: b.to, Y: b.value * b.to}})
		if err != nil {
			return nil, err
		}
		l.Color, l.Width = bandwidthColors[b.color%len(bandwidthColors)], vg.Points(1.5)
		p.Add(l)
	}
	for _, c := range s.compute {
		l, err := plotter.NewLine(plotter.XYs{{X: c.from, Y: c.value}, {X: c.to, Y: c.value}})
		if err != nil {
			return nil, err
		}
		l.Color, l.Width = computeColors[c.color%len(computeColors)], vg.Points(1.5)
		if c.theoretical {
			l.Width = vg.Points(1)
			l.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		}
		p.Add(l)
	}
	if err := s.addPoints(p); err != nil {
		return nil, err
	}
	p.Add(&labels{s: s})
	return p, nil
}

// addPoints draws each point with its CI as an error bar, a glyph telling
// which roof binds it, and its label; the legend explains the glyphs.
func (s *scene) addPoints(p *plot.Plot) error {
	// One plotter per glyph and one per bar colour, not per point:
	// thousands of plotters cost seconds.
	type glyphKey struct {
		bound             string
		analytic, warning bool
	}
	glyphs := map[glyphKey]plotter.XYs{}
	var keys []glyphKey
	bars := map[bool]errBars{}
	used := map[string]bool{}
	for _, pt := range s.points {
		if pt.hi > pt.lo && s.labelPoints {
			bars[pt.warning] = append(bars[pt.warning], pt)
		}
		k := glyphKey{pt.bound, pt.analytic, pt.warning}
		if _, ok := glyphs[k]; !ok {
			keys = append(keys, k)
		}
		glyphs[k] = append(glyphs[k], plotter.XY{X: pt.x, Y: pt.y})
		used["bound:"+pt.bound] = true
		if pt.analytic {
			used["analytic"] = true
		}
		if pt.warning {
			used["warning"] = true
		}
	}
	colorOf := func(warning bool) color.Color {
		if warning {
			return warningColor
		}
		return pointColor
	}
	for _, warning := range []bool{false, true} {
		if len(bars[warning]) == 0 {
			continue
		}
		b, err := plotter.NewYErrorBars(bars[warning])
		if err != nil {
			return err
		}
		b.Color, b.Width, b.CapWidth = colorOf(warning), vg.Points(1), vg.Points(6)
		p.Add(b)
	}
	for _, k := range keys {
		sc, err := plotter.NewScatter(glyphs[k])
		if err != nil {
			return err
		}
		sc.GlyphStyle = glyphFor(k.bound, k.analytic, colorOf(k.warning))
		if !s.labelPoints {
			sc.GlyphStyle.Radius = vg.Points(1.5)
		}
		p.Add(sc)
	}

	p.Legend.Top, p.Legend.Left = false, false
	p.Legend.XOffs, p.Legend.YOffs = -vg.Points(10), vg.Points(6)
	p.Legend.TextStyle.Font.Size = vg.Points(9)
	entry := func(name string, g draw.GlyphStyle) {
		p.Legend.Add(name, glyphThumb(g))
	}
	for _, b := range []struct{ key, name string }{
		{roofline.BoundMemory, "memory-bound"}, {roofline.BoundCompute, "compute-bound"}, {"", "bound unknown"},
	} {
		if used["bound:"+b.key] {
			entry(b.name, glyphFor(b.key, false, pointColor))
		}
	}
	if used["analytic"] {
		entry("analytic (W, Q not counted)", glyphFor("", true, pointColor))
	}
	if used["warning"] {
		entry("warning (!): see its flags", glyphFor("", false, warningColor))
	}
	if len(s.ridges) > 0 {
		entry("ridge point", ridgeGlyph())
	}
	if slices.ContainsFunc(s.compute, func(r roof) bool { return r.theoretical }) {
		p.Legend.Add("theoretical peak", dashedThumb{})
	}
	return nil
}

// dashedThumb shows the dashed theoretical roofs in the legend.
type dashedThumb struct{}

func (dashedThumb) Thumbnail(c *draw.Canvas) {
	y := c.Center().Y
	sty := draw.LineStyle{Color: ridgeColor, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(3), vg.Points(2)}}
	c.StrokeLine2(sty, c.Min.X, y, c.Max.X, y)
}

// glyphThumb shows a glyph in the legend.
type glyphThumb draw.GlyphStyle

func (g glyphThumb) Thumbnail(c *draw.Canvas) { c.DrawGlyph(draw.GlyphStyle(g), c.Center()) }

// glyphFor returns the marker of a point: a triangle when memory binds it,
// a square when compute does, a circle when unknown; hollow when analytic.
func glyphFor(bound string, analytic bool, col color.Color) draw.GlyphStyle {
	g := draw.GlyphStyle{Color: col, Radius: vg.Points(4)}
	switch {
	case bound == roofline.BoundMemory && analytic:
		g.Shape = draw.TriangleGlyph{}
	case bound == roofline.BoundMemory:
		g.Shape = draw.PyramidGlyph{}
	case bound == roofline.BoundCompute && analytic:
		g.Shape = draw.SquareGlyph{}
	case bound == roofline.BoundCompute:
		g.Shape = draw.BoxGlyph{}
	case analytic:
		g.Shape = draw.RingGlyph{}
	default:
		g.Shape = draw.CircleGlyph{}
	}
	return g
}

func ridgeGlyph() draw.GlyphStyle {
	return draw.GlyphStyle{Color: ridgeColor, Radius: vg.Points(3), Shape: draw.CrossGlyph{}}
}

// decadeTicks labels each decade in plain decimals (0.01, 1, 100, 10k) and
// puts unlabelled minor ticks between them. plot.LogTicks leaves the first
// decade unlabelled when the minimum is below 1 and prints 1e+06 style
// labels, which is why rprof has its own.
func decadeTicks(lo, hi float64) []plot.Tick {
	if !(lo > 0) || !(hi > lo) || math.IsInf(hi, 0) {
		return nil
	}
	var ticks []plot.Tick
	first, last := int(math.Floor(math.Log10(lo)+1e-9)), int(math.Floor(math.Log10(hi)+1e-9))
	// On an axis of many decades, label every step-th and leave out the
	// minor ticks, which would merge into a bar.
	step := max(1, (last-first)/12)
	for e := first; e <= last; e++ {
		d := math.Pow(10, float64(e))
		if d >= lo*(1-1e-9) && (e-first)%step == 0 {
			ticks = append(ticks, plot.Tick{Value: d, Label: decadeLabel(e)})
		}
		for m := 2; m <= 9 && step == 1; m++ {
			if v := float64(m) * d; v > lo && v < hi {
				ticks = append(ticks, plot.Tick{Value: v})
			}
		}
	}
	return ticks
}

func decadeLabel(e int) string {
	switch {
	case e > 8 || e < -4:
		return fmt.Sprintf("1e%d", e)
	case e >= 6:
		return fmt.Sprintf("%.0fM", math.Pow(10, float64(e-6)))
	case e >= 3:
		return fmt.Sprintf("%.0fk", math.Pow(10, float64(e-3)))
	case e >= 0:
		return fmt.Sprintf("%.0f", math.Pow(10, float64(e)))
	}
	return fmt.Sprintf("%.*f", -e, math.Pow(10, float64(e)))
}

// labels writes each roof's name, value and CI next to its line, marks the
// ridge points and labels the points. It works in canvas units, so that
// labels of close roofs are moved apart, bandwidth labels follow their
// slope, and point labels go where they cover no other label.
type labels struct{ s *scene }

func (l *labels) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	sty := labelStyle(p, 8)
	pad := vg.Points(3)
	lineH := sty.FontExtents().Height
	var taken []vg.Rectangle
	// Markers are obstacles, so a label never covers a point.
	var markers []vg.Rectangle
	for _, pt := range l.s.points {
		m := vg.Point{X: trX(pt.x), Y: trY(pt.y)}
		r := vg.Points(5)
		markers = append(markers, vg.Rectangle{Min: vg.Point{X: m.X - r, Y: m.Y - r}, Max: vg.Point{X: m.X + r, Y: m.Y + r}})
	}

	byXDesc := slices.Clone(markers)
	slices.SortFunc(byXDesc, func(a, b vg.Rectangle) int { return cmpFloat(float64(b.Min.X), float64(a.Min.X)) })

	// Roof lines are obstacles too: a label never sits on a line.
	var lines [][]vg.Point
	for _, b := range l.s.bandwidth {
		lines = append(lines, []vg.Point{{X: trX(b.from), Y: trY(b.value * b.from)}, {X: trX(b.to), Y: trY(b.value * b.to)}})
	}
	for _, r := range l.s.compute {
		lines = append(lines, []vg.Point{{X: trX(r.from), Y: trY(r.value)}, {X: trX(r.to), Y: trY(r.value)}})
	}
	// Labels with no free place go to the legend, which grows and may
	// then cover labels placed before: place again, with the grown
	// legend as an obstacle, until nothing more moves there.
	var texts []roofText
	var placedLabels [][]vg.Point
	crowded := map[string]legendRoof{}
	var order []string
	for range len(l.s.compute) + len(l.s.bandwidth) + 1 {
		legend := p.Legend
		for _, k := range order {
			legend.Add(crowded[k].text)
		}
		var more []legendRoof
		texts, placedLabels, more = l.placeRoofLabels(c, p, sty, lineH, pad, lines, markers, legendRect(c, legend))
		grew := false
		for _, m := range more {
			if _, ok := crowded[m.text]; !ok {
				crowded[m.text], order, grew = m, append(order, m.text), true
			}
		}
		if !grew {
			break
		}
	}
	for _, t := range texts {
		c.FillText(t.style, t.at, t.text)
	}
	for _, k := range order {
		p.Legend.Add(k, lineThumb{Color: crowded[k].color, Width: vg.Points(1.5)})
	}
	for _, q := range placedLabels {
		taken = append(taken, bounds(q))
	}

	// The x axis title, centred under the data area at the bottom of the
	// image, where gonum would put it.
	xl := p.X.Label.TextStyle
	below := p.X.Width/2 + p.X.Padding + p.X.Tick.Length + p.X.Tick.Label.Height("0") + p.X.Label.Padding + xl.Height(" ")
	c.FillText(xl, vg.Point{X: (c.Min.X + c.Max.X) / 2, Y: c.Min.Y - below + xl.FontExtents().Descent}, xAxisTitle)

	taken = append(taken, l.drawRidges(c, trX, trY, sty, pad, lines, taken)...)
	taken = append(taken, markers...)
	l.drawPointLabels(c, trX, trY, sty, lineH, lines, taken)
}

// drawRidges marks the ridge points: a cross on the peak roof and the
// intensity next to it, clear of lines and of the labels in taken. It
// returns the boxes of the texts it wrote.
func (l *labels) drawRidges(c draw.Canvas, trX, trY func(float64) vg.Length, sty draw.TextStyle, pad vg.Length, lines [][]vg.Point, taken []vg.Rectangle) []vg.Rectangle {
	// Ridge points: a cross on the peak roof and the intensity next to
	// it: below right or above left, clear of the bandwidth line through
	// the point, where no line or label is; else below it, a line lower
	// when it would overlap the previous ridge's.
	rs := sty
	rs.Color = ridgeColor
	rs.Font.Size = vg.Points(7)
	rh := rs.FontExtents().Height
	var ridgeLabels []vg.Rectangle
	for _, rd := range l.s.ridges {
		pt := vg.Point{X: trX(rd.intensity), Y: trY(rd.gflops)}
		if !c.Contains(pt) {
			continue
		}
		c.DrawGlyph(ridgeGlyph(), pt)
		text := unit.Value(rd.intensity)
		w := rs.Width(text)
		at := func(x, y vg.Length) vg.Rectangle {
			return vg.Rectangle{Min: vg.Point{X: x, Y: y}, Max: vg.Point{X: x + w, Y: y + rh}}
		}
		box := at(pt.X-w/2, pt.Y-pad-1-rh)
		for _, b := range []vg.Rectangle{at(pt.X+pad, pt.Y-pad-rh), at(pt.X-pad-w, pt.Y+pad)} {
			if c.Contains(b.Min) && c.Contains(b.Max) &&
				!slices.ContainsFunc(lines, func(l []vg.Point) bool { return intersects(rectQuad(b), l) }) &&
				!slices.ContainsFunc(append(taken, ridgeLabels...), func(r vg.Rectangle) bool { return overlaps(b, r) }) {
				box = b
				break
			}
		}
		for slices.ContainsFunc(ridgeLabels, func(r vg.Rectangle) bool { return overlaps(box, r) }) {
			box.Min.Y -= rh
			box.Max.Y -= rh
		}
		c.FillText(rs, box.Min, text)
		ridgeLabels = append(ridgeLabels, box)
	}
	return ridgeLabels
}

// drawPointLabels labels each point where it covers nothing in taken and
// crosses no line, with a leader when the label had to move.
func (l *labels) drawPointLabels(c draw.Canvas, trX, trY func(float64) vg.Length, sty draw.TextStyle, lineH vg.Length, lines [][]vg.Point, taken []vg.Rectangle) {
	gap := vg.Points(7)
	for _, pt := range l.s.points {
		if !l.s.labelPoints {
			break
		}
		text := pt.label + " " + unit.Value(pt.y) + " GFLOP/s"
		if pt.fraction > 0 {
			text += " (" + unit.RoundPercent(pt.fraction) + " of " + pt.boundRoofLabel + " roof)"
		}
		st := sty
		if pt.warning {
			st.Color = warningColor
			text += " !"
		}
		text = ellipsize(st, text, (c.Max.X-c.Min.X)*maxLabelShare)
		m := vg.Point{X: trX(pt.x), Y: trY(pt.y)}
		w := st.Width(text)
		box := freeBox(c.Rectangle, taken, lines, m, w, lineH, gap)
		c.FillText(st, box.Min, text)
		taken = append(taken, box)
		// A label moved off its marker's line gets a leader to it.
		if mid := (box.Min.Y + box.Max.Y) / 2; math.Abs(float64(mid-m.Y)) > float64(lineH)/2 {
			end := vg.Point{X: box.Min.X, Y: mid}
			if box.Max.X < m.X {
				end.X = box.Max.X
			}
			c.StrokeLine2(draw.LineStyle{Color: ridgeColor, Width: vg.Points(0.5)}, m.X, m.Y, end.X, end.Y)
		}
	}
}

// freeBox returns where a w by h label next to marker m covers nothing in
// taken and crosses none of lines: right of the marker, else left, else
// moved up or down line by line. When every place is taken it falls back
// to the first that only crosses a line, else to the first that fits.
func freeBox(area vg.Rectangle, taken []vg.Rectangle, lines [][]vg.Point, m vg.Point, w, h, gap vg.Length) vg.Rectangle {
	var fallback, crossing *vg.Rectangle
	for step := 0; step <= 6; step++ {
		for _, dy := range []vg.Length{vg.Length(step) * h, -vg.Length(step) * h} {
			for _, x := range []vg.Length{m.X + gap, m.X - gap - w} {
				b := vg.Rectangle{Min: vg.Point{X: x, Y: m.Y - h/2 + dy}}
				b.Max = vg.Point{X: b.Min.X + w, Y: b.Min.Y + h}
				if b.Min.X < area.Min.X || b.Max.X > area.Max.X || b.Min.Y < area.Min.Y || b.Max.Y > area.Max.Y {
					continue
				}
				if fallback == nil {
					fallback = &b
				}
				if slices.ContainsFunc(taken, func(t vg.Rectangle) bool { return overlaps(b, t) }) {
					continue
				}
				if !slices.ContainsFunc(lines, func(l []vg.Point) bool { return intersects(rectQuad(b), l) }) {
					return b
				}
				if crossing == nil {
					crossing = &b
				}
			}
			if step == 0 {
				break
			}
		}
	}
	if crossing != nil {
		return *crossing
	}
	if fallback != nil {
		return *fallback
	}
	return vg.Rectangle{Min: vg.Point{X: m.X + gap, Y: m.Y - h/2}, Max: vg.Point{X: m.X + gap + w, Y: m.Y + h/2}}
}

// maxLabelShare is the widest a roof label may be, as a share of the data
// area's width; longer labels are cut with an ellipsis.
const maxLabelShare = 0.45

// legendRoof is a roof label that found no free place by its line.
type legendRoof struct {
	text  string
	color color.Color
}

// lineThumb shows a roof's line in the legend.
type lineThumb draw.LineStyle

func (l lineThumb) Thumbnail(c *draw.Canvas) {
	y := c.Center().Y
	c.StrokeLine2(draw.LineStyle(l), c.Min.X, y, c.Max.X, y)
}

// ellipsize cuts text to at most width, ending it with an ellipsis when
// cut.
func ellipsize(st text.Style, s string, width vg.Length) string {
	if st.Width(s) <= width {
		return s
	}
	r := []rune(s)
	for len(r) > 0 && st.Width(string(r)+"…") > width {
		r = r[:len(r)-1]
	}
	return strings.TrimRight(string(r), " ") + "…"
}

func rectQuad(r vg.Rectangle) []vg.Point {
	return []vg.Point{r.Min, {X: r.Max.X, Y: r.Min.Y}, r.Max, {X: r.Min.X, Y: r.Max.Y}}
}

func bounds(q []vg.Point) vg.Rectangle {
	r := vg.Rectangle{Min: q[0], Max: q[0]}
	for _, v := range q[1:] {
		r.Min.X, r.Min.Y = min(r.Min.X, v.X), min(r.Min.Y, v.Y)
		r.Max.X, r.Max.Y = max(r.Max.X, v.X), max(r.Max.Y, v.Y)
	}
	return r
}

// intersects reports whether two convex polygons (a segment is one of two
// vertices) overlap, by the separating axis theorem: they are apart when
// their projections on the normal of some edge are.
func intersects(a, b []vg.Point) bool {
	for _, poly := range [][]vg.Point{a, b} {
		for i := range poly {
			j := (i + 1) % len(poly)
			nx, ny := -(poly[j].Y - poly[i].Y), poly[j].X-poly[i].X
			if nx == 0 && ny == 0 {
				continue
			}
			alo, ahi := project(a, nx, ny)
			blo, bhi := project(b, nx, ny)
			if ahi <= blo || bhi <= alo {
				return false
			}
		}
	}
	return true
}

func project(poly []vg.Point, nx, ny vg.Length) (lo, hi vg.Length) {
	lo, hi = vg.Length(math.Inf(1)), vg.Length(math.Inf(-1))
	for _, v := range poly {
		d := v.X*nx + v.Y*ny
		lo, hi = min(lo, d), max(hi, d)
	}
	return lo, hi
}

func overlaps(a, b vg.Rectangle) bool {
	return a.Min.X < b.Max.X && b.Min.X < a.Max.X && a.Min.Y < b.Max.Y && b.Min.Y < a.Max.Y
}

func labelStyle(p *plot.Plot, size float64) text.Style {
	return text.Style{
		Color:   color.Black,
		Font:    font.From(plot.DefaultFont, vg.Points(size)),
		Handler: p.TextHandler,
	}
}

// errBars are the CIs of points, drawn as error bars.
type errBars []placed

func (e errBars) Len() int                        { return len(e) }
func (e errBars) XY(i int) (float64, float64)     { return e[i].x, e[i].y }
func (e errBars) YError(i int) (float64, float64) { return e[i].y - e[i].lo, e[i].hi - e[i].y }

// roofText is a roof label placed by its line.
type roofText struct {
	style text.Style
	at    vg.Point
	text  string
}

// placeRoofLabels places the roof labels where they cover no line, marker,
// other label or the legend, and returns those that found no place.
func (l *labels) placeRoofLabels(c draw.Canvas, p *plot.Plot, sty text.Style, lineH, pad vg.Length, lines [][]vg.Point, markers []vg.Rectangle, legend *vg.Rectangle) ([]roofText, [][]vg.Point, []legendRoof) {
	trX, trY := p.Transforms(&c)
	var placedLabels [][]vg.Point
	free := func(q []vg.Point) bool {
		if legend != nil && intersects(q, rectQuad(*legend)) {
			return false
		}
		for _, v := range q {
			if !c.Contains(v) {
				return false
			}
		}
		for _, set := range [][][]vg.Point{lines, placedLabels} {
			if slices.ContainsFunc(set, func(o []vg.Point) bool { return intersects(q, o) }) {
				return false
			}
		}
		return !slices.ContainsFunc(markers, func(m vg.Rectangle) bool { return intersects(q, rectQuad(m)) })
	}
	maxW := (c.Max.X - c.Min.X) * maxLabelShare
	var crowded []legendRoof
	var texts []roofText

	// Compute roofs: right-aligned at the line's right end, above it, else
	// below it, else slid left along it; in the legend when nowhere is
	// free.
	for _, roof := range l.s.compute {
		if roof.theoretical {
			continue // named in its measured roof's label
		}
		st := sty
		st.Color = computeColors[roof.color%len(computeColors)]
		full := roof.label("GFLOP/s")
		text := ellipsize(st, full, maxW)
		w := st.Width(text)
		x1, x0, yl := trX(roof.to)-pad, trX(roof.from)+pad, trY(roof.value)
		var at *vg.Point
		for right := x1; right-w >= x0 && at == nil; right -= lineH {
			for _, y := range []vg.Length{yl + pad/2 + 1, yl - pad/2 - 1 - lineH} {
				q := rectQuad(vg.Rectangle{Min: vg.Point{X: right - w, Y: y}, Max: vg.Point{X: right, Y: y + lineH}})
				if free(q) {
					at = &q[0]
					placedLabels = append(placedLabels, q)
					break
				}
			}
		}
		if at == nil {
			crowded = append(crowded, legendRoof{full, st.Color})
			continue
		}
		texts = append(texts, roofText{st, *at, text})
	}

	// Bandwidth roofs: along the line, above it, from its left end,
	// moved along it past what the label would cover.
	for _, b := range l.s.bandwidth {
		x0, y0 := trX(b.from), trY(b.value*b.from)
		x1, y1 := trX(b.to), trY(b.value*b.to)
		angle := math.Atan2(float64(y1-y0), float64(x1-x0))
		sin, cos := vg.Length(math.Sin(angle)), vg.Length(math.Cos(angle))
		st := sty
		st.Color = bandwidthColors[b.color%len(bandwidthColors)]
		st.Rotation = angle
		full := b.label("GB/s")
		text := ellipsize(st, full, maxW)
		w := st.Width(text)
		length := vg.Length(math.Hypot(float64(x1-x0), float64(y1-y0)))
		var at *vg.Point
		for d := 2 * pad; d+w <= length-pad && at == nil; d += lineH / 2 {
			// Lower left corner of the label, a little off the line.
			o := vg.Point{X: x0 + d*cos - (pad/2+1)*sin, Y: y0 + d*sin + (pad/2+1)*cos}
			q := []vg.Point{o, {X: o.X + w*cos, Y: o.Y + w*sin}, {X: o.X + w*cos - lineH*sin, Y: o.Y + w*sin + lineH*cos}, {X: o.X - lineH*sin, Y: o.Y + lineH*cos}}
			if free(q) {
				at = &o
				placedLabels = append(placedLabels, q)
			}
		}
		if at == nil {
			crowded = append(crowded, legendRoof{full, st.Color})
			continue
		}
		texts = append(texts, roofText{st, *at, text})
	}
	return texts, placedLabels, crowded
}

// legendRect is where the legend is drawn: gonum's
// Legend.Rectangle ignores the offsets. Nil when the legend is empty.
func legendRect(c draw.Canvas, l plot.Legend) *vg.Rectangle {
	r := l.Rectangle(c)
	size := r.Size()
	if size.Y <= 0 {
		return nil
	}
	min := vg.Point{X: c.Max.X + l.XOffs - size.X, Y: c.Min.Y + l.YOffs}
	return &vg.Rectangle{Min: min, Max: vg.Point{X: min.X + size.X, Y: min.Y + size.Y}}
}
