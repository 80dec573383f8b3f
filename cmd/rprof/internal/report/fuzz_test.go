package report

import (
	"io"
	"testing"

	"github.com/rprof/rprof/internal/testutil"
	"github.com/rprof/rprof/roofline"
)

// FuzzReport writes HTML and Markdown reports of any points document the
// readers accept: an error is fine, a panic is not.
func FuzzReport(f *testing.F) {
	testutil.FuzzDrawing(f, "../../../../roofline", func(roofs *roofline.Roofs, points []roofline.Point) {
		in := Input{Roofs: roofs, Points: points}
		HTML(io.Discard, in)
		Markdown(io.Discard, in)
	})
}
