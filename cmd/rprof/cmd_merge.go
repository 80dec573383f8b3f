package main

import (
	"context"
	"fmt"
	"os"

	"github.com/rprof/rprof/cluster"
	"github.com/rprof/rprof/cmd/rprof/internal/render"
	"github.com/rprof/rprof/internal/docfile"
	"github.com/rprof/rprof/internal/output"
	"github.com/rprof/rprof/roofline"
)

var cmdMerge = &command{
	Name:      "merge",
	UsageLine: "rprof merge [flags] RANK.json... | rprof merge -o DIR/ ROOFS.json...",
	Short:     "merge a parallel job's rank points, or its nodes' roofs",
	Long: `
Merge reads the points that 'rprof run --json DIR/' wrote for each rank of
a parallel job (under mpirun or srun), groups them by job and makes each
job's point:

  W  the ranks' work summed (and per precision);
  Q  the DRAM traffic of the nodes' traffic owners summed: one process per
     node counted the node's memory controllers for all its ranks; for
     ranks counted with --count emulate, each rank's own modelled Q
     summed (flagged traffic-per-rank; no owners);
  T  wall time from the first rank's start to the last rank's end (the
     slowest rank's own time is reported too).

The job point is placed under the node roofs × the job's nodes; this
assumes the nodes scale perfectly, and says so. It checks that ranks
0..N-1 are all present and that each node has exactly one traffic owner;
what is missing is reported and flagged, and what can be merged still is
(a node without an owner makes Q unknown). Nodes with unequal roofs are
flagged. Points of different rprof versions are refused.

Given the roofs documents that 'rprof roofs -o DIR/' wrote on each node
under srun, merge groups the nodes by type (CPU and topology) and writes
to -o DIR/ one document per type (roofs-type-N.json: each ceiling at the
lowest value any node of the type reached; nodes that differ by more
than 5% are flagged) and, when all nodes are of one type, the job's
roofs (roofs-job.json: that type's roofs × the nodes, thread scopes too).

Exit status: 0 merged; 1 merged, but ranks or traffic owners are missing;
2 bad command line; 125 unreadable points, points outside a parallel job,
or mixed rprof versions.
`,
	Run: runMerge,
}

func runMerge(ctx context.Context, e *env, args []string) error {
	fset := newFlagSet(e, "merge")
	roofsPath := fset.String("roofs", "", "the nodes' roofs document `FILE` (default: the one rank 0 was placed under, when this machine can read it)")
	perNode := fset.Bool("nodes", false, "also make one point per node (its ranks' W, its owner's Q, its own first start to last end), under the node roofs")
	jsonPath := fset.String("json", "", "write the job point to `FILE` (a point set when there are several jobs or --nodes)")
	roofsOut := fset.String("o", "", "merge roofs documents instead (above): write one per node type into `DIR/`")
	if err := parseFlags(fset, args); err != nil {
		return err
	}
	if fset.NArg() == 0 {
		return usagef("no points: give the ranks' point files (e.g. DIR/*.json)")
	}
	if err := checkOutputs([]string{*jsonPath}, append(fset.Args(), *roofsPath)...); err != nil {
		return err
	}
	if *roofsOut != "" {
		// Up to one node type per document, and the job's.
		if err := output.Distinct(cluster.RoofsFiles(*roofsOut, fset.NArg()), fset.Args()); err != nil {
			return usagef("%v", err)
		}
	}
	points, roofsDocs, err := cluster.ReadDocuments(fset.Args())
	if err != nil {
		// Bad input, as for every reader.
		return &exitError{code: exitUsage, err: err}
	}
	switch {
	case roofsDocs != nil && points != nil:
		return usagef("give either the ranks' points or the nodes' roofs documents, not both")
	case roofsDocs != nil:
		return mergeNodeRoofs(ctx, e, *roofsOut, roofsDocs)
	case *roofsOut != "":
		return usagef("-o is for merging roofs documents; the job point goes to --json")
	}
	roofs, roofsFile, err := cluster.RanksRoofs(*roofsPath, points)
	if err != nil {
		return &exitError{code: exitInternal, err: err}
	}
	merged, err := cluster.Merge(points, roofs)
	if err != nil {
		return &exitError{code: exitInternal, err: err}
	}
	var out []roofline.Point
	incomplete := false
	for _, m := range merged {
		m.Point.RoofsFile = roofsFile
		render.WriteJobSummary(e.stdout, m)
		out = append(out, m.Point)
		if *perNode {
			for _, n := range m.Nodes {
				n.RoofsFile = roofsFile
				fmt.Fprintf(e.stdout, "\n Node %s of job %s: ranks %s", n.Job.Nodes[0].Node, n.Job.ID, render.JoinInts(n.Job.Nodes[0].Ranks))
				render.WriteRunSummary(e.stdout, &n, "the node's widest")
				out = append(out, n)
			}
		}
		incomplete = incomplete || m.Incomplete()
	}
	if *jsonPath != "" {
		var doc any = out[0]
		if len(out) > 1 {
			doc = roofline.PointSet{Schema: roofline.PointSetSchema, Points: out}
		}
		if err := docfile.Write(ctx, *jsonPath, e.stdout, doc); err != nil {
			return writeFailure(err)
		}
	}
	if incomplete {
		return &exitError{code: exitFailure}
	}
	return nil
}

// mergeNodeRoofs writes one roofs document per node type to dir and,
// with a single type, the job's roofs.
func mergeNodeRoofs(ctx context.Context, e *env, dir string, docs []roofline.Roofs) error {
	if st, err := os.Stat(dir); dir == "" || err != nil || !st.IsDir() {
		return usagef("-o DIR: an existing directory for the node types' and the job's roofs documents")
	}
	types, job, err := cluster.MergeRoofs(docs)
	if err != nil {
		return &exitError{code: exitInternal, err: err}
	}
	for i, t := range types {
		path := cluster.RoofsFiles(dir, i+1)[i+1]
		if err := docfile.Write(ctx, path, e.stdout, t.Roofs); err != nil {
			return writeFailure(err)
		}
		render.WriteNodeType(e.stdout, i+1, t, path)
	}
	if job == nil {
		render.WriteNoJobRoofs(e.stdout, len(types))
		return nil
	}
	path := cluster.RoofsFiles(dir, 0)[0]
	if err := docfile.Write(ctx, path, e.stdout, job); err != nil {
		return writeFailure(err)
	}
	render.WriteJobRoofs(e.stdout, len(docs), path)
	return nil
}
