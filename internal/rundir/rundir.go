// Package rundir keeps rprof's runtime state (the machine lock, the
// parallel jobs' election files) in a directory only its user can reach:
// $XDG_RUNTIME_DIR/rprof, else /run/rprof for root, else rprof-UID in the
// temporary directory. A shared directory such as /tmp lets another user
// plant links and files where rprof writes; a private one does not, as
// long as rprof checks it is private before every use. Open checks it
// (owned by this user, mode 0700, not a link) on a descriptor held for the
// directory's whole use, and every file inside is reached relative to that
// descriptor without following links, so that nothing renamed or replaced
// after the check can redirect a write.
package rundir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
)

// Perm is the only mode a runtime directory may have.
const Perm fs.FileMode = 0o700

// Path is the runtime directory of the user with effective uid euid, from
// the environment's XDG_RUNTIME_DIR: $XDG_RUNTIME_DIR/rprof when set and
// that directory is the user's, else /run/rprof for root when /run
// exists, else rprof-UID in the temporary directory. An XDG_RUNTIME_DIR of
// another user (kept by su, or sudo -E) is passed over: its owner could
// replace what rprof makes in it. It touches nothing but stats.
func Path(getenv func(string) string, euid int) string {
	if d := getenv("XDG_RUNTIME_DIR"); d != "" && filepath.IsAbs(d) && ownedBy(d, euid) {
		return filepath.Join(d, "rprof")
	}
	if euid == 0 {
		if st, err := os.Stat("/run"); err == nil && st.IsDir() {
			return "/run/rprof"
		}
	}
	return filepath.Join(os.TempDir(), "rprof-"+strconv.Itoa(euid))
}

// Default is this process's runtime directory.
func Default() string { return Path(os.Getenv, os.Geteuid()) }

// Reason is why a directory or file is not rprof's private own.
type Reason int

const (
	// Symlink: the name is a symbolic link.
	Symlink Reason = iota + 1
	// NotDir: the name is not a directory (a file, a FIFO, a socket).
	NotDir
	// Owner: another user owns it.
	Owner
	// Mode: a directory's permissions are not exactly 0700: others may
	// reach it, or its user cannot.
	Mode
	// NotRegular: a file inside is not a regular file.
	NotRegular
	// Links: a file inside has other hard links, which may be anywhere.
	Links
)

// UnsafeError is an existing directory or file rprof refuses to use.
type UnsafeError struct {
	Path   string
	Reason Reason
	// UID is the owner found (Owner), Mode the mode found (Mode), Want
	// the owner rprof runs as.
	UID, Want int
	Mode      fs.FileMode
	// Links is the hard link count found (Links).
	Links uint64
}

func (e *UnsafeError) Error() string {
	var why string
	switch e.Reason {
	case Symlink:
		why = "is a symbolic link"
	case NotDir:
		why = "is not a directory"
	case Owner:
		why = fmt.Sprintf("belongs to uid %d, not to uid %d that rprof runs as", e.UID, e.Want)
	case Mode:
		why = fmt.Sprintf("has mode %04o, not %04o", uint32(e.Mode.Perm()), uint32(Perm))
	case NotRegular:
		why = "is not a regular file"
	case Links:
		why = fmt.Sprintf("has %d hard links", e.Links)
	}
	return fmt.Sprintf("%s %s: not private, so rprof does not use it", e.Path, why)
}

// ErrUnsafe matches every *UnsafeError.
var ErrUnsafe = errors.New("not private")

func (e *UnsafeError) Is(target error) bool { return target == ErrUnsafe }
