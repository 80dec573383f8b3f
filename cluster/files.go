package cluster

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/rprof/rprof/internal/docfile"
	"github.com/rprof/rprof/roofline"
)

// ReadDocuments reads a merge's files: the ranks' points, or the nodes'
// roofs documents, whichever each file holds. A file that is neither
// fails the read, naming the file.
func ReadDocuments(files []string) (points []roofline.Point, roofs []roofline.Roofs, err error) {
	for _, f := range files {
		r, err := docfile.ReadRoofs(f)
		if err == nil {
			roofs = append(roofs, *r)
			continue
		}
		ps, perr := docfile.ReadPoints(f)
		if perr != nil {
			var se *roofline.SchemaError
			if errors.As(perr, &se) && errors.Is(err, roofline.ErrSchema) {
				perr = fmt.Errorf("%s: schema %q is neither a point, a point set nor a roofs document of this rprof's versions: %w", f, se.Got, roofline.ErrSchema)
			}
			return nil, nil, perr
		}
		points = append(points, ps...)
	}
	return points, roofs, nil
}

// RanksRoofs reads the node roofs a job's points are merged under: the
// document at path, else, for "", the one rank 0's point was placed
// under when it is readable here (a shared file system), else none. It
// returns the roofs and their path.
func RanksRoofs(path string, points []roofline.Point) (*roofline.Roofs, string, error) {
	if path == "" {
		for _, p := range points {
			if p.Rank != nil && p.Rank.Rank == 0 && p.RoofsFile != "" {
				if r, err := docfile.ReadRoofs(p.RoofsFile); err == nil {
					return r, p.RoofsFile, nil
				}
			}
		}
		return nil, "", nil
	}
	r, err := docfile.ReadRoofs(path)
	if err != nil {
		return nil, "", fmt.Errorf("roofs: %w", err)
	}
	return r, path, nil
}

// RoofsFiles names the merged roofs documents in dir: the job's, then
// those of node types 1 to types.
func RoofsFiles(dir string, types int) []string {
	files := []string{filepath.Join(dir, "roofs-job.json")}
	for i := range types {
		files = append(files, filepath.Join(dir, fmt.Sprintf("roofs-type-%d.json", i+1)))
	}
	return files
}

// NodeRoofsFile is the roofs document a node's local rank 0 writes in
// dir under a launcher, named by node for the merge of the node types.
func NodeRoofsFile(dir string, id Identity) string {
	return filepath.Join(dir, "roofs-"+id.Node+".json")
}

// Incomplete says whether ranks or a node's traffic owner are missing
// from the job.
func (m Merged) Incomplete() bool {
	return slices.ContainsFunc(m.Point.Flags, func(f roofline.Flag) bool {
		return f.Code == roofline.FlagMissingRank || f.Code == roofline.FlagTrafficOwner
	})
}
