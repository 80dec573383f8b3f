package roofline

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// seedDocs adds the recorded documents of testdata as seeds.
func seedDocs(f *testing.F) {
	paths, _ := filepath.Glob("testdata/*.json")
	for _, p := range paths {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"schema": "` + PointSchema + `"}`))
	f.Add([]byte(`[]`))
}

// FuzzDecodePoints: any bytes give points that pass ValidatePoint, or an
// error; never a panic.
func FuzzDecodePoints(f *testing.F) {
	seedDocs(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		path := "p.json"
		ps, err := DecodePoints(bytes.NewReader(data), path)
		if err != nil {
			return
		}
		for i := range ps {
			if err := ValidatePoint(path, &ps[i]); err != nil {
				t.Fatalf("DecodePoints returned an invalid point: %v", err)
			}
		}
	})
}

// FuzzDecodeRoofs: any bytes give valid roofs or an error; never a panic.
func FuzzDecodeRoofs(f *testing.F) {
	seedDocs(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		path := "r.json"
		r, err := DecodeRoofs(bytes.NewReader(data), path)
		if err != nil {
			return
		}
		if err := ValidateRoofs(path, r); err != nil {
			t.Fatalf("DecodeRoofs returned invalid roofs: %v", err)
		}
		for _, s := range r.ThreadScopes() {
			r.PlacePoint(&Point{Intensity: ptrTo(1.0), GFlops: ptrTo(1.0)}, s)
		}
	})
}
