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
