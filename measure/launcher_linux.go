package measure

import (
	"os"
	"strconv"
	"syscall"
)

// Descriptors the parent hands the launcher (see execute).
const (
	releaseFD = 3 // one byte means go; EOF means the parent gave up
	statusFD  = 4 // launcherReady, then the errno of a failed exec

	launcherReady = 'R'
)

// Launch is the launcher's whole life, entered from main when IsLauncher
// (args = os.Args: rprof, LauncherArg, resolved path, target argv...). It
// waits for the parent's go-ahead, then execs the target in place, so the
// target keeps the launcher's PID and the counters the parent attached. It
// never returns: on failure it reports the errno to the parent and exits
// 127 (not found) or 126.
//
// The caller must have locked the main goroutine to the main thread from an
// init function: perf counters attach to a thread, and after execve only
// the exec'ing thread survives, with the PID of the main thread.
func Launch(args []string) {
	syscall.CloseOnExec(releaseFD)
	syscall.CloseOnExec(statusFD)
	if len(args) < 4 {
		os.Exit(125)
	}
	if _, err := syscall.Write(statusFD, []byte{launcherReady}); err != nil {
		os.Exit(125)
	}
	var b [1]byte
	for {
		n, err := syscall.Read(releaseFD, b[:])
		if err == syscall.EINTR {
			continue
		}
		if n != 1 {
			os.Exit(125) // the parent gave up before releasing the target
		}
		break
	}
	err := syscall.Exec(args[2], args[3:], os.Environ())
	errno, _ := err.(syscall.Errno)
	syscall.Write(statusFD, []byte(strconv.Itoa(int(errno))))
	if errno == syscall.ENOENT || errno == syscall.ENOTDIR {
		os.Exit(127)
	}
	os.Exit(126)
}
