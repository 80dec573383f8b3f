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
	testutil.SeedPoints(f, "../../roofline")
	roofs, err := roofline.ReadRoofs("../../roofline/testdata/roofs_zen5_vm.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		points, ok := testutil.FuzzPoints(t, data)
		if !ok {
			return
		}
		in := Input{Roofs: roofs, Points: points}
		HTML(io.Discard, in)
		Markdown(io.Discard, in)
	})
}
