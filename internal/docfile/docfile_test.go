package docfile_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/rprof/rprof/internal/docfile"
	"github.com/rprof/rprof/internal/testutil"
	"github.com/rprof/rprof/roofline"
)

func TestLoadRoofsFindsAndReadsTheRoofsOnce(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache"))
	t.Setenv("HOME", dir)
	def, err := docfile.DefaultRoofsPath()
	if err != nil {
		t.Fatal(err)
	}
	point := filepath.Join(dir, "point.json")
	if err := testutil.WriteDoc(point, roofline.Point{Schema: roofline.PointSchema}); err != nil {
		t.Fatal(err)
	}
	truncated := filepath.Join(dir, "truncated.json")
	if err := os.WriteFile(truncated, []byte(`{"schema": "rprof.roofs/v1", "compute": [`), 0o644); err != nil {
		t.Fatal(err)
	}
	given := filepath.Join(dir, "given.json")
	if err := testutil.WriteDoc(given, roofline.Roofs{Schema: roofline.RoofsSchema}); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name        string
		flag        string
		makeDefault bool
		path        string
		missing     string
		err         func(error) bool
	}{
		{"given", given, false, given, "", nil},
		{"given wins over the default", given, true, given, "", nil},
		{"no flag: the default", "", true, def, "", nil},
		{"no flag, no default: none, and where it was looked for", "", false, "", def, nil},
		{"given but missing", filepath.Join(dir, "none.json"), false, "", "", func(err error) bool { return errors.Is(err, os.ErrNotExist) }},
		{"given a point", point, false, "", "", func(err error) bool { return errors.Is(err, roofline.ErrSchema) }},
		{"given a truncated file", truncated, false, "", "", func(err error) bool { return err != nil }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			os.RemoveAll(filepath.Dir(def))
			if tt.makeDefault {
				if err := os.MkdirAll(filepath.Dir(def), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := testutil.WriteDoc(def, roofline.Roofs{Schema: roofline.RoofsSchema}); err != nil {
					t.Fatal(err)
				}
			}
			d, err := docfile.LoadRoofs(tt.flag)
			if tt.err != nil {
				if !tt.err(err) {
					t.Errorf("err = %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d.Path != tt.path || d.Missing != tt.missing || (d.Roofs != nil) != (tt.path != "") {
				t.Errorf("LoadRoofs(%q) = path %q, missing %q, roofs %v; want %q, %q", tt.flag, d.Path, d.Missing, d.Roofs != nil, tt.path, tt.missing)
			}
		})
	}
}
