package chart

import (
	"io"
	"testing"

	"github.com/rprof/rprof/internal/testutil"
	"github.com/rprof/rprof/roofline"
)

// FuzzRender draws any points document the readers accept, under recorded
// roofs, as SVG and as text: an error is fine, a panic is not.
func FuzzRender(f *testing.F) {
	testutil.FuzzDrawing(f, "../../../../roofline", func(roofs *roofline.Roofs, points []roofline.Point) {
		Render(io.Discard, "svg", roofs, points, Options{})
		WriteText(io.Discard, roofs, points, Options{})
	})
}
