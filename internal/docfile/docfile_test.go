package docfile_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

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

func TestUpdatePointWritesAloneReplacesItsLabelOrJoinsTheSet(t *testing.T) {
	p := func(label string, s float64) roofline.Point {
		return roofline.Point{Schema: roofline.PointSchema, Label: label, Seconds: s}
	}
	tests := []struct {
		name     string
		existing []roofline.Point // nil: no file
		want     []string         // labels and seconds, in order
	}{
		{"no file: the point alone", nil, []string{"a 2"}},
		{"the same label alone: replaced", []roofline.Point{p("a", 1)}, []string{"a 2"}},
		{"another label: joined", []roofline.Point{p("b", 1)}, []string{"b 1", "a 2"}},
		{"a set: replaced in place", []roofline.Point{p("b", 1), p("a", 1), p("c", 1)}, []string{"b 1", "a 2", "c 1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "base.json")
			switch len(tt.existing) {
			case 0:
			case 1:
				if err := testutil.WriteDoc(path, tt.existing[0]); err != nil {
					t.Fatal(err)
				}
			default:
				if err := testutil.WriteDoc(path, roofline.PointSet{Schema: roofline.PointSetSchema, Points: tt.existing}); err != nil {
					t.Fatal(err)
				}
			}
			if err := docfile.UpdatePoint(context.Background(), path, io.Discard, p("a", 2)); err != nil {
				t.Fatal(err)
			}
			ps, err := docfile.ReadPoints(path)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, q := range ps {
				got = append(got, fmt.Sprintf("%s %g", q.Label, q.Seconds))
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("points %q, want %q", got, tt.want)
			}
		})
	}
}

func TestAddGPUKeepsThisMachinesRoofsAndReplacesTheSameDevice(t *testing.T) {
	dir := t.TempDir()
	here := roofline.Machine{Cores: 8, Hostname: "a"}
	old := roofline.Roofs{Schema: roofline.RoofsSchema, Machine: here,
		Compute: []roofline.ComputeRoof{{Name: "fma"}},
		GPUs:    []roofline.GPURoofs{{Device: roofline.GPUDevice{Index: 0, Name: "old"}}, {Device: roofline.GPUDevice{Index: 1, Name: "other"}}}}
	mine, foreign := filepath.Join(dir, "mine.json"), filepath.Join(dir, "foreign.json")
	if err := testutil.WriteDoc(mine, old); err != nil {
		t.Fatal(err)
	}
	elsewhere := old
	elsewhere.Machine = roofline.Machine{Cores: 4, Hostname: "a"}
	if err := testutil.WriteDoc(foreign, elsewhere); err != nil {
		t.Fatal(err)
	}
	g := roofline.GPURoofs{Device: roofline.GPUDevice{Index: 0, Name: "new"}}
	created := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name    string
		path    string
		added   bool
		compute int
		gpus    []string
	}{
		{"this machine's document", mine, true, 1, []string{"other", "new"}},
		{"another machine's document", foreign, false, 0, []string{"new"}},
		{"no document", filepath.Join(dir, "none.json"), false, 0, []string{"new"}},
	}
	for _, tt := range tests {
		doc, added := docfile.AddGPU(tt.path, g, here, created)
		var gpus []string
		for _, r := range doc.GPUs {
			gpus = append(gpus, r.Device.Name)
		}
		if added != tt.added || len(doc.Compute) != tt.compute || !slices.Equal(gpus, tt.gpus) || !doc.Created.Equal(created) || doc.Machine != here {
			t.Errorf("%s: added %v, %d compute roofs, GPUs %q, created %v; want %v, %d, %q, %v", tt.name, added, len(doc.Compute), gpus, doc.Created, tt.added, tt.compute, tt.gpus, created)
		}
	}
}

// A point placed under other roofs than those drawn is named, with the
// roofs it was placed under; one placed under the drawn roofs, by another
// path to the same file, is not, nor one whose roofs_file reaches nothing
// from here.
func TestLoadDrawingNamesPointsPlacedUnderOtherRoofs(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	drawn, other := filepath.Join(dir, "roofs.json"), filepath.Join(dir, "other.json")
	for _, f := range []string{drawn, other} {
		if err := testutil.WriteDoc(f, roofline.Roofs{Schema: roofline.RoofsSchema}); err != nil {
			t.Fatal(err)
		}
	}
	set := roofline.PointSet{Schema: roofline.PointSetSchema, Points: []roofline.Point{
		{Schema: roofline.PointSchema, Label: "same", Seconds: 1, RoofsFile: "roofs.json"},
		{Schema: roofline.PointSchema, Label: "other", Seconds: 1, RoofsFile: other},
		{Schema: roofline.PointSchema, Label: "unplaced", Seconds: 1},
		{Schema: roofline.PointSchema, Label: "placed elsewhere, relative to there", Seconds: 1, RoofsFile: "ci/perf/roofs.json"},
	}}
	points := filepath.Join(dir, "points.json")
	if err := testutil.WriteDoc(points, set); err != nil {
		t.Fatal(err)
	}
	d, err := docfile.LoadDrawing(drawn, []string{points})
	if err != nil {
		t.Fatal(err)
	}
	if want := []docfile.OtherRoofs{{Label: "other", RoofsFile: other}}; !slices.Equal(d.OtherRoofs, want) {
		t.Errorf("points under other roofs %+v, want %+v", d.OtherRoofs, want)
	}
}
