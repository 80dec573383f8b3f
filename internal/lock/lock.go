// Package lock keeps rprof's measurements on one machine from running at
// once: `rprof roofs` takes the machine exclusively, and runs share it
// among themselves, because a roofs sweep and a measured target spoil
// each other's figures (two roofs at once measured DRAM at 11.7 GB/s
// against 25 alone). It is an flock(2) on a file in the runtime
// directory, released by the kernel when the process dies.
package lock

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Mode is how a measurement holds the machine.
type Mode int

const (
	// Shared: target runs, which may overlap one another.
	Shared Mode = iota
	// Exclusive: a roofs measurement, alone on the machine.
	Exclusive
)

// Path is the lock file: in $XDG_RUNTIME_DIR when set, else in the
// temporary directory.
func Path() string {
	dir := os.Getenv("XDG_RUNTIME_DIR")
	if dir == "" {
		dir = os.TempDir()
	}
	return filepath.Join(dir, "rprof-measure.lock")
}

// Lock is a held lock.
type Lock struct {
	f    *os.File
	mode Mode
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

// Acquire takes the lock at path in mode, describing this holder as what
// (e.g. "rprof roofs"). When another measurement holds it, waiting is
// called once with that holder's description and Acquire blocks until the
// lock is free or ctx is done.
func Acquire(ctx context.Context, path string, mode Mode, what string, waiting func(holder string)) (*Lock, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	told := false
	for {
		err := tryLock(f, mode)
		if err == nil {
			break
		}
		if !errors.Is(err, errBusy) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		if !told && waiting != nil {
			waiting(holder(path))
			told = true
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	if mode == Exclusive {
		// Say who holds it, for the one who waits. A shared holder
		// leaves the exclusive one's note alone: it may not be alone.
		f.Truncate(0)
		f.WriteAt([]byte(fmt.Sprintf("%s (pid %d)\n", what, os.Getpid())), 0)
	}
	return &Lock{f: f, mode: mode}, nil
}

// holder is the description the exclusive holder left, or a generic one.
func holder(path string) string {
	b, err := os.ReadFile(path)
	if s := strings.TrimSpace(string(b)); err == nil && s != "" {
		return s
	}
	return "another rprof measurement"
}
