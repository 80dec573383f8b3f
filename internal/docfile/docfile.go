// Package docfile finds, reads and writes the files of rprof's JSON
// documents: the default roofs document in the user's cache directory,
// the roofs a command places points under, points and point sets, a
// point set's read-modify-write, and the document a GPU's roofs go to.
// roofline decodes and encodes the documents themselves; this package is
// where they meet paths.
package docfile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/rprof/rprof/internal/output"
	"github.com/rprof/rprof/roofline"
)

// Roofs is the roofs document a command places points under.
type Roofs struct {
	// Roofs is nil when there is none.
	Roofs *roofline.Roofs
	// Path names the document read, "" when none.
	Path string
	// Missing is the default path when it was looked for and is absent.
	Missing string
}

// DefaultRoofsPath is where `rprof roofs` writes and `rprof run` looks by
// default: $XDG_CACHE_HOME/rprof/roofs.json (or the OS equivalent).
func DefaultRoofsPath() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("find cache directory: %w", err)
	}
	return filepath.Join(dir, "rprof", "roofs.json"), nil
}

// MakeDefaultRoofsPath is DefaultRoofsPath with its directory created: the
// one directory rprof creates (a directory given for a document must
// exist).
func MakeDefaultRoofsPath() (string, error) {
	path, err := DefaultRoofsPath()
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", fmt.Errorf("create the cache directory: %w", err)
	}
	return path, nil
}

// RoofsInput is the roofs document a command reads: path, else the
// default one ("" when there is no cache directory).
func RoofsInput(path string) string {
	if path != "" {
		return path
	}
	def, _ := DefaultRoofsPath()
	return def
}

// LoadRoofs finds and reads the roofs document: the one at path, else,
// for "", the default one when it exists. Every command finds roofs here.
func LoadRoofs(path string) (Roofs, error) {
	d := Roofs{Path: path}
	if path == "" {
		def, err := DefaultRoofsPath()
		if err != nil {
			return d, nil // no cache directory: no default roofs
		}
		if _, err := os.Stat(def); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				d.Missing = def
				return d, nil
			}
			return d, fmt.Errorf("read roofs: %w", err)
		}
		d.Path = def
	}
	r, err := ReadRoofs(d.Path)
	if err != nil {
		return Roofs{}, fmt.Errorf("read roofs: %w", err)
	}
	d.Roofs = r
	return d, nil
}

// ReadRoofs reads the roofs document at path.
func ReadRoofs(path string) (*roofline.Roofs, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return roofline.DecodeRoofs(f, path)
}

// ReadPoints reads the point or point set at path.
func ReadPoints(path string) ([]roofline.Point, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return roofline.DecodePoints(f, path)
}

// Write writes a JSON document to path, through internal/output ("-":
// stdout).
func Write(ctx context.Context, path string, stdout io.Writer, v any) error {
	var doc bytes.Buffer
	if err := roofline.Encode(&doc, v); err != nil {
		return err
	}
	return output.Write(ctx, path, stdout, func(w io.Writer) error {
		_, err := w.Write(doc.Bytes())
		return err
	})
}

// UpdatePoint writes p to path: alone, or replacing (or joining) the
// point of its label when the file holds other points. Other updates of
// the same file may run at once (a CI matrix): each reads and writes
// under the file's lock, so none is lost.
func UpdatePoint(ctx context.Context, path string, stdout io.Writer, p roofline.Point) error {
	return output.Update(ctx, path, func() error {
		var doc any = p
		existing, err := ReadPoints(path)
		if err == nil && (len(existing) > 1 || (len(existing) == 1 && existing[0].Label != p.Label)) {
			set := roofline.PointSet{Schema: roofline.PointSetSchema}
			replaced := false
			for _, q := range existing {
				if q.Label == p.Label {
					q, replaced = p, true
				}
				set.Points = append(set.Points, q)
			}
			if !replaced {
				set.Points = append(set.Points, p)
			}
			doc = set
		}
		return Write(ctx, path, stdout, doc)
	})
}

// Drawing is what a chart or report draws: the roofs and the points.
type Drawing struct {
	// Roofs is nil when there are none; Missing is the default path
	// looked for, when it was absent (LoadRoofs).
	Roofs              *roofline.Roofs
	RoofsPath, Missing string
	// Points are the points read, each followed by its regions' points.
	Points []roofline.Point
	// Foreign say, point by point, why roofs of another machine were
	// flagged on it ("point \"x\": ...").
	Foreign []string
	// OtherRoofs name the points placed under another roofs document
	// than the one drawn (their roofs_file), and that document.
	OtherRoofs []OtherRoofs
}

// OtherRoofs is a point placed under the roofs at RoofsFile, which are
// not the roofs drawn.
type OtherRoofs struct{ Label, RoofsFile string }

// LoadDrawing reads the roofs (LoadRoofs) and every point file, and
// flags the points measured on another machine than the roofs.
func LoadDrawing(roofsPath string, pointFiles []string) (*Drawing, error) {
	roofs, err := LoadRoofs(roofsPath)
	if err != nil {
		return nil, err
	}
	d := &Drawing{Roofs: roofs.Roofs, RoofsPath: roofs.Path, Missing: roofs.Missing}
	for _, f := range pointFiles {
		pts, err := ReadPoints(f)
		if err != nil {
			return nil, fmt.Errorf("read points: %w", err)
		}
		for _, p := range pts {
			if otherFile(p.RoofsFile, d.RoofsPath) {
				d.OtherRoofs = append(d.OtherRoofs, OtherRoofs{Label: p.Label, RoofsFile: p.RoofsFile})
			}
			// Each region is drawn as its own labelled point.
			d.Points = append(d.Points, p)
			d.Points = append(d.Points, p.RegionPoints()...)
		}
	}
	if d.Roofs != nil {
		for i := range d.Points {
			if why := roofline.MarkForeign(&d.Points[i], d.Roofs); why != "" {
				d.Foreign = append(d.Foreign, fmt.Sprintf("point %q: %s", d.Points[i].Label, why))
			}
		}
	}
	return d, nil
}

// otherFile says whether a names a file here that is not b (b may be ""
// or absent): a path that reaches nothing from here (a point's roofs_file
// relative to where it was measured) cannot be told apart.
func otherFile(a, b string) bool {
	if a == "" || a == b {
		return false
	}
	sa, err := os.Stat(a)
	if err != nil {
		return false
	}
	sb, err := os.Stat(b)
	return err != nil || !os.SameFile(sa, sb)
}

// AddGPU is the document to write GPU roofs g to: the roofs document at
// path with g in place of the same device's roofs, when it was measured
// on this machine (here), else a new one holding only g; added says
// which.
func AddGPU(path string, g roofline.GPURoofs, here roofline.Machine, created time.Time) (doc roofline.Roofs, added bool) {
	doc = roofline.Roofs{Schema: roofline.RoofsSchema, Machine: here, Compute: []roofline.ComputeRoof{}, Bandwidth: []roofline.BandwidthRoof{}}
	if old, err := ReadRoofs(path); err == nil && roofline.ForeignRoofs(old.Machine, here) == "" {
		doc, added = *old, true
	}
	doc.Created = created
	doc.GPUs = slices.DeleteFunc(doc.GPUs, func(o roofline.GPURoofs) bool { return o.Device.Index == g.Device.Index })
	doc.GPUs = append(doc.GPUs, g)
	return doc, added
}
