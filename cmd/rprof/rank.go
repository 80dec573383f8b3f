package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/rprof/rprof/cluster"
	"github.com/rprof/rprof/cmd/rprof/internal/render"
	"github.com/rprof/rprof/measure"
	"github.com/rprof/rprof/roofline"

	"github.com/rprof/rprof/internal/rundir"
	"github.com/rprof/rprof/internal/unit"
)

// launchers are the programs that start ranks as their own children (or
// slurmstepd's): rprof run in front of them would count the launcher, not
// the ranks.
var launchers = map[string]bool{
	"mpirun": true, "mpiexec": true, "mpirun.openmpi": true, "mpiexec.openmpi": true, "orterun": true,
	"mpirun.mpich": true, "mpiexec.mpich": true, "mpiexec.hydra": true, "srun": true, "prun": true,
}

// launcherIn names the parallel launcher CMD starts with, or "".
func launcherIn(argv []string) string {
	if len(argv) > 0 && launchers[filepath.Base(argv[0])] {
		return filepath.Base(argv[0])
	}
	return ""
}

// rankNode is a rank's part in its node's traffic-owner election.
type rankNode interface {
	measure.Node
	Owner() bool
	Window() (start, end time.Time)
	Shared() []string
	Close() error
}

// identity is this process's place in a parallel job; ok is false
// outside one.
func identity(job string) (id cluster.Identity, ok bool, err error) {
	host, err := os.Hostname()
	if err != nil {
		return id, false, fmt.Errorf("hostname: %w", err)
	}
	id, err = cluster.FromEnv(cluster.Environment{Getenv: os.Getenv, Hostname: host, Proxy: cluster.HydraProxy})
	if errors.Is(err, cluster.ErrNoLauncher) {
		return id, false, nil
	}
	if err != nil {
		return id, false, err
	}
	if job != "" {
		id.Job = job
	}
	return id, true, nil
}

// joinNode joins the election in lockDir. An unusable directory costs the
// node its Q, not the run: one line says so, and the rank counts W and T.
func joinNode(stderr io.Writer, lockDir string, id cluster.Identity) (rankNode, error) {
	s, err := cluster.Join(lockDir, id)
	var lde *cluster.LockDirError
	var mixed *cluster.MixedUsersError
	switch {
	case errors.As(err, &lde):
		fmt.Fprintf(stderr, "rprof run: rank %d: %v: this rank counts W and T; nobody counts node %s's DRAM traffic (set --lock-dir)\n", id.Rank, err, id.Node)
		return &bystander{}, nil
	case errors.As(err, &mixed):
		fmt.Fprintf(stderr, "rprof run: rank %d: %v: this rank counts W and T, and takes no part in electing node %s's traffic owner (run every rank as one user)\n", id.Rank, err, id.Node)
		return &bystander{}, nil
	}
	return s, err
}

// bystander is a rank outside the election: it never owns the traffic.
type bystander struct{ start, end time.Time }

func (b *bystander) Elect(context.Context) (bool, error) { return false, nil }
func (b *bystander) Started() error                      { b.start = time.Now(); return nil }
func (b *bystander) Ended(context.Context) error         { b.end = time.Now(); return nil }
func (b *bystander) Owner() bool                         { return false }
func (b *bystander) Window() (time.Time, time.Time)      { return b.start, b.end }
func (b *bystander) Shared() []string                    { return nil }
func (b *bystander) Close() error                        { return nil }

// defaultLockDir is $RPROF_LOCK_DIR, else the user's private runtime
// directory: it must be local to the node (a shared one works too: the
// files are named by node) and, like the runtime directory, reachable by
// this user alone.
func defaultLockDir() string {
	if d := os.Getenv("RPROF_LOCK_DIR"); d != "" {
		return d
	}
	return rundir.Default()
}

// rankFile is a rank's point file in dir: named by job and rank, ranks
// zero-padded so that the files sort in rank order.
func rankFile(dir string, id cluster.Identity) string {
	width := len(fmt.Sprint(max(id.Size-1, 0)))
	job := strings.Map(func(r rune) rune {
		if r == '/' || r == ' ' || r == os.PathSeparator {
			return '_'
		}
		return r
	}, id.Job)
	return filepath.Join(dir, fmt.Sprintf("%s.rank%0*d.json", job, width, id.Rank))
}

// describeRank places the point in its job.
func describeRank(p *roofline.Point, id cluster.Identity, n rankNode) {
	start, end := n.Window()
	p.Rank = &roofline.Rank{Job: id.Job, Launcher: id.Launcher, Rank: id.Rank, Size: id.Size,
		LocalRank: id.LocalRank, LocalSize: id.LocalSize, Node: id.Node, TrafficOwner: n.Owner(),
		Start: start, End: end, Version: rprofVersion()}
	if p.RoofsFile != "" {
		if r, err := readRoofs(p.RoofsFile); err == nil {
			p.Rank.NodeRoofs = roofline.SummarizeRoofs(r)
		}
	}
	for _, why := range n.Shared() {
		p.Flags = append(p.Flags, roofline.Flag{Code: roofline.FlagSharedTraffic, Subject: roofline.SubjectTraffic, Message: why + ": this node's Q includes traffic that is not this job's"})
	}
}

// writeRankSummary is a rank's one line: many ranks print at once, and
// the job's point comes from rprof merge.
func writeRankSummary(w io.Writer, p *roofline.Point) {
	r := p.Rank
	q := "DRAM traffic counted by this node's owner"
	switch {
	case p.Source == roofline.SourceEmulated:
		q = fmt.Sprintf("modelled DRAM traffic %s B (this rank's own)", render.OrUnknown(p.TrafficBytes, unit.Count))
	case r.TrafficOwner:
		q = fmt.Sprintf("node DRAM traffic %s B (traffic owner, for the node's %d local ranks)", render.OrUnknown(p.TrafficBytes, unit.Count), r.LocalSize)
	}
	flags := ""
	if n := len(p.Flags); n > 0 {
		flags = fmt.Sprintf("; flags: %d (in the point file)", n)
	}
	fmt.Fprintf(w, "rprof run: rank %d/%d on %s (local %d/%d): work %s FLOP in %.6f s; %s%s\n",
		r.Rank, r.Size, r.Node, r.LocalRank, r.LocalSize, render.OrUnknown(p.WorkFlops, unit.Count), p.Seconds, q, flags)
}

// rprofVersion names this build: the module version, or the VCS revision
// (with "+dirty" for a modified tree) of a development build.
func rprofVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := bi.Main.Version
	var rev, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if (v == "" || v == "(devel)") && rev != "" {
		return rev + dirty
	}
	if v == "" {
		return "(devel)"
	}
	return v
}
