package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rprof/rprof/internal/kfs"
	"github.com/rprof/rprof/internal/rundir"
)

// poll is how often waits look again: the waits are for other processes'
// start-up and end, milliseconds at least.
const poll = 5 * time.Millisecond

// DefaultPatience is how long an owner whose own program has ended waits
// for local ranks that never registered before it reads the counters.
const DefaultPatience = time.Minute

// Session is one rank's part in its node's election, from Join to Close.
// Its locks are held through open files, so they die with the process:
// an owner killed with SIGKILL frees the election for the next run.
type Session struct {
	id   Identity
	root *rundir.Dir // the lock directory, which holds the node's owners log
	dir  *rundir.Dir // the job's directory in it
	log  string      // the owners log's name
	// Patience bounds the owner's wait for local ranks that never
	// registered (DefaultPatience when 0).
	Patience time.Duration

	active, uncore *os.File
	owner          bool
	uncoreIno      uint64
	logOffset      int64
	self           proc
	shared         []string
	start, end     time.Time
}

// Join registers this rank in dir, a node-local directory private to this
// user (created, mode 0700, if missing; its parent must exist), and takes
// the shared lock that says its program is about to run. A directory that
// cannot be used, or is not private (rundir.UnsafeError), is a
// *LockDirError: the caller can still count W and T, and nobody on the node
// counts Q. A rank of this job on this node that runs as another user
// (a *MixedUsersError) keeps this one out of the election too: each
// user's ranks would elect an owner of their own.
func Join(dir string, id Identity) (*Session, error) {
	if err := otherUsersRank(procFS, os.Getpid(), os.Geteuid()); err != nil {
		return nil, err
	}
	s := &Session{id: id, log: ownersLogName(id.Node)}
	fail := func(err error) (*Session, error) {
		s.Close()
		return nil, &LockDirError{Dir: dir, Err: err}
	}
	var err error
	if s.root, err = rundir.Open(dir); err != nil {
		return fail(err)
	}
	if s.dir, err = s.root.Sub(jobDirName(id)); err != nil {
		return fail(err)
	}
	reg, err := s.dir.OpenFile("rank-"+strconv.Itoa(id.Rank), os.O_CREATE|os.O_WRONLY)
	if err != nil {
		return fail(err)
	}
	reg.Close()
	if s.active, err = s.dir.OpenFile(activeFile, os.O_CREATE|os.O_RDWR); err != nil {
		return fail(err)
	}
	if err := unix.Flock(int(s.active.Fd()), unix.LOCK_SH); err != nil {
		return fail(fmt.Errorf("lock %s: %w", activeFile, err))
	}
	if s.uncore, err = s.dir.OpenFile(uncoreFile, os.O_CREATE|os.O_RDWR); err != nil {
		return fail(err)
	}
	if s.self, err = selfProc(); err != nil {
		return fail(err)
	}
	return s, nil
}

// Elect decides whether this process counts the node's memory-controller
// traffic: the first rank to lock .uncore does. The others wait until the
// owner's counters run (Started) or, if the owner died before that, take
// its place. It returns before the caller opens any counter.
func (s *Session) Elect(ctx context.Context) (bool, error) {
	for {
		err := unix.Flock(int(s.uncore.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		switch {
		case err == nil:
			return true, s.becomeOwner()
		case !errors.Is(err, unix.EWOULDBLOCK):
			return false, fmt.Errorf("lock %s: %w", uncoreFile, err)
		}
		if s.ownerReady() {
			return false, nil
		}
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-time.After(poll):
		}
	}
}

func (s *Session) becomeOwner() error {
	s.owner = true
	var st unix.Stat_t
	if err := unix.Fstat(int(s.uncore.Fd()), &st); err != nil {
		return fmt.Errorf("stat %s: %w", uncoreFile, err)
	}
	s.uncoreIno = st.Ino
	f, err := s.root.OpenFile(s.log, os.O_CREATE|os.O_RDWR|os.O_APPEND)
	if err != nil {
		return fmt.Errorf("owners log: %w", err)
	}
	defer f.Close()
	// One write of a short line to an O_APPEND file is atomic: the log's
	// order is the order owners began.
	if _, err := io.WriteString(f, logEntry{Start: true, Job: s.id.Job, Proc: s.self}.String()); err != nil {
		return fmt.Errorf("owners log: %w", err)
	}
	if s.logOffset, err = f.Seek(0, io.SeekCurrent); err != nil {
		return fmt.Errorf("owners log: %w", err)
	}
	before := make([]byte, s.logOffset)
	if _, err := f.ReadAt(before, 0); err != nil {
		return fmt.Errorf("owners log: %w", err)
	}
	s.shared = append(s.shared, ownersBefore(parseLog(string(before)), s.id.Job, alive)...)
	return nil
}

// ownerReady reports whether the owner's counters run: .ready names a
// live process.
func (s *Session) ownerReady() bool {
	b, err := s.dir.ReadFile(readyFile)
	if err != nil {
		return false
	}
	e := parseLog(string(b))
	return len(e) == 1 && alive(e[0].Proc)
}

// Started is called once the counters count and just before the
// program is released. The owner tells the waiting ranks they may start.
func (s *Session) Started() error {
	s.start = time.Now()
	if !s.owner {
		return nil
	}
	tmp := readyFile + ".tmp"
	f, err := s.dir.Create(tmp)
	if err != nil {
		return fmt.Errorf("mark the counters ready: %w", err)
	}
	_, err = io.WriteString(f, logEntry{Start: true, Job: s.id.Job, Proc: s.self}.String())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = s.dir.Rename(tmp, readyFile)
	}
	if err != nil {
		return fmt.Errorf("mark the counters ready: %w", err)
	}
	return nil
}

// Ended is called once the program was reaped. A rank drops its shared
// lock. The owner then waits, before its counters are read, until every
// local rank registered (LocalSize of them, or Patience passed) and none
// still runs its program: it takes .active exclusively.
func (s *Session) Ended(ctx context.Context) error {
	s.end = time.Now()
	if err := unix.Flock(int(s.active.Fd()), unix.LOCK_UN); err != nil {
		return fmt.Errorf("unlock %s: %w", activeFile, err)
	}
	if !s.owner {
		return nil
	}
	patience := s.Patience
	if patience == 0 {
		patience = DefaultPatience
	}
	deadline := time.Now().Add(patience)
	for {
		n := s.registered()
		if s.id.LocalSize == 0 || n >= s.id.LocalSize {
			break
		}
		if time.Now().After(deadline) {
			s.shared = append(s.shared, fmt.Sprintf("only %d of the %d local ranks of this node started within %v of the owner's end: the traffic of any that start later is not counted", n, s.id.LocalSize, patience))
			break
		}
		if err := sleep(ctx); err != nil {
			return err
		}
	}
	for {
		err := unix.Flock(int(s.active.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, unix.EWOULDBLOCK) {
			return fmt.Errorf("lock %s: %w", activeFile, err)
		}
		if err := sleep(ctx); err != nil {
			return err
		}
	}
	s.end = time.Now()
	return nil
}

func sleep(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(poll):
		return nil
	}
}

// registered counts the ranks that joined.
func (s *Session) registered() int {
	names, _ := s.dir.Names()
	n := 0
	for _, name := range names {
		if strings.HasPrefix(name, "rank-") {
			n++
		}
	}
	return n
}

// Owner reports whether this process counts the node's traffic.
func (s *Session) Owner() bool { return s.owner }

// Window is when this rank's program ran: from its release to its reaping
// (for the owner, to the end of the last local rank's program).
func (s *Session) Window() (start, end time.Time) { return s.start, s.end }

// Shared lists why the owner's count of the node's traffic may include
// other programs' traffic: another job's owner counting at the same
// time, or this job's lock file replaced during the run (then another
// rank of this job may have become an owner too). Empty for an owner
// whose count is the job's alone, and for non-owners.
func (s *Session) Shared() []string {
	if !s.owner {
		return nil
	}
	out := append([]string(nil), s.shared...)
	if b, err := s.root.ReadFile(s.log); err == nil && int64(len(b)) >= s.logOffset {
		out = append(out, ownersDuring(parseLog(string(b[s.logOffset:])), s.id.Job)...)
	}
	if ino, err := s.dir.Ino(uncoreFile); err != nil || ino != s.uncoreIno {
		out = append(out, fmt.Sprintf("the lock file %s was removed or replaced during the run: another rank of this job may have counted this node's memory controllers too", filepath.Join(s.dir.Path(), uncoreFile)))
	}
	return out
}

// Close ends the session. The owner logs its end and, every local rank
// being done, removes the job's directory.
func (s *Session) Close() error {
	if s.owner {
		if f, err := s.root.OpenFile(s.log, os.O_WRONLY|os.O_APPEND); err == nil {
			io.WriteString(f, logEntry{Job: s.id.Job, Proc: s.self}.String())
			f.Close()
		}
		s.root.RemoveSub(jobDirName(s.id))
	}
	for _, f := range []*os.File{s.active, s.uncore} {
		if f != nil {
			f.Close()
		}
	}
	for _, d := range []*rundir.Dir{s.dir, s.root} {
		if d != nil {
			d.Close()
		}
	}
	return nil
}

// selfProc is this process with its start time.
func selfProc() (proc, error) {
	pid := os.Getpid()
	t, err := StartTicks(pid)
	return proc{pid, t}, err
}

// alive reports whether p still runs (the same process, not a reuse of
// its pid).
func alive(p proc) bool {
	t, err := StartTicks(p.PID)
	return err == nil && t == p.Start
}

// StartTicks is a process's start time in clock ticks since boot, field
// 22 of /proc/PID/stat.
func StartTicks(pid int) (uint64, error) {
	st, err := kfs.ReadProcStat(procFS, pid)
	return st.StartTicks, err
}

var procFS = os.DirFS("/proc")

// HydraProxy finds the MPICH hydra proxy among this process's ancestors
// (the nearest hydra_pmi_proxy, else the parent) and returns its pid and
// start time.
func HydraProxy() (int, uint64, error) {
	pid := os.Getppid()
	for p := pid; p > 1; {
		comm, err := os.ReadFile("/proc/" + strconv.Itoa(p) + "/comm")
		if err != nil {
			break
		}
		if strings.TrimSpace(string(comm)) == "hydra_pmi_proxy" {
			pid = p
			break
		}
		if p, err = parentOf(p); err != nil {
			break
		}
	}
	t, err := StartTicks(pid)
	return pid, t, err
}

func parentOf(pid int) (int, error) {
	st, err := kfs.ReadProcStat(procFS, pid)
	return st.PPID, err
}
