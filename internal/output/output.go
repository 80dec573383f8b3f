// Package output writes rprof's output files, one way for every command,
// and as a shell's `>` would, so that a finished measurement is never lost
// and no file is written that `>` would not write:
//
//   - A path is opened by the kernel, which follows symbolic links (and
//     applies fs.protected_symlinks, protected_regular and protected_fifos
//     where set). Whatever those sysctls say, another user's symbolic link,
//     regular file or FIFO in a sticky world-writable directory (/tmp) is
//     refused, as the protections would refuse it, and a dangling link is
//     refused rather than its target created.
//   - Writability is the kernel's answer to opening the file for writing
//     (as for `>`: root writes a 0444 file, other users are refused).
//   - A regular file is replaced atomically where that is safe: a temporary
//     file in its directory, renamed over it once whole, keeping the mode
//     of the file it replaces (and, as root, its owner) or taking the
//     umask's for a new one.
//   - It is written in place (truncated, then written, as `>` does) where a
//     rename would change more than the content: a file reached through a
//     symbolic link, with hard links (nlink > 1, outside sticky
//     world-writable directories, where a planted hard link would redirect
//     the write) or with set-user-ID or set-group-ID bits; and where a
//     rename is impossible: a bind-mounted file (EBUSY), another file
//     system (EXDEV), a directory that is not writable although the file
//     is. An interrupted in-place write leaves a partial file, as `>` does.
//   - A character device, FIFO or socket is written straight (renaming
//     over /dev/null or a FIFO would replace it); a FIFO without a reader
//     is waited for until the context ends. "-" is standard output, and
//     /dev/stdout, /dev/fd/N and /proc/self/fd/N the open descriptors.
//
// Check says before any measuring whether a path can be written. Distinct
// refuses an output that names an input; Update serialises the
// read-modify-write of one file across processes. The package never
// creates directories.
package output

import (
	"context"
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
	"time"

	"golang.org/x/sys/unix"
)

// Stdout is the path that names standard output.
const Stdout = "-"

var (
	// ErrNotWritable is wrapped by Check's errors: the path cannot be
	// written.
	ErrNotWritable = errors.New("cannot be written")
	// ErrForeign is wrapped when a path leads through another user's
	// symbolic link, or to another user's file or FIFO, in a sticky
	// world-writable directory.
	ErrForeign = errors.New("belongs to another user in a shared sticky directory")
	// ErrDanglingLink is wrapped when the path is a symbolic link to
	// nothing: its target is not created.
	ErrDanglingLink = errors.New("is a symbolic link to a file that does not exist")
)

// Error says which output failed and why.
type Error struct {
	Path string
	Err  error
}

func (e *Error) Error() string { return "output " + e.Path + ": " + e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// fifoPoll is how often Write looks for a FIFO's reader.
const fifoPoll = 50 * time.Millisecond

// Check returns nil when path can be written: "-", an open descriptor's
// name, a device, FIFO or socket that can be opened for writing, an
// existing file that can be opened for writing, or a new file in an
// existing directory where a file can be created. It probes the directory
// by creating and removing a small file, which also catches read-only
// mounts and full file systems (where permission bits say nothing, as for
// root). A FIFO without a reader passes: Write waits for one.
func Check(path string) error {
	if path == Stdout {
		return nil
	}
	if path == "" {
		return &Error{Path: `""`, Err: fmt.Errorf("%w: empty path", ErrNotWritable)}
	}
	if err := check(path); err != nil {
		return &Error{Path: path, Err: fmt.Errorf("%w: %w", ErrNotWritable, err)}
	}
	return nil
}

func check(path string) error {
	if fd, ok := fdOf(path); ok {
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != nil {
			return fmt.Errorf("descriptor %d is not open", fd)
		}
		return nil
	}
	resolved, err := checkLinks(path)
	if err != nil {
		return err
	}
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() && !st.IsDir() {
		// Opening a device or FIFO may do something (a FIFO's waiting
		// reader would see an empty document): ask without opening.
		if err := checkOwner(resolved, st); err != nil {
			return err
		}
		return unix.Access(path, unix.W_OK)
	}
	f, st, _, err := open(path)
	switch {
	case errors.Is(err, errNoReader), errors.Is(err, errSocket):
		// Replaced since the Stat: as there.
		return unix.Access(path, unix.W_OK)
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		// probeDir says which: no directory, or not a directory.
		return probeDir(filepath.Dir(path), filepath.Base(path), true)
	case err != nil:
		return err
	}
	defer f.Close()
	if err := checkOwner(resolved, st); err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return nil
	}
	// The file opens for writing, so a directory refusing the temporary
	// file only means writing in place; a full file system fails both.
	return probeDir(filepath.Dir(path), filepath.Base(path), false)
}

// probeDir creates, fills one block of and removes a file in dir. With
// strict false only a full file system or quota is an error.
func probeDir(dir, base string, strict bool) error {
	if st, err := os.Stat(dir); err != nil {
		return fmt.Errorf("directory %s does not exist", dir)
	} else if !st.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	f, err := createTemp(dir, base, ".probe", 0o600)
	if err != nil {
		if strict {
			return unwrapPath(err)
		}
		return nil
	}
	defer os.Remove(f.Name())
	// One block: creating an empty file succeeds on a full file system.
	_, werr := f.Write(make([]byte, 4096))
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil && (strict || errors.Is(werr, syscall.ENOSPC) || errors.Is(werr, syscall.EDQUOT)) {
		return unwrapPath(werr)
	}
	return nil
}

// Write writes path with write: to stdout for "-", to the descriptor for
// its names, straight for a device, FIFO or socket, else to a regular file
// as the package comment says. ctx ends a wait for a FIFO's reader.
func Write(ctx context.Context, path string, stdout io.Writer, write func(io.Writer) error) error {
	if path == Stdout {
		if stdout == nil {
			return &Error{Path: path, Err: errors.New("no standard output")}
		}
		if err := write(stdout); err != nil {
			return &Error{Path: "stdout", Err: err}
		}
		return nil
	}
	var err error
	if fd, ok := fdOf(path); ok {
		err = writeFD(path, fd, write)
	} else {
		err = writePath(ctx, path, write)
	}
	if err != nil {
		return &Error{Path: path, Err: err}
	}
	return nil
}

func writePath(ctx context.Context, path string, write func(io.Writer) error) error {
	resolved, err := checkLinks(path)
	if err != nil {
		return err
	}
	f, st, linked, err := open(path)
	if errors.Is(err, errNoReader) {
		// Whose FIFO it is matters before waiting for its reader.
		if st, serr := os.Stat(path); serr == nil {
			if err := checkOwner(resolved, st); err != nil {
				return err
			}
		}
	}
	for errors.Is(err, errNoReader) {
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for the FIFO's reader: %w", ctx.Err())
		case <-time.After(fifoPoll):
		}
		f, st, linked, err = open(path)
	}
	switch {
	case errors.Is(err, errSocket):
		c, err := net.Dial("unix", path)
		if err != nil {
			return err
		}
		return writeClose(c, write)
	case errors.Is(err, fs.ErrNotExist):
		return create(path, write)
	case err != nil:
		return err
	}
	defer f.Close()
	if err := checkOwner(resolved, st); err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return write(f)
	}
	if linked || keepsInode(resolved, st) {
		return inPlace(f, write)
	}
	return replace(path, f, st, write)
}

var (
	errNoReader = errors.New("FIFO has no reader")
	errSocket   = errors.New("is a socket")
)

// open opens an existing path for writing as `>` would, without creating
// or truncating it and without blocking: linked says a symbolic link was
// followed. It returns errNoReader for a FIFO without a reader, errSocket
// for a socket, ErrDanglingLink for a link to nothing and an error wrapping
// fs.ErrNotExist when the path does not exist.
func open(path string) (f *os.File, st fs.FileInfo, linked bool, err error) {
	const flags = unix.O_WRONLY | unix.O_NONBLOCK | unix.O_CLOEXEC | unix.O_NOCTTY
	fd, err := unix.Open(path, flags|unix.O_NOFOLLOW, 0)
	if err == unix.ELOOP {
		// The last component is a link, checkLinks's vetted: follow it.
		linked = true
		fd, err = unix.Open(path, flags, 0)
		if err == unix.ENOENT {
			return nil, nil, true, ErrDanglingLink
		}
	}
	if err == unix.ENXIO || err == unix.EOPNOTSUPP {
		if st, serr := os.Stat(path); serr == nil && st.Mode()&fs.ModeSocket != 0 {
			return nil, nil, linked, errSocket
		}
		if err == unix.ENXIO {
			return nil, nil, linked, errNoReader
		}
	}
	if err != nil {
		return nil, nil, linked, err
	}
	// Writes block as for any file once open (a FIFO's reader is there).
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFL, 0); err != nil {
		unix.Close(fd)
		return nil, nil, linked, err
	}
	f = os.NewFile(uintptr(fd), path)
	if st, err = f.Stat(); err != nil {
		f.Close()
		return nil, nil, linked, err
	}
	return f, st, linked, nil
}

// keepsInode says whether replacing st would change more than its content:
// its hard links would split or its set-ID bits go. In a sticky
// world-writable directory hard links are split all the same: another user
// may have planted one to a file of ours elsewhere.
func keepsInode(resolved string, st fs.FileInfo) bool {
	if st.Mode()&(fs.ModeSetuid|fs.ModeSetgid) != 0 {
		return true
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok || uint64(sys.Nlink) <= 1 {
		return false
	}
	dir, err := os.Stat(filepath.Dir(resolved))
	return err != nil || !shared(dir)
}

// inPlace truncates f and writes it, as `>` does.
func inPlace(f *os.File, write func(io.Writer) error) error {
	if err := f.Truncate(0); err != nil {
		return err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	if err := write(f); err != nil {
		return err
	}
	return f.Close()
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
		return err
	}
	return writeClose(os.NewFile(uintptr(dup), path), write)
}

// writeClose writes w and closes it, returning the first error.
func writeClose(w io.WriteCloser, write func(io.Writer) error) error {
	werr := write(w)
	if cerr := w.Close(); werr == nil {
		werr = cerr
	}
	return werr
}

// create writes a new file at path atomically: whole or not at all. A new
// file gets 0666 less the umask, applied by the kernel at creation, like
// any file a shell redirection creates.
func create(path string, write func(io.Writer) error) error {
	tmp, err := writeTemp(path, 0o666, write)
	if err != nil {
		return err
	}
	defer tmp.Close()
	defer os.Remove(tmp.Name()) // no-op after the rename
	return unwrapPath(os.Rename(tmp.Name(), path))
}

// replace writes the regular file open as f atomically, keeping its
// permission bits (and, as root, its owner). Where the rename cannot be
// made (no temporary file in the directory, a bind-mounted file, another
// file system), it writes f in place instead, as `>` would.
func replace(path string, f *os.File, old fs.FileInfo, write func(io.Writer) error) error {
	perm := old.Mode().Perm()
	tmp, err := writeTemp(path, perm, write)
	if errors.Is(err, errNoTemp) {
		return inPlace(f, write)
	}
	if err != nil {
		return err
	}
	defer tmp.Close()
	defer os.Remove(tmp.Name()) // no-op after the rename
	// The umask applied at creation; the replaced file's mode wins.
	if err := tmp.Chmod(perm); err != nil {
		return err
	}
	if sys, ok := old.Sys().(*syscall.Stat_t); ok && os.Geteuid() == 0 {
		// Best effort: root replacing another user's file keeps it
		// theirs.
		_ = tmp.Chown(int(sys.Uid), int(sys.Gid))
	}
	if err := os.Rename(tmp.Name(), path); err == nil {
		return nil
	}
	// The whole document is in tmp: copy it, so write runs once.
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return err
	}
	return inPlace(f, func(w io.Writer) error {
		_, err := io.Copy(w, tmp)
		return err
	})
}

// errNoTemp wraps the failure to create a temporary file next to a path.
var errNoTemp = errors.New("no temporary file")

// writeTemp writes a temporary file next to path with perm (less the
// umask), synced and open for reading from its start.
func writeTemp(path string, perm fs.FileMode, write func(io.Writer) error) (*os.File, error) {
	f, err := createTemp(filepath.Dir(path), filepath.Base(path), ".tmp", perm)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errNoTemp, unwrapPath(err))
	}
	err = write(f)
	if err == nil {
		err = f.Sync()
	}
	if err == nil {
		_, err = f.Seek(0, io.SeekStart)
	}
	if err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	return f, nil
}

// createTemp creates a new file ".BASE.SUFFIXxxxxxxxx" in dir with perm
// (less the umask).
func createTemp(dir, base, suffix string, perm fs.FileMode) (*os.File, error) {
	for range 100 {
		var b [6]byte
		rand.Read(b[:])
		name := filepath.Join(dir, "."+base+suffix+hex.EncodeToString(b[:]))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW, perm)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return f, err
	}
	return nil, fmt.Errorf("create a temporary file in %s: too many collisions", dir)
}

// unwrapPath drops the *PathError's or *LinkError's own paths, which name
// the temporary file, keeping the operation's cause.
func unwrapPath(err error) error {
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		return pe.Err
	case errors.As(err, &le):
		return le.Err
	}
	return err
}
