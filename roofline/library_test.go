package roofline_test

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/rprof/rprof/internal/docfile"
	"github.com/rprof/rprof/internal/testutil"
	"github.com/rprof/rprof/roofline"
)

// TestLibraryRoofsDocument pins the roofs document's library roofs (a
// oneDNN ceiling as rprof roofs --dnn records it, figures from the Zen 5
// guest) to docs/schema-roofs.md's fields, and reads them back whole.
func TestLibraryRoofsDocument(t *testing.T) {
	doc := roofline.Roofs{Schema: roofline.RoofsSchema, Created: time.Date(2026, 11, 23, 3, 10, 0, 0, time.UTC),
		Compute: []roofline.ComputeRoof{
			{Name: "avx512-fma-fp32", ISA: "avx512", Precision: roofline.Single, Threads: 1, GFlops: 219, CI: roofline.Interval{Lo: 217.7, Hi: 224.9}, TheoreticalGFlops: 233.5},
			{Name: "onednn-conv3x3-nChw16c jit:avx512_core fp32", Kind: roofline.ComputeKindLibrary, ISA: "avx512", Precision: roofline.Single, Threads: 1,
				GFlops: 194.4, CI: roofline.Interval{Lo: 186.9, Hi: 197.9},
				Library: &roofline.LibraryCall{Name: "oneDNN", Version: "v2.6.3", Runtime: "OpenMP", Primitive: "convolution", Implementation: "jit:avx512_core",
					Problem: "mb1_ic64oc64_ih56oh56kh3sh1dh0ph1_iw56ow56kw3sw1dw0pw1", Layout: "nChw16c", WorkFlops: 231411712, LibraryThreads: 1}},
		},
		Bandwidth: []roofline.BandwidthRoof{{Level: "DRAM", Kernel: "avx2-triad-nt", Threads: 1, GBytesPerS: 50.06, CI: roofline.Interval{Lo: 41, Hi: 55.01}, WorkingSetBytes: 512 << 20}},
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "roofs_library.json")
	testutil.Golden(t, path, append(b, '\n'))
	back, err := docfile.ReadRoofs(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(*back, doc) {
		t.Errorf("read back:\n%+v\nwant\n%+v", *back, doc)
	}
}
