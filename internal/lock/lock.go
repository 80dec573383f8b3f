// Package lock keeps rprof's measurements on one machine from running at
// once: `rprof roofs` takes the machine exclusively, and runs share it
// among themselves, because a roofs sweep and a measured target spoil
// each other's figures (docs/roofs.md, "Where the design choices came
// from"). It is an flock(2) on a file in the user's private
// runtime directory (internal/rundir), released by the kernel when the
// process dies: another user cannot open it, so cannot hold it to block
// the measurements, nor lead a write through a link planted in its place.
package lock

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rprof/rprof/internal/kfs"
	"github.com/rprof/rprof/internal/rundir"
	"github.com/rprof/rprof/internal/termtext"
)

// Mode is how a measurement holds the machine.
type Mode int

const (
	// Shared: target runs, which may overlap one another.
	Shared Mode = iota
	// Exclusive: a roofs measurement, alone on the machine.
	Exclusive
)

// fileName is the lock file in the runtime directory.
const fileName = "measure.lock"

// poll is how often a waiter tries again.
const poll = 50 * time.Millisecond

// Request is what Acquire is asked for.
type Request struct {
	Mode Mode
	// What describes this holder to those who wait (e.g. "rprof roofs").
	What string
	// Timeout bounds the wait for other holders: 0 does not wait.
	Timeout time.Duration
	// Waiting, when not nil, is called once, when the lock is found held.
	Waiting func(Holder)
}

// Holder is what a waiter knows of the processes holding the lock.
type Holder struct {
	// What is the exclusive holder's own description, from its note,
	// made safe for a terminal; "" when there is no live one.
	What string
	// PIDs are the processes holding the lock (from /proc/locks), when
	// the system says.
	PIDs []int
	// StalePID is the pid a note names whose process has exited (a
	// holder killed before it could clear its note), or 0.
	StalePID int
}

func (h Holder) String() string {
	s := h.What
	if s == "" {
		s = "another rprof measurement"
		if len(h.PIDs) > 0 {
			s += " (pid " + kfs.FormatList(h.PIDs) + ")"
		}
	}
	if h.StalePID != 0 {
		s += fmt.Sprintf("; the note naming pid %d is stale: that process has exited", h.StalePID)
	}
	return s
}

// TimeoutError: the lock was still held when the request's timeout ran
// out.
type TimeoutError struct {
	Holder  Holder
	Timeout time.Duration
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("the machine is still held by %s after %v", e.Holder, e.Timeout)
}

// Lock is a held lock, or a nested measurement's pass.
type Lock struct {
	f      *os.File
	mode   Mode
	parent *Holder
}

// Nested reports, for a measurement started by one that holds the
// machine (rprof run -- rprof roofs), that it did not take the lock,
// which its ancestor holds: waiting for it would wait for itself.
func (l *Lock) Nested() (Holder, bool) {
	if l == nil || l.parent == nil {
		return Holder{}, false
	}
	return *l.parent, true
}

// Release lets the next measurement go.
func (l *Lock) Release() {
	if l == nil || l.f == nil {
		return
	}
	if l.mode == Exclusive {
		l.f.Truncate(0) // no stale holder for the next waiter to name
	}
	l.f.Close()
}

// Acquire takes the lock in the runtime directory dir (rundir.Default();
// created when missing, refused with a *rundir.UnsafeError when not
// private). While other measurements hold it, it waits until the lock is
// free, the context is done (its error is returned), or the timeout runs
// out (a *TimeoutError; a timeout of 0 does not wait). When every holder
// /proc/locks names is an ancestor of this process, it returns at once a
// Lock that is Nested (where the system names no holders, as off Linux,
// a nested measurement waits like any other).
func Acquire(ctx context.Context, dir string, req Request) (*Lock, error) {
	d, err := rundir.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("lock: %w", err)
	}
	f, err := d.OpenFile(fileName, os.O_RDWR|os.O_CREATE)
	d.Close()
	if err != nil {
		return nil, fmt.Errorf("lock: %w", err)
	}
	start := time.Now()
	told := false
	for {
		err := tryLock(f, req.Mode)
		if err == nil {
			break
		}
		if !errors.Is(err, errBusy) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", f.Name(), err)
		}
		h := holderOf(f)
		if len(h.PIDs) > 0 && allAncestors(h.PIDs) {
			f.Close()
			return &Lock{parent: &h}, nil
		}
		if time.Since(start) >= req.Timeout {
			f.Close()
			return nil, &TimeoutError{Holder: h, Timeout: req.Timeout}
		}
		if !told && req.Waiting != nil {
			req.Waiting(h)
			told = true
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(poll):
		}
	}
	if req.Mode == Exclusive {
		// Say who holds it, for the one who waits. A shared holder
		// leaves the exclusive one's note alone: it may not be alone.
		f.Truncate(0)
		f.WriteAt([]byte(fmt.Sprintf("%d %s\n", os.Getpid(), req.What)), 0)
	}
	return &Lock{f: f, mode: req.Mode}, nil
}

// noteMax bounds the note read back: rprof writes one short line.
const noteMax = 256

// holderOf describes the holders of the lock on f: the processes the
// kernel lists and the exclusive holder's note, when its process lives.
func holderOf(f *os.File) Holder {
	h := Holder{PIDs: lockHolders(f)}
	b := make([]byte, noteMax)
	n, _ := f.ReadAt(b, 0)
	line, _, _ := strings.Cut(string(b[:n]), "\n")
	pidText, what, ok := strings.Cut(line, " ")
	pid, err := strconv.Atoi(pidText)
	switch {
	case !ok || err != nil || pid <= 0:
	case !running(pid) || h.PIDs != nil && !slices.Contains(h.PIDs, pid):
		h.StalePID = pid
	default:
		h.What = fmt.Sprintf("%s (pid %d)", termtext.Clean(what, 80), pid)
	}
	return h
}

var procFS = os.DirFS("/proc")

// allAncestors reports whether every pid is an ancestor of this process.
func allAncestors(pids []int) bool {
	var up []int
	for p := os.Getppid(); p > 1 && len(up) < 4096; {
		up = append(up, p)
		st, err := kfs.ReadProcStat(procFS, p)
		if err != nil {
			break
		}
		p = st.PPID
	}
	for _, p := range pids {
		if !slices.Contains(up, p) {
			return false
		}
	}
	return true
}

// parseLocks lists the pids holding a lock on the file (device major,
// minor, inode) in the text of /proc/locks. Waiters ("->") hold nothing.
// The kernel names the file system's device, which stat(2) may not (a
// btrfs subvolume, overlayfs): where no lock names the device, one on the
// inode alone is taken.
func parseLocks(text string, major, minor uint32, ino uint64) []int {
	dev := fmt.Sprintf("%02x:%02x", major, minor)
	var exact, sameIno []int
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) < 6 || f[1] == "->" {
			continue
		}
		k := strings.LastIndexByte(f[5], ':')
		pid, err := strconv.Atoi(f[4])
		if k < 0 || err != nil || pid <= 0 || f[5][k+1:] != strconv.FormatUint(ino, 10) {
			continue
		}
		d := f[5][:k]
		if d == dev && !slices.Contains(exact, pid) {
			exact = append(exact, pid)
		}
		if !slices.Contains(sameIno, pid) {
			sameIno = append(sameIno, pid)
		}
	}
	if exact != nil {
		return exact
	}
	return sameIno
}

// Notes are what Hold tells of a measurement that goes ahead without the
// lock: Unavailable why the lock could not be taken (its runtime
// directory is not private, say), Nested the ancestor it runs inside.
// Either may be nil.
type Notes struct {
	Unavailable func(error)
	Nested      func(Holder)
}

// Hold takes the lock in dir for a measurement, which goes ahead where
// the lock cannot be taken (said to notes.Unavailable) and inside an
// ancestor that holds it (notes.Nested). It fails only where nothing may
// be measured: the wait was interrupted (ctx's error) or timed out (a
// *TimeoutError).
func Hold(ctx context.Context, dir string, req Request, notes Notes) (release func(), err error) {
	l, err := Acquire(ctx, dir, req)
	var te *TimeoutError
	switch {
	case ctx.Err() != nil:
		l.Release()
		return nil, ctx.Err()
	case errors.As(err, &te):
		return nil, err
	case err != nil:
		if notes.Unavailable != nil {
			notes.Unavailable(err)
		}
		return func() {}, nil
	}
	if h, nested := l.Nested(); nested && notes.Nested != nil {
		notes.Nested(h)
	}
	return l.Release, nil
}
