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
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/rprof/rprof/roofline"

	"github.com/rprof/rprof/internal/unit"
)

const xAxisTitle = "Arithmetic intensity (FLOP per byte of DRAM traffic)"

const (
	defaultWidth  = 9 * vg.Inch
	defaultHeight = 6 * vg.Inch
	pngDPI        = 120
)

var (
	computeColors = []color.Color{
		rgb(0xb2182b), rgb(0xd6604d), rgb(0x8c510a), rgb(0xbf812d), rgb(0x762a83), rgb(0x9970ab),
	}
	bandwidthColors = []color.Color{
		rgb(0x2166ac), rgb(0x4393c3), rgb(0x1b7837), rgb(0x5aae61), rgb(0x35978f), rgb(0x01665e),
	}
	pointColor   color.Color = color.Black
	flaggedColor             = rgb(0xe41a1c)
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
		// Embedded, so that a viewer without Liberation Serif lays the
		// labels out with the metrics they were placed by.
		c = vgsvg.NewWith(vgsvg.UseWH(width, height), vgsvg.EmbedFonts(true))
	case "pdf":
		c = pdfCanvas{vgpdf.New(width, height)}
	default:
		return fmt.Errorf("%w %q", ErrFormat, format)
	}
	p.Draw(draw.New(c))
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
	used := map[string]bool{}
	for _, pt := range s.points {
		col := pointColor
		if pt.flagged {
			col = flaggedColor
		}
		if pt.hi > pt.lo {
			bars, err := plotter.NewYErrorBars(errBar{pt})
			if err != nil {
				return err
			}
			bars.Color, bars.Width, bars.CapWidth = col, vg.Points(1), vg.Points(6)
			p.Add(bars)
		}
		sc, err := plotter.NewScatter(plotter.XYs{{X: pt.x, Y: pt.y}})
		if err != nil {
			return err
		}
		sc.GlyphStyle = glyphFor(pt.bound, pt.analytic, col)
		p.Add(sc)
		used["bound:"+pt.bound] = true
		if pt.analytic {
			used["analytic"] = true
		}
		if pt.flagged {
			used["flagged"] = true
		}
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
	if used["flagged"] {
		entry("flagged (!): see its flags", glyphFor("", false, flaggedColor))
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

	// Compute roofs: right-aligned above the line at its right end,
	// pushed down when they would overlap the label above.
	prevY := c.Max.Y + lineH
	for _, roof := range l.s.compute {
		if roof.theoretical {
			continue // named in its measured roof's label
		}
		st := sty
		st.Color = computeColors[roof.color%len(computeColors)]
		text := roof.label("GFLOP/s")
		y := min(trY(roof.value)+pad/2, c.Max.Y-lineH)
		if y > prevY-lineH {
			y = prevY - lineH
		}
		prevY = y
		w := st.Width(text)
		box := vg.Rectangle{Min: vg.Point{X: c.Max.X - pad - w, Y: y}, Max: vg.Point{X: c.Max.X - pad, Y: y + lineH}}
		// Slide left past the points the label would cover, right to
		// left.
		for _, m := range byXDesc {
			if overlaps(box, m) && m.Min.X-pad-w > c.Min.X {
				box.Max.X = m.Min.X - pad
				box.Min.X = box.Max.X - w
			}
		}
		c.FillText(st, box.Min, text)
		taken = append(taken, box)
	}

	// The x axis title, centred under the data area at the bottom of the
	// image, where gonum would put it.
	xl := p.X.Label.TextStyle
	below := p.X.Width/2 + p.X.Padding + p.X.Tick.Length + p.X.Tick.Label.Height("0") + p.X.Label.Padding + xl.Height(" ")
	c.FillText(xl, vg.Point{X: (c.Min.X + c.Max.X) / 2, Y: c.Min.Y - below + xl.FontExtents().Descent}, xAxisTitle)

	// Bandwidth roofs: along the line, starting a little right of its
	// left end. The lines are parallel; a label is moved along its line
	// past the labels of lines closer than a text line.
	type span struct {
		value  float64
		x0, x1 vg.Length
	}
	var spans []span
	for _, b := range l.s.bandwidth {
		x0, y0 := trX(b.from), trY(b.value*b.from)
		x1, y1 := trX(b.to), trY(b.value*b.to)
		angle := math.Atan2(float64(y1-y0), float64(x1-x0))
		sin, cos := vg.Length(math.Sin(angle)), vg.Length(math.Cos(angle))
		text := b.label("GB/s")
		st := sty
		st.Color = bandwidthColors[b.color%len(bandwidthColors)]
		st.Rotation = angle
		run := st.Width(text) * cos // the label's extent across
		start := x0 + 2*pad*cos
		for moved := true; moved; {
			moved = false
			for _, sp := range spans {
				// Vertical distance of the two lines, perpendicular
				// to them.
				gapY := vg.Length(math.Abs(float64(trY(b.value*xAt(p, c, start))-trY(sp.value*xAt(p, c, start))))) * cos
				if gapY < lineH+pad && start < sp.x1+pad && sp.x0 < start+run {
					start, moved = sp.x1+2*pad, true
				}
			}
		}
		spans = append(spans, span{value: b.value, x0: start, x1: start + run})
		y := trY(b.value * xAt(p, c, start))
		c.FillText(st, vg.Point{X: start - pad/2*sin, Y: y + pad/2*cos}, text)
	}

	// Ridge points: a cross on the peak roof and the intensity below it,
	// a line lower when it would overlap the previous ridge's.
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
		box := vg.Rectangle{Min: vg.Point{X: pt.X - w/2, Y: pt.Y - pad - 1 - rh}}
		box.Max = vg.Point{X: box.Min.X + w, Y: box.Min.Y + rh}
		for slices.ContainsFunc(ridgeLabels, func(r vg.Rectangle) bool { return overlaps(box, r) }) {
			box.Min.Y -= rh
			box.Max.Y -= rh
		}
		c.FillText(rs, box.Min, text)
		ridgeLabels = append(ridgeLabels, box)
	}
	taken = append(taken, ridgeLabels...)

	taken = append(taken, markers...)
	gap := vg.Points(7)
	for _, pt := range l.s.points {
		text := pt.label + " " + unit.Value(pt.y) + " GFLOP/s"
		if pt.fraction > 0 {
			text += " (" + unit.RoundPercent(pt.fraction) + " of " + pt.boundRoofLabel + " roof)"
		}
		st := sty
		if pt.flagged {
			st.Color = flaggedColor
			text += " !"
		}
		m := vg.Point{X: trX(pt.x), Y: trY(pt.y)}
		w := st.Width(text)
		box := freeBox(c.Rectangle, taken, m, w, lineH, gap)
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
// taken: right of the marker, else left, else moved up or down line by
// line. When every place is taken it falls back to the first that fits.
func freeBox(area vg.Rectangle, taken []vg.Rectangle, m vg.Point, w, h, gap vg.Length) vg.Rectangle {
	var fallback *vg.Rectangle
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
				if !slices.ContainsFunc(taken, func(t vg.Rectangle) bool { return overlaps(b, t) }) {
					return b
				}
			}
			if step == 0 {
				break
			}
		}
	}
	if fallback != nil {
		return *fallback
	}
	return vg.Rectangle{Min: vg.Point{X: m.X + gap, Y: m.Y - h/2}, Max: vg.Point{X: m.X + gap + w, Y: m.Y + h/2}}
}

func overlaps(a, b vg.Rectangle) bool {
	return a.Min.X < b.Max.X && b.Min.X < a.Max.X && a.Min.Y < b.Max.Y && b.Min.Y < a.Max.Y
}

// xAt is the intensity at canvas position x of the data area.
func xAt(p *plot.Plot, c draw.Canvas, x vg.Length) float64 {
	lo, hi := math.Log10(p.X.Min), math.Log10(p.X.Max)
	return math.Pow(10, lo+float64((x-c.Min.X)/(c.Max.X-c.Min.X))*(hi-lo))
}

func labelStyle(p *plot.Plot, size float64) text.Style {
	return text.Style{
		Color:   color.Black,
		Font:    font.From(plot.DefaultFont, vg.Points(size)),
		Handler: p.TextHandler,
	}
}

type errBar struct{ placed }

func (e errBar) Len() int                      { return 1 }
func (e errBar) XY(int) (float64, float64)     { return e.x, e.y }
func (e errBar) YError(int) (float64, float64) { return e.y - e.lo, e.hi - e.y }
