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
		Render(io.Discard, "svg", roofs, points, Options{})
		WriteText(io.Discard, roofs, points, Options{})
	})
}
