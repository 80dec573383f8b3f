package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/rprof/rprof/internal/rundir"
	"github.com/rprof/rprof/roofline"
)

// launchers are the programs that start ranks as their own children (or
// slurmstepd's): rprof run in front of them would count the launcher, not
// the ranks.
var launchers = map[string]bool{
	"mpirun": true, "mpiexec": true, "mpirun.openmpi": true, "mpiexec.openmpi": true, "orterun": true,
	"mpirun.mpich": true, "mpiexec.mpich": true, "mpiexec.hydra": true, "srun": true, "prun": true,
}

// LauncherIn names the parallel launcher argv starts with, or "".
func LauncherIn(argv []string) string {
	if len(argv) > 0 && launchers[filepath.Base(argv[0])] {
		return filepath.Base(argv[0])
	}
	return ""
}

// Local is this process's place in a parallel job, read from its
// environment and hostname, with job, when set, naming the job; ok is
// false outside one.
func Local(job string) (id Identity, ok bool, err error) {
	host, err := os.Hostname()
	if err != nil {
		return id, false, fmt.Errorf("hostname: %w", err)
	}
	id, err = FromEnv(Environment{Getenv: os.Getenv, Hostname: host, Proxy: HydraProxy})
	if errors.Is(err, ErrNoLauncher) {
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

// Node is a rank's part in its node's traffic-owner election: a *Session,
// or a *Bystander that never owns the traffic.
type Node interface {
	Elect(context.Context) (bool, error)
	Started() error
	Ended(context.Context) error
	Owner() bool
	Window() (start, end time.Time)
	Shared() []string
	Close() error
}

// Enter is a rank's part in its node's election in dir. A rank whose
// traffic is its own (shared false: each rank counts its own Q) stands by.
// So does a rank that cannot take part, an unusable dir (*LockDirError)
// or ranks of several users (*MixedUsersError): that costs the node its
// Q, not the run, and Enter returns the *Bystander with the reason.
func Enter(dir string, id Identity, shared bool) (Node, error) {
	if !shared {
		return &Bystander{}, nil
	}
	s, err := Join(dir, id)
	var lde *LockDirError
	var mixed *MixedUsersError
	switch {
	case errors.As(err, &lde), errors.As(err, &mixed):
		return &Bystander{}, err
	case err != nil:
		return nil, err
	}
	return s, nil
}

// Bystander is a rank outside the election: it never owns the traffic.
type Bystander struct{ start, end time.Time }

func (b *Bystander) Elect(context.Context) (bool, error) { return false, nil }
func (b *Bystander) Started() error                      { b.start = time.Now(); return nil }
func (b *Bystander) Ended(context.Context) error         { b.end = time.Now(); return nil }
func (b *Bystander) Owner() bool                         { return false }
func (b *Bystander) Window() (time.Time, time.Time)      { return b.start, b.end }
func (b *Bystander) Shared() []string                    { return nil }
func (b *Bystander) Close() error                        { return nil }

// LockDirEnv names the variable of the election's default lock directory.
const LockDirEnv = "RPROF_LOCK_DIR"

// DefaultLockDir is $RPROF_LOCK_DIR, else the user's private runtime
// directory: it must be local to the node (a shared one works too: the
// files are named by node) and, like the runtime directory, reachable by
// this user alone.
func DefaultLockDir() string {
	if d := os.Getenv(LockDirEnv); d != "" {
		return d
	}
	return rundir.Default()
}

// RankFile is a rank's point file in dir: named by job and rank, ranks
// zero-padded so that the files sort in rank order.
func RankFile(dir string, id Identity) string {
	width := len(fmt.Sprint(max(id.Size-1, 0)))
	job := strings.Map(func(r rune) rune {
		if r == '/' || r == ' ' || r == os.PathSeparator {
			return '_'
		}
		return r
	}, id.Job)
	return filepath.Join(dir, fmt.Sprintf("%s.rank%0*d.json", job, width, id.Rank))
}

// Describe places a rank's point in its job: who it is, whether it owned
// the node's traffic, when it ran, which rprof version counted it, and
// the roofs it was placed under (nil: none), summarized for the merge.
func Describe(p *roofline.Point, id Identity, n Node, roofs *roofline.Roofs, version string) {
	start, end := n.Window()
	p.Rank = &roofline.Rank{Job: id.Job, Launcher: id.Launcher, Rank: id.Rank, Size: id.Size,
		LocalRank: id.LocalRank, LocalSize: id.LocalSize, Node: id.Node, TrafficOwner: n.Owner(),
		Start: start, End: end, Version: version}
	if roofs != nil {
		p.Rank.NodeRoofs = roofline.SummarizeRoofs(roofs)
	}
	for _, why := range n.Shared() {
		p.Flags = append(p.Flags, roofline.Flag{Code: roofline.FlagSharedTraffic, Subject: roofline.SubjectTraffic, Message: why + ": this node's Q includes traffic that is not this job's"})
	}
}
