package launch

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"
)

// errNoPtrace: this process may not trace its child (seccomp, Yama's
// ptrace_scope 3, or rprof itself traced by a debugger); the launcher
// takes over.
var errNoPtrace = errors.New("ptrace not allowed")

// traced is a target started with PTRACE_TRACEME: the kernel stops it with
// SIGTRAP right after its exec succeeded, before its first instruction, and
// it runs once detached. Ptrace requests must come from the thread that
// started it, so the calling goroutine stays locked to its thread until
// the release or the abandon.
type traced struct {
	proc   *os.Process
	locked bool
}

func startTraced(path string, argv []string, attr *os.ProcAttr) (*traced, error) {
	runtime.LockOSThread()
	a := *attr
	var sys syscall.SysProcAttr
	if attr.Sys != nil {
		sys = *attr.Sys
	}
	sys.Ptrace = true
	a.Sys = &sys
	proc, err := os.StartProcess(path, argv, &a)
	if err != nil {
		runtime.UnlockOSThread()
		var errno syscall.Errno
		if errors.As(err, &errno) {
			if errno == syscall.EPERM || errno == syscall.ENOSYS {
				// Refused ptrace(PTRACE_TRACEME), or an exec that only
				// the launcher can tell apart from it.
				return nil, errNoPtrace
			}
			return nil, execFailure(argv[0], path, errno)
		}
		return nil, fmt.Errorf("launch: start %s: %w", path, err)
	}
	t := &traced{proc: proc, locked: true}
	var ws unix.WaitStatus
	for {
		_, err = unix.Wait4(proc.Pid, &ws, 0, nil)
		if err != unix.EINTR {
			break
		}
	}
	switch {
	case err != nil:
		t.abandon()
		return nil, fmt.Errorf("launch: wait for %s to stop at its exec: %w", path, err)
	case ws.Exited() || ws.Signaled():
		// Gone before its exec finished (killed): nothing to abandon.
		proc.Release()
		t.unlock()
		return nil, fmt.Errorf("launch: %s ended before it started (status %v)", path, ws)
	case !ws.Stopped() || ws.StopSignal() != unix.SIGTRAP:
		t.abandon()
		return nil, fmt.Errorf("launch: %s got %v before it started; it was not run", path, ws.StopSignal())
	}
	// Should rprof die before the release, the kernel kills the target
	// rather than letting it run uncounted (as the launcher exits when its
	// release pipe closes).
	if err := unix.PtraceSetOptions(proc.Pid, unix.PTRACE_O_EXITKILL); err != nil {
		t.abandon()
		return nil, fmt.Errorf("launch: hold %s: %w", path, err)
	}
	return t, nil
}

func (t *traced) process() *os.Process { return t.proc }
func (t *traced) execed() bool         { return true }

// release detaches without a signal: the SIGTRAP of the exec is dropped.
func (t *traced) release() error {
	err := unix.PtraceDetach(t.proc.Pid)
	t.unlock()
	if err != nil {
		return fmt.Errorf("launch: release target: ptrace detach: %w", err)
	}
	return nil
}

// abandon kills the stopped target and reaps it here rather than through
// os.Process.Wait: a traced child's stops are reported to any wait, and
// os.Process takes the first report for the end.
func (t *traced) abandon() {
	t.proc.Kill()
	var ws unix.WaitStatus
	for {
		_, err := unix.Wait4(t.proc.Pid, &ws, 0, nil)
		if err == unix.EINTR || (err == nil && !ws.Exited() && !ws.Signaled()) {
			continue
		}
		break
	}
	t.proc.Release()
	t.unlock()
}

func (t *traced) unlock() {
	if t.locked {
		t.locked = false
		runtime.UnlockOSThread()
	}
}

func (t *traced) execError() error { return nil }
func (t *traced) close()           { t.unlock() }
