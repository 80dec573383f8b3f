package output

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// lockPoll is how often Update tries again for a lock another process holds.
const lockPoll = 5 * time.Millisecond

// Update runs update, which reads path and writes it with Write, holding an
// exclusive lock, so that concurrent read-modify-writes of one file (from
// any number of processes) follow each other and none is lost. The lock
// is flock(2) on the file itself, which Write may replace by a rename: it
// is taken again until it is held on the file path names. A path that does
// not exist yet is locked through its directory. A device, FIFO or socket
// is not locked. ctx ends the wait.
func Update(ctx context.Context, path string, update func() error) error {
	if path == Stdout {
		return update()
	}
	if _, ok := fdOf(path); ok {
		return update()
	}
	if _, err := checkLinks(path); err != nil {
		return &Error{Path: path, Err: err}
	}
	for {
		f, held, err := lockOnce(ctx, path)
		if err != nil {
			return &Error{Path: path, Err: fmt.Errorf("lock: %w", err)}
		}
		if f == nil {
			return update()
		}
		if !held {
			f.Close() // the path names another file now: again
			continue
		}
		err = update()
		f.Close() // releases the lock
		return err
	}
}

// lockOnce locks the file path names, or its directory where it does not
// exist; held says the path still names what was locked. f is nil for
// what is not locked.
func lockOnce(ctx context.Context, path string) (f *os.File, held bool, err error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOCTTY, 0)
	dir := false
	if err == unix.ENOENT {
		dir = true
		fd, err = unix.Open(filepath.Dir(path), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	}
	if err != nil {
		return nil, false, err
	}
	f = os.NewFile(uintptr(fd), path)
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, false, err
	}
	if !dir && !st.Mode().IsRegular() {
		f.Close()
		return nil, false, nil
	}
	for {
		err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			break
		}
		if err != unix.EWOULDBLOCK && err != unix.EINTR {
			f.Close()
			return nil, false, err
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, false, ctx.Err()
		case <-time.After(lockPoll):
		}
	}
	now, err := os.Stat(path)
	switch {
	case dir:
		held = errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
	default:
		held = err == nil && os.SameFile(st, now)
	}
	return f, held, nil
}
