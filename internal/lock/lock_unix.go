//go:build unix

package lock

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

var errBusy = errors.New("held by another process")

func tryLock(f *os.File, mode Mode) error {
	how := unix.LOCK_SH
	if mode == Exclusive {
		how = unix.LOCK_EX
	}
	for {
		err := unix.Flock(int(f.Fd()), how|unix.LOCK_NB)
		switch err {
		case nil:
			return nil
		case unix.EINTR:
			continue
		case unix.EWOULDBLOCK:
			return errBusy
		}
		return err
	}
}

// running reports whether pid is a process (kill(2) with no signal
// reaches it, or would but for permission).
func running(pid int) bool {
	err := unix.Kill(pid, 0)
	return err == nil || err == unix.EPERM
}

// lockHolders are the processes /proc/locks says hold a lock on f, or nil
// where the system does not say.
func lockHolders(f *os.File) []int {
	var st unix.Stat_t
	if unix.Fstat(int(f.Fd()), &st) != nil {
		return nil
	}
	b, err := os.ReadFile("/proc/locks")
	if err != nil {
		return nil
	}
	dev := uint64(st.Dev)
	return parseLocks(string(b), unix.Major(dev), unix.Minor(dev), uint64(st.Ino))
}
