package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rprof/rprof/measure"
	"github.com/rprof/rprof/roofline"
)

// Every command with inputs and outputs refuses an output that names an
// input, with exit 2, before measuring, and leaves the input as it was.
func TestCommandsRefuseAnOutputThatNamesAnInput(t *testing.T) {
	gateOutsideCI(t)
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	for _, c := range []struct {
		name string
		// args builds the command line from copies of testdata files in
		// dir; victim is the input that must survive.
		args func(dir string) (args []string, victim string)
	}{
		{"run --roofs r.json --json r.json", func(d string) ([]string, string) {
			r := put(t, d, "r.json", "testdata/run/roofs.json")
			return []string{"run", "--work", "1", "--roofs", r, "--json", r, "--", "true"}, r
		}},
		{"run --plot through a link to the roofs", func(d string) ([]string, string) {
			r := put(t, d, "r.json", "testdata/run/roofs.json")
			os.Symlink(r, filepath.Join(d, "r.svg"))
			return []string{"run", "--work", "1", "--roofs", r, "--plot", filepath.Join(d, "r.svg"), "--", "true"}, r
		}},
		{"gate --baseline b.json --benchfmt b.json", func(d string) ([]string, string) {
			b := put(t, d, "b.json", "testdata/gate/baseline.json")
			return []string{"gate", "--baseline", b, "--benchfmt", b, "--", "true"}, b
		}},
		{"gate --update-baseline --json b.json", func(d string) ([]string, string) {
			b := put(t, d, "b.json", "testdata/gate/baseline.json")
			return []string{"gate", "--baseline", b, "--update-baseline", "--json", b, "--", "true"}, b
		}},
		{"report -o p.json p.json", func(d string) ([]string, string) {
			p := put(t, d, "p.json", "testdata/compare/old.json")
			return []string{"report", "--format", "md", "-o", p, p}, p
		}},
		{"plot -o through a relative path", func(d string) ([]string, string) {
			p := put(t, d, "p.svg", "testdata/compare/old.json")
			return []string{"plot", "-o", filepath.Join(d, ".", "p.svg"), p}, p
		}},
		{"compare --markdown OLD OLD NEW", func(d string) ([]string, string) {
			o := put(t, d, "old.json", "testdata/compare/old.json")
			n := put(t, d, "new.json", "testdata/compare/new.json")
			return []string{"compare", "--markdown", o, o, n}, o
		}},
		{"compare --benchfmt NEW OLD NEW", func(d string) ([]string, string) {
			o := put(t, d, "old.json", "testdata/compare/old.json")
			n := put(t, d, "new.json", "testdata/compare/new.json")
			return []string{"compare", "--benchfmt", n, o, n}, n
		}},
		{"merge --json a rank's file", func(d string) ([]string, string) {
			p := put(t, d, "rank.json", "testdata/compare/old.json")
			return []string{"merge", "--json", p, p}, p
		}},
		{"merge -o DIR over a node's roofs", func(d string) ([]string, string) {
			r := put(t, d, "roofs-type-1.json", "testdata/run/roofs.json")
			return []string{"merge", "-o", d, r}, r
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			args, victim := c.args(t.TempDir())
			before, _ := os.ReadFile(victim)
			measured := false
			fake := func(context.Context, measure.Config) (*roofline.Point, error) {
				measured = true
				return &roofline.Point{Schema: roofline.PointSchema, Label: "x"}, nil
			}
			code, _, stderr := rprofMeasuring(t, fake, args...)
			if code != exitUsage || !strings.Contains(stderr, "is also an input") {
				t.Errorf("exit %d, stderr %q; want 2 and the output named as an input", code, stderr)
			}
			if measured {
				t.Error("measured before refusing")
			}
			if after, _ := os.ReadFile(victim); string(after) != string(before) {
				t.Errorf("%s was changed", victim)
			}
		})
	}
}

// put copies testdata file src to dir/name.
func put(t *testing.T, dir, name, src string) string {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
