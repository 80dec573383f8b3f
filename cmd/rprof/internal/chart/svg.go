package chart

import (
	"bytes"
	"fmt"
	"io"
	"strconv"

	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// svgCanvas gives every text element the width the chart laid it out
// with (textLength, glyphs and spacing stretched to it), so a viewer that
// draws the labels in another font than the one they were measured in (a
// browser showing the chart inline in a report, without the embedded
// font, falls back to DejaVu on Debian: 10-15% wider) still fits each
// label where it was placed instead of running it off the edge or into a
// marker.
type svgCanvas struct {
	*vgsvg.Canvas
	widths []vg.Length // of each FillString, in call order
}

func newSVGCanvas(width, height vg.Length) *svgCanvas {
	return &svgCanvas{Canvas: vgsvg.NewWith(vgsvg.UseWH(width, height), vgsvg.EmbedFonts(true))}
}

func (c *svgCanvas) FillString(f font.Face, pt vg.Point, s string) {
	c.widths = append(c.widths, f.Width(s))
	c.Canvas.FillString(f, pt, s)
}

func (c *svgCanvas) WriteTo(w io.Writer) (int64, error) {
	var b bytes.Buffer
	if _, err := c.Canvas.WriteTo(&b); err != nil {
		return 0, err
	}
	out, err := fitText(b.Bytes(), c.widths)
	if err != nil {
		return 0, err
	}
	n, err := w.Write(out)
	return int64(n), err
}

var textOpen = []byte("<text ")

// fitText adds textLength to the i-th <text> element of svg, widths[i]
// points wide (vgsvg's user unit); an empty label gets none.
func fitText(svg []byte, widths []vg.Length) ([]byte, error) {
	if n := bytes.Count(svg, textOpen); n != len(widths) {
		return nil, fmt.Errorf("svg chart: %d text elements for %d labels drawn", n, len(widths))
	}
	out := make([]byte, 0, len(svg)+len(widths)*48)
	for _, w := range widths {
		i := bytes.Index(svg, textOpen) + len(textOpen)
		out = append(out, svg[:i]...)
		svg = svg[i:]
		if w > 0 {
			out = append(out, `textLength="`...)
			out = strconv.AppendFloat(out, w.Points(), 'g', 5, 64)
			out = append(out, `" lengthAdjust="spacingAndGlyphs" `...)
		}
	}
	return append(out, svg...), nil
}
