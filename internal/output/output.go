// Package output writes rprof's output files, one way for every command:
// a regular file is replaced atomically (a temporary file in its directory,
// renamed over it once whole), keeping the mode of the file it replaces or
// taking the umask's for a new one; a character device, FIFO or socket is
// written straight (renaming over /dev/null or a FIFO would replace it);
// "-" is standard output. Check says before any measuring whether a path
// can be written, so a measurement is never lost to an unwritable output.
// The package never creates directories.
package output

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Stdout is the path that names standard output.
const Stdout = "-"

// ErrNotWritable is wrapped by Check's errors: the path cannot be written.
var ErrNotWritable = errors.New("cannot be written")

// Error says which output failed and why.
type Error struct {
	Path string
	Err  error
}

func (e *Error) Error() string { return "output " + e.Path + ": " + e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Check returns nil when path can be written: "-", a writable device, FIFO
// or socket, or a file in an existing directory where a file can be
// created. It probes the directory by creating and removing a small file,
// which also catches read-only mounts and full file systems (where
// permission bits say nothing, as for root).
func Check(path string) error {
	if path == Stdout {
		return nil
	}
	if path == "" {
		return &Error{Path: `""`, Err: fmt.Errorf("%w: empty path", ErrNotWritable)}
	}
	if fd, ok := fdOf(path); ok {
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != nil {
			return &Error{Path: path, Err: fmt.Errorf("%w: descriptor %d is not open", ErrNotWritable, fd)}
		}
		return nil
	}
	target := resolve(path)
	st, err := os.Stat(target)
	switch {
	case err == nil && st.IsDir():
		return &Error{Path: path, Err: fmt.Errorf("%w: is a directory", ErrNotWritable)}
	case err == nil && !st.Mode().IsRegular():
		if err := unix.Access(target, unix.W_OK); err != nil {
			return &Error{Path: path, Err: fmt.Errorf("%w: %v", ErrNotWritable, err)}
		}
		return nil
	case err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR):
		return &Error{Path: path, Err: fmt.Errorf("%w: %v", ErrNotWritable, unwrapPath(err))}
	}
	dir := filepath.Dir(target)
	if st, err := os.Stat(dir); err != nil {
		return &Error{Path: path, Err: fmt.Errorf("%w: directory %s does not exist", ErrNotWritable, dir)}
	} else if !st.IsDir() {
		return &Error{Path: path, Err: fmt.Errorf("%w: %s is not a directory", ErrNotWritable, dir)}
	}
	f, err := createTemp(dir, filepath.Base(target), ".probe", 0o600)
	if err != nil {
		return &Error{Path: path, Err: fmt.Errorf("%w: %v", ErrNotWritable, unwrapPath(err))}
	}
	defer os.Remove(f.Name())
	// One block: creating an empty file succeeds on a full file system.
	_, werr := f.Write(make([]byte, 4096))
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return &Error{Path: path, Err: fmt.Errorf("%w: %v", ErrNotWritable, unwrapPath(werr))}
	}
	return nil
}

// Write writes path with write: to stdout for "-", straight for a device,
// FIFO or socket, else atomically (the file appears whole or not at all;
// an error or interruption leaves the old file, if any, untouched).
func Write(path string, stdout io.Writer, write func(io.Writer) error) error {
	if path == Stdout {
		if stdout == nil {
			return &Error{Path: path, Err: errors.New("no standard output")}
		}
		if err := write(stdout); err != nil {
			return &Error{Path: "stdout", Err: err}
		}
		return nil
	}
	if fd, ok := fdOf(path); ok {
		return writeFD(path, fd, write)
	}
	target := resolve(path)
	st, err := os.Stat(target)
	if err == nil && !st.Mode().IsRegular() && !st.IsDir() {
		return writeStraight(path, target, st, write)
	}
	if err := writeAtomic(target, st, write); err != nil {
		return &Error{Path: path, Err: err}
	}
	return nil
}

// resolve follows symbolic links, so that renaming replaces the file a
// link points to, not the link. A path that does not resolve (it does not
// exist yet) is used as given.
func resolve(path string) string {
	if t, err := filepath.EvalSymlinks(path); err == nil {
		return t
	}
	return path
}

// fdOf recognises the names of open descriptors (/dev/stdout, /dev/fd/N,
// /proc/self/fd/N), which may stand for pipes or sockets that no path
// opens.
func fdOf(path string) (int, bool) {
	switch path {
	case "/dev/stdin":
		return 0, true
	case "/dev/stdout":
		return 1, true
	case "/dev/stderr":
		return 2, true
	}
	for _, dir := range []string{"/dev/fd/", "/proc/self/fd/"} {
		if rest, ok := strings.CutPrefix(path, dir); ok {
			if n, err := strconv.Atoi(rest); err == nil && n >= 0 {
				return n, true
			}
		}
	}
	return 0, false
}

func writeFD(path string, fd int, write func(io.Writer) error) error {
	dup, err := unix.Dup(fd)
	if err != nil {
		return &Error{Path: path, Err: err}
	}
	f := os.NewFile(uintptr(dup), path)
	werr := write(f)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return &Error{Path: path, Err: werr}
	}
	return nil
}

// writeStraight writes a device, FIFO or socket in place.
func writeStraight(path, target string, st fs.FileInfo, write func(io.Writer) error) error {
	var w io.WriteCloser
	var err error
	if st.Mode()&fs.ModeSocket != 0 {
		w, err = net.Dial("unix", target)
	} else {
		w, err = os.OpenFile(target, os.O_WRONLY, 0)
	}
	if err != nil {
		return &Error{Path: path, Err: unwrapPath(err)}
	}
	werr := write(w)
	if cerr := w.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return &Error{Path: path, Err: werr}
	}
	return nil
}

// writeAtomic writes a temporary file next to target and renames it over
// target. old is target's FileInfo when it exists (nil otherwise): its
// permission bits, and as root its owner, carry over.
func writeAtomic(target string, old fs.FileInfo, write func(io.Writer) error) error {
	dir := filepath.Dir(target)
	// A new file gets 0666 less the umask, applied by the kernel at
	// creation, like any file a shell redirection creates.
	perm := fs.FileMode(0o666)
	if old != nil {
		perm = old.Mode().Perm()
	}
	f, err := createTemp(dir, filepath.Base(target), ".tmp", perm)
	if err != nil {
		return unwrapPath(err)
	}
	tmp := f.Name()
	defer os.Remove(tmp) // no-op after the rename
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if old != nil {
		// The umask applied at creation; the replaced file's mode wins.
		if err := os.Chmod(tmp, perm); err != nil {
			return unwrapPath(err)
		}
		if sys, ok := old.Sys().(*syscall.Stat_t); ok && os.Geteuid() == 0 {
			// Best effort: root replacing another user's file keeps
			// it theirs.
			_ = os.Lchown(tmp, int(sys.Uid), int(sys.Gid))
		}
	}
	if err := os.Rename(tmp, target); err != nil {
		return unwrapPath(err)
	}
	return nil
}

// createTemp creates a new file ".BASE.SUFFIXxxxxxxxx" in dir with perm
// (less the umask).
func createTemp(dir, base, suffix string, perm fs.FileMode) (*os.File, error) {
	for range 100 {
		var b [6]byte
		rand.Read(b[:])
		name := filepath.Join(dir, "."+base+suffix+hex.EncodeToString(b[:]))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, perm)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return f, err
	}
	return nil, fmt.Errorf("create a temporary file in %s: too many collisions", dir)
}

// unwrapPath drops the *PathError's own path, which names the temporary
// file, keeping its operation's cause.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
