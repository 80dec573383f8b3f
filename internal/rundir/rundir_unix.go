//go:build unix

package rundir

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// Dir is a checked private directory, held open: every name below is
// resolved relative to it.
type Dir struct {
	f    *os.File
	path string
}

// dirFlags open a directory without following a link in its last
// component, and without blocking should the name be a FIFO.
const dirFlags = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC | unix.O_NONBLOCK

// Open creates the directory path (mode 0700) when it is missing, its
// parent being there, and checks it: owned by this process's effective
// user, mode 0700, not a link. An existing directory that fails is an
// *UnsafeError and is not used.
func Open(path string) (*Dir, error) {
	err := unix.Mkdir(path, uint32(Perm))
	created := err == nil
	if err != nil && !errors.Is(err, unix.EEXIST) {
		return nil, &fs.PathError{Op: "mkdir", Path: path, Err: err}
	}
	fd, err := unix.Open(path, dirFlags, 0)
	if err != nil {
		return nil, refusal(path, err, func(st *unix.Stat_t) error { return unix.Lstat(path, st) })
	}
	return adopt(fd, path, created)
}

// Sub is the directory name inside d, created (mode 0700) when missing and
// checked as Open checks.
func (d *Dir) Sub(name string) (*Dir, error) {
	path := filepath.Join(d.path, name)
	if err := plain(name); err != nil {
		return nil, &fs.PathError{Op: "mkdir", Path: path, Err: err}
	}
	err := unix.Mkdirat(d.fd(), name, uint32(Perm))
	created := err == nil
	if err != nil && !errors.Is(err, unix.EEXIST) {
		return nil, &fs.PathError{Op: "mkdir", Path: path, Err: err}
	}
	fd, err := unix.Openat(d.fd(), name, dirFlags, 0)
	if err != nil {
		return nil, refusal(path, err, func(st *unix.Stat_t) error {
			return unix.Fstatat(d.fd(), name, st, unix.AT_SYMLINK_NOFOLLOW)
		})
	}
	return adopt(fd, path, created)
}

// refusal explains a failed open of a directory: a link, a
// non-directory or another user's directory (which this user may not be
// able to open at all) is an *UnsafeError, anything else the open's own
// error.
func refusal(path string, err error, lstat func(*unix.Stat_t) error) error {
	var st unix.Stat_t
	if !errors.Is(err, unix.ENOENT) && lstat(&st) == nil {
		euid := os.Geteuid()
		switch {
		case st.Mode&unix.S_IFMT == unix.S_IFLNK:
			return &UnsafeError{Path: path, Reason: Symlink}
		case st.Mode&unix.S_IFMT != unix.S_IFDIR:
			return &UnsafeError{Path: path, Reason: NotDir}
		case int(st.Uid) != euid:
			return &UnsafeError{Path: path, Reason: Owner, UID: int(st.Uid), Want: euid}
		}
	}
	return &fs.PathError{Op: "open", Path: path, Err: err}
}

// adopt checks the opened directory fd. A directory this process just
// created gets its mode set, undoing the umask; any other must already be
// private.
func adopt(fd int, path string, created bool) (*Dir, error) {
	f, st, err := owned(fd, path)
	if err != nil {
		return nil, err
	}
	mode := fs.FileMode(st.Mode & 0o7777)
	switch {
	case created && mode != Perm:
		if err := unix.Fchmod(fd, uint32(Perm)); err != nil {
			f.Close()
			return nil, &fs.PathError{Op: "chmod", Path: path, Err: err}
		}
	case mode != Perm:
		f.Close()
		return nil, &UnsafeError{Path: path, Reason: Mode, Mode: mode}
	}
	return &Dir{f: f, path: path}, nil
}

// ownedBy reports whether path is a directory of user uid.
func ownedBy(path string, uid int) bool {
	var st unix.Stat_t
	return unix.Stat(path, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR && int(st.Uid) == uid
}

// Path is the directory's name, for messages.
func (d *Dir) Path() string { return d.path }

// Close lets the directory go.
func (d *Dir) Close() error { return d.f.Close() }

func (d *Dir) fd() int { return int(d.f.Fd()) }

// fileFlags open a file inside without following a link and without
// blocking on a FIFO (which the check then refuses).
const fileFlags = unix.O_NOFOLLOW | unix.O_CLOEXEC | unix.O_NONBLOCK

// OpenFile opens the regular file name inside d with flag (os.O_RDWR,
// os.O_APPEND, ...; O_CREATE creates it with mode 0600 when missing, with
// O_EXCL so that nothing put there meanwhile is opened instead). A link,
// a non-regular file, another user's file or one with other hard links is
// an *UnsafeError.
func (d *Dir) OpenFile(name string, flag int) (*os.File, error) {
	path := filepath.Join(d.path, name)
	if err := plain(name); err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	create := flag&os.O_CREATE != 0
	flag &^= os.O_CREATE | os.O_EXCL | os.O_TRUNC
	for {
		fd, err := unix.Openat(d.fd(), name, flag|fileFlags, 0)
		if create && errors.Is(err, unix.ENOENT) {
			fd, err = unix.Openat(d.fd(), name, flag|fileFlags|unix.O_CREAT|unix.O_EXCL, 0o600)
			if errors.Is(err, unix.EEXIST) {
				continue // made meanwhile: open that one, checked
			}
		}
		if err != nil {
			return nil, d.fileRefusal(name, err)
		}
		return checkFile(fd, path)
	}
}

// Create makes name anew (O_EXCL, mode 0600), removing what was there:
// a file written whole and then renamed into place.
func (d *Dir) Create(name string) (*os.File, error) {
	if err := d.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	path := filepath.Join(d.path, name)
	fd, err := unix.Openat(d.fd(), name, unix.O_WRONLY|fileFlags|unix.O_CREAT|unix.O_EXCL, 0o600)
	if err != nil {
		return nil, d.fileRefusal(name, err)
	}
	return checkFile(fd, path)
}

// fileRefusal explains a failed open of name: a link, a non-regular file
// (a FIFO without a reader, a directory) or another user's file is an
// *UnsafeError, anything else the open's own error.
func (d *Dir) fileRefusal(name string, err error) error {
	path := filepath.Join(d.path, name)
	var st unix.Stat_t
	if !errors.Is(err, unix.ENOENT) && unix.Fstatat(d.fd(), name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
		euid := os.Geteuid()
		switch {
		case st.Mode&unix.S_IFMT == unix.S_IFLNK:
			return &UnsafeError{Path: path, Reason: Symlink}
		case st.Mode&unix.S_IFMT != unix.S_IFREG:
			return &UnsafeError{Path: path, Reason: NotRegular}
		case int(st.Uid) != euid:
			return &UnsafeError{Path: path, Reason: Owner, UID: int(st.Uid), Want: euid}
		}
	}
	return &fs.PathError{Op: "open", Path: path, Err: err}
}

// owned wraps the opened fd and stats it: another user's is an
// *UnsafeError.
func owned(fd int, path string) (*os.File, *unix.Stat_t, error) {
	f := os.NewFile(uintptr(fd), path)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		f.Close()
		return nil, nil, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	if euid := os.Geteuid(); int(st.Uid) != euid {
		f.Close()
		return nil, nil, &UnsafeError{Path: path, Reason: Owner, UID: int(st.Uid), Want: euid}
	}
	return f, &st, nil
}

// checkFile checks an opened file is this user's, regular, with one link.
func checkFile(fd int, path string) (*os.File, error) {
	f, st, err := owned(fd, path)
	if err != nil {
		return nil, err
	}
	var bad *UnsafeError
	switch {
	case st.Mode&unix.S_IFMT != unix.S_IFREG:
		bad = &UnsafeError{Path: path, Reason: NotRegular}
	case st.Nlink != 1:
		bad = &UnsafeError{Path: path, Reason: Links, Links: uint64(st.Nlink)}
	}
	if bad != nil {
		f.Close()
		return nil, bad
	}
	return f, nil
}

// ReadFile reads the regular file name inside d.
func (d *Dir) ReadFile(name string) ([]byte, error) {
	f, err := d.OpenFile(name, os.O_RDONLY)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// Rename renames old to new inside d.
func (d *Dir) Rename(old, new string) error {
	if err := unix.Renameat(d.fd(), old, d.fd(), new); err != nil {
		return &os.LinkError{Op: "rename", Old: filepath.Join(d.path, old), New: filepath.Join(d.path, new), Err: err}
	}
	return nil
}

// Remove removes the file name inside d.
func (d *Dir) Remove(name string) error {
	if err := unix.Unlinkat(d.fd(), name, 0); err != nil {
		return &fs.PathError{Op: "remove", Path: filepath.Join(d.path, name), Err: err}
	}
	return nil
}

// RemoveSub removes the directory name inside d and the files in it.
func (d *Dir) RemoveSub(name string) error {
	sub, err := d.Sub(name)
	if err != nil {
		return err
	}
	names, err := sub.Names()
	for _, n := range names {
		sub.Remove(n)
	}
	sub.Close()
	if err != nil {
		return err
	}
	if err := unix.Unlinkat(d.fd(), name, unix.AT_REMOVEDIR); err != nil {
		return &fs.PathError{Op: "remove", Path: filepath.Join(d.path, name), Err: err}
	}
	return nil
}

// Names lists the entries of d.
func (d *Dir) Names() ([]string, error) {
	// A second descriptor: reading the held one would move its offset.
	fd, err := unix.Openat(d.fd(), ".", dirFlags, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: d.path, Err: err}
	}
	f := os.NewFile(uintptr(fd), d.path)
	defer f.Close()
	return f.Readdirnames(-1)
}

// Ino is the inode number of name inside d (a link's own, not its
// target's).
func (d *Dir) Ino(name string) (uint64, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(d.fd(), name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return 0, &fs.PathError{Op: "stat", Path: filepath.Join(d.path, name), Err: err}
	}
	return uint64(st.Ino), nil
}

// plain refuses names that are not one entry of the directory.
func plain(name string) error {
	if name == "" || name == "." || name == ".." || filepath.Base(name) != name {
		return fmt.Errorf("%q is not a plain name", name)
	}
	return nil
}
