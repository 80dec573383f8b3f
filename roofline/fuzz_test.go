package roofline

import (
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

// FuzzReadPoints: any bytes give points that pass ValidatePoint, or an
// error; never a panic.
func FuzzReadPoints(f *testing.F) {
	seedDocs(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "p.json")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		ps, err := ReadPoints(path)
		if err != nil {
			return
		}
		for i := range ps {
			if err := ValidatePoint(path, &ps[i]); err != nil {
				t.Fatalf("ReadPoints returned an invalid point: %v", err)
			}
		}
	})
}

// FuzzReadRoofs: any bytes give valid roofs or an error; never a panic.
func FuzzReadRoofs(f *testing.F) {
	seedDocs(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "r.json")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		r, err := ReadRoofs(path)
		if err != nil {
			return
		}
		if err := ValidateRoofs(path, r); err != nil {
			t.Fatalf("ReadRoofs returned invalid roofs: %v", err)
		}
		for _, s := range r.ThreadScopes() {
			r.PlacePoint(&Point{Intensity: ptrTo(1.0), GFlops: ptrTo(1.0)}, s)
		}
	})
}
