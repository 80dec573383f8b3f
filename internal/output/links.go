package output

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// maxLinks is the most symbolic links one path may pass through, as the
// kernel's limit (40) before ELOOP.
const maxLinks = 40

// checkLinks walks path as the kernel would, refusing a symbolic link that
// fs.protected_symlinks would refuse to follow whatever the sysctl says:
// one in a sticky world-writable directory owned by neither this user nor
// the directory's owner. It returns the path with every link resolved, as
// far as it exists; the kernel still does the following when the file is
// opened.
func checkLinks(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	todo := strings.Split(abs, "/")
	cur := "/"
	for links := 0; len(todo) > 0; {
		c := todo[0]
		todo = todo[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, c)
		st, err := os.Lstat(next)
		if err != nil {
			// Missing or unreadable: opening it says what is wrong.
			return filepath.Join(append([]string{next}, todo...)...), nil
		}
		if st.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		if links++; links > maxLinks {
			return "", fmt.Errorf("too many levels of symbolic links")
		}
		if dir, err := os.Stat(cur); err == nil && shared(dir) && foreign(st, dir) {
			return "", fmt.Errorf("%s %w (the link's owner is uid %d; the kernel's fs.protected_symlinks refuses such links)", next, ErrForeign, uid(st))
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", err
		}
		if filepath.IsAbs(target) {
			cur = "/"
		}
		todo = append(strings.Split(target, "/"), todo...)
	}
	return cur, nil
}

// checkOwner refuses a regular file or FIFO that fs.protected_regular or
// protected_fifos would refuse to open with O_CREAT, whatever the sysctls
// say: one in a sticky world-writable directory owned by neither this user
// nor the directory's owner. resolved is its path with links resolved.
func checkOwner(resolved string, st fs.FileInfo) error {
	if !st.Mode().IsRegular() && st.Mode()&fs.ModeNamedPipe == 0 {
		return nil
	}
	dir, err := os.Stat(filepath.Dir(resolved))
	if err != nil || !shared(dir) || !foreign(st, dir) {
		return nil
	}
	return fmt.Errorf("%s %w (its owner is uid %d; the kernel's fs.protected_regular refuses such files)", resolved, ErrForeign, uid(st))
}

// shared says whether dir is sticky and world-writable, as /tmp is.
func shared(dir fs.FileInfo) bool {
	return dir.IsDir() && dir.Mode()&fs.ModeSticky != 0 && dir.Mode().Perm()&0o002 != 0
}

// foreign says whether st is owned by neither this process's user nor the
// owner of dir.
func foreign(st, dir fs.FileInfo) bool {
	owner := uid(st)
	return owner != os.Geteuid() && owner != uid(dir)
}

func uid(st fs.FileInfo) int {
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		return int(sys.Uid)
	}
	return -1
}
