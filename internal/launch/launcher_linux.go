package launch

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// Descriptors the parent hands the launcher.
const (
	releaseFD = 3 // one byte means go; EOF means the parent gave up
	statusFD  = 4 // launcherReady, then the errno of a failed exec

	launcherReady = 'R'
)

// launcher is a target held by the re-executed launcher: rprof's own
// binary waiting for the go-ahead to exec the target in place, so that the
// target keeps its PID and the counters opened enable-on-exec.
type launcher struct {
	proc       *os.Process
	name, path string
	// release: the launcher reads one byte from it before exec'ing the
	// target. status: the launcher writes launcherReady once it waits for
	// the release, then the errno of a failed exec; a successful exec
	// closes it, so EOF means the target is running.
	relW, stR *os.File
}

func startLauncher(path string, argv []string, attr *os.ProcAttr) (*launcher, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("launch: find rprof's own binary: %w", err)
	}
	relR, relW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("launch: %w", err)
	}
	stR, stW, err := os.Pipe()
	if err != nil {
		relR.Close()
		relW.Close()
		return nil, fmt.Errorf("launch: %w", err)
	}
	a := *attr
	a.Files = append(append([]*os.File(nil), attr.Files...), relR, stW)
	proc, err := os.StartProcess(self, append([]string{self, Role, path}, argv...), &a)
	relR.Close()
	stW.Close()
	if err != nil {
		relW.Close()
		stR.Close()
		return nil, fmt.Errorf("launch: start launcher: %w", err)
	}
	l := &launcher{proc: proc, name: argv[0], path: path, relW: relW, stR: stR}
	// Hooks attach only once the launcher waits, its runtime started:
	// threads it cloned after a counter group's leader was opened would
	// inherit the events, and the kernel may then swap the launcher's
	// counter context with theirs, so that opening the group's members
	// fails with EINVAL.
	var ready [1]byte
	if _, err := io.ReadFull(stR, ready[:]); err != nil || ready[0] != launcherReady {
		l.abandon()
		l.close()
		return nil, fmt.Errorf("launch: the launcher (%s %s) exited before it was ready", self, Role)
	}
	return l, nil
}

func (l *launcher) process() *os.Process { return l.proc }
func (l *launcher) execed() bool         { return false }

func (l *launcher) release() error {
	if _, err := l.relW.Write([]byte{1}); err != nil {
		return fmt.Errorf("launch: release target: %w", err)
	}
	return l.relW.Close()
}

func (l *launcher) abandon() {
	l.proc.Kill()
	l.proc.Wait()
}

// execError reads the launcher's report: it exits before its exec closes
// the status pipe only when the exec failed.
func (l *launcher) execError() error {
	msg, err := io.ReadAll(l.stR)
	if err != nil {
		return fmt.Errorf("launch: read launcher status: %w", err)
	}
	if len(msg) == 0 {
		return nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(msg)))
	if err != nil {
		return fmt.Errorf("launch: launcher for %s failed: %q", l.name, msg)
	}
	return execFailure(l.name, l.path, syscall.Errno(n))
}

func (l *launcher) close() {
	l.relW.Close()
	l.stR.Close()
}

// Main is the launcher's whole life, for a program's main to call when
// os.Args[1] is Role (args = os.Args: rprof, Role, resolved path, target
// argv...). It waits for the parent's go-ahead, then execs the target in
// place, so the target keeps the launcher's PID and the counters the
// parent attached. It returns only on failure, with the exit status to
// exit with: 127 (not found), 126 (not executable) or 125, after it has
// reported the errno to the parent.
//
// The caller must have locked the main goroutine to the main thread from
// an init function: perf counters attach to a thread, and after execve
// only the exec'ing thread survives, with the PID of the main thread.
func Main(args []string) int {
	syscall.CloseOnExec(releaseFD)
	syscall.CloseOnExec(statusFD)
	if len(args) < 4 {
		return 125
	}
	if _, err := syscall.Write(statusFD, []byte{launcherReady}); err != nil {
		return 125
	}
	var b [1]byte
	for {
		n, err := syscall.Read(releaseFD, b[:])
		if err == syscall.EINTR {
			continue
		}
		if n != 1 {
			return 125 // the parent gave up before releasing the target
		}
		break
	}
	err := syscall.Exec(args[2], args[3:], os.Environ())
	errno, _ := err.(syscall.Errno)
	syscall.Write(statusFD, []byte(strconv.Itoa(int(errno))))
	if errno == syscall.ENOENT || errno == syscall.ENOTDIR {
		return 127
	}
	return 126
}
