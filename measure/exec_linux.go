package measure

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rprof/rprof/pmu"
	"golang.org/x/sys/unix"
)

// forwarded are the signals passed on to a running target.
var forwarded = []os.Signal{unix.SIGINT, unix.SIGTERM, unix.SIGHUP, unix.SIGQUIT}

func execute(ctx context.Context, spec ExecSpec) (_ Execution, err error) {
	path, err := resolveTarget(spec.Argv[0], spec.Dir)
	if err != nil {
		return Execution{}, err
	}
	self, err := os.Executable()
	if err != nil {
		return Execution{}, fmt.Errorf("execute: find rprof's own binary: %w", err)
	}

	// From here on these signals are rprof's to handle: before the release
	// they stop the target unrun, afterwards they are passed on to it.
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, forwarded...)
	defer signal.Stop(sigs)

	// System-wide counters first: a refusal happens before anything runs.
	var sys *pmu.Counters
	if len(spec.SystemWide) > 0 {
		if sys, err = pmu.OpenSystemWide(spec.SystemWide); err != nil {
			return Execution{}, err
		}
		defer closeInto(&err, sys)
	}

	var streams stdio
	defer streams.closeAll()
	if err := streams.setup(spec); err != nil {
		return Execution{}, err
	}
	// release: the launcher reads one byte from it before exec'ing the
	// target. status: the launcher writes launcherReady once it waits for
	// the release, then the errno of a failed exec; a successful exec
	// closes it, so EOF means the target is running.
	relR, relW, err := os.Pipe()
	if err != nil {
		return Execution{}, fmt.Errorf("execute: %w", err)
	}
	defer relW.Close()
	stR, stW, err := os.Pipe()
	if err != nil {
		relR.Close()
		return Execution{}, fmt.Errorf("execute: %w", err)
	}
	defer stR.Close()

	env := spec.Env
	if env == nil {
		env = os.Environ()
	}
	becomeSubreaper()
	// The target dies with rprof, even by SIGKILL: the kernel sends it
	// SIGKILL when the thread that started it exits. Locking this
	// goroutine to its thread until the target is reaped keeps that
	// thread alive (the runtime ends only threads whose goroutine exits
	// locked).
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	proc, err := os.StartProcess(self, append([]string{self, LauncherArg, path}, spec.Argv...), &os.ProcAttr{
		Dir:   spec.Dir,
		Env:   env,
		Files: []*os.File{streams.child[0], streams.child[1], streams.child[2], relR, stW},
		Sys:   &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL},
	})
	relR.Close()
	stW.Close()
	streams.afterStart()
	if err != nil {
		return Execution{}, fmt.Errorf("execute: start launcher: %w", err)
	}
	launched.Store(proc.Pid, true)
	// Until the target is released, any failure kills the launcher unrun.
	released := false
	defer func() {
		if !released {
			proc.Kill()
			proc.Wait()
			launched.Delete(proc.Pid)
		}
	}()

	// Counters are opened only once the launcher waits, its runtime started:
	// threads it cloned after the group leader was opened would inherit
	// the events, and the kernel may then swap the launcher's counter
	// context with theirs, so that opening the group's members fails with
	// EINVAL.
	var ready [1]byte
	if _, err := io.ReadFull(stR, ready[:]); err != nil || ready[0] != launcherReady {
		return Execution{}, fmt.Errorf("execute: the launcher (%s %s) exited before it was ready", self, LauncherArg)
	}

	var task *pmu.Counters
	if len(spec.Groups) > 0 {
		if task, err = pmu.OpenTask(proc.Pid, spec.Groups, pmu.TaskOptions{EnableOnExec: true, ExcludeKernel: spec.ExcludeKernel}); err != nil {
			return Execution{}, err
		}
		defer closeInto(&err, task)
	}

	beforeRelease()
	if err := ctx.Err(); err != nil {
		return Execution{}, err
	}
	select {
	case s := <-sigs:
		return Execution{}, fmt.Errorf("execute: %s before the target started; it was not run", unix.SignalName(s.(syscall.Signal)))
	default:
	}
	if sys != nil {
		if err := sys.Enable(); err != nil {
			return Execution{}, err
		}
	}
	if spec.BeforeRelease != nil {
		if err := spec.BeforeRelease(); err != nil {
			return Execution{}, err
		}
	}
	start := time.Now()
	if _, err := relW.Write([]byte{1}); err != nil {
		return Execution{}, fmt.Errorf("execute: release target: %w", err)
	}
	relW.Close()
	released = true

	done := make(chan *os.ProcessState, 1)
	var waitErr error
	go func() {
		st, err := proc.Wait()
		waitErr = err
		done <- st
	}()
	var st *os.ProcessState
	for st == nil {
		select {
		case s := <-sigs:
			if !fromTerminal(s) {
				// The target may be gone already; then there is nobody
				// to tell.
				proc.Signal(s)
			}
		case st = <-done:
		}
	}
	wall := time.Since(start)
	if waitErr != nil {
		return Execution{}, fmt.Errorf("execute: wait for target: %w", waitErr)
	}
	outlived := orphans(proc.Pid)
	if spec.AfterReap != nil {
		if err := spec.AfterReap(ctx); err != nil {
			return Execution{}, err
		}
	}
	if sys != nil {
		if err := sys.Disable(); err != nil {
			return Execution{}, err
		}
	}
	// The launcher exits before its exec closes the status pipe only when
	// the exec failed.
	msg, err := io.ReadAll(stR)
	if err != nil {
		return Execution{}, fmt.Errorf("execute: read launcher status: %w", err)
	}
	if len(msg) > 0 {
		return Execution{}, execFailure(spec.Argv[0], path, string(msg))
	}
	if err := streams.wait(); err != nil {
		return Execution{}, err
	}

	x := Execution{Wall: wall, CPU: st.UserTime() + st.SystemTime(), PID: proc.Pid, Outlived: outlived}
	ws := st.Sys().(syscall.WaitStatus)
	switch {
	case ws.Signaled():
		x.Signal = unix.SignalName(ws.Signal())
		x.ExitCode = 128 + int(ws.Signal())
	default:
		x.ExitCode = ws.ExitStatus()
	}
	if task != nil {
		if x.Task, err = task.Read(); err != nil {
			return Execution{}, err
		}
	}
	if sys != nil {
		if x.System, err = sys.Read(); err != nil {
			return Execution{}, err
		}
	}
	return x, nil
}

// fromTerminal reports whether sig is a keyboard signal (Ctrl-C, Ctrl-\)
// that the terminal has sent to the whole foreground process group, the
// target included: forwarding it would deliver it twice, and a target that
// handles the first one gracefully often treats a second as "die now".
// It cannot tell a kill(1) of rprof alone from a keypress; the keypress is
// the common case.
func fromTerminal(sig os.Signal) bool {
	if sig != unix.SIGINT && sig != unix.SIGQUIT {
		return false
	}
	tty, err := os.Open("/dev/tty")
	if err != nil {
		return false // no controlling terminal
	}
	defer tty.Close()
	fg, err := unix.IoctlGetInt(int(tty.Fd()), unix.TIOCGPGRP)
	return err == nil && fg == unix.Getpgrp()
}

// beforeRelease lets tests act while the launcher waits for its go-ahead.
var beforeRelease = func() {}

// closeInto closes c and keeps the first error.
func closeInto(err *error, c *pmu.Counters) {
	if cerr := c.Close(); cerr != nil && *err == nil {
		*err = cerr
	}
}

// resolveTarget finds the executable the launcher will exec, so that a
// missing or non-executable target is reported before anything runs. The
// result is absolute: the launcher runs in spec.Dir.
func resolveTarget(name, dir string) (string, error) {
	p := name
	if strings.Contains(name, "/") && !filepath.IsAbs(name) && dir != "" {
		p = filepath.Join(dir, name)
	}
	path, err := exec.LookPath(p)
	if errors.Is(err, exec.ErrDot) {
		// A relative PATH entry: honoured, as env(1) and shells do.
		err = nil
	}
	if err != nil {
		var ee *exec.Error
		cause := err
		if errors.As(err, &ee) {
			cause = ee.Err
		}
		kind := ErrNotExecutable
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			kind = ErrNotFound
		}
		return "", &LaunchError{Name: name, Kind: kind, Err: cause}
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("execute: %s: %w", name, err)
	}
	return abs, nil
}

// execFailure turns the launcher's report of a failed exec (an errno
// number) into a *LaunchError.
func execFailure(name, path, msg string) error {
	n, err := strconv.Atoi(strings.TrimSpace(msg))
	if err != nil {
		return fmt.Errorf("execute: launcher for %s failed: %q", name, msg)
	}
	errno := syscall.Errno(n)
	kind := ErrNotExecutable
	if errno == syscall.ENOENT || errno == syscall.ENOTDIR {
		kind = ErrNotFound
	}
	return &LaunchError{Name: name, Kind: kind, Err: &fs.PathError{Op: "exec", Path: path, Err: errno}}
}

// stdio hands the target its streams: *os.File as is, other readers and
// writers through pipes copied by goroutines.
type stdio struct {
	child      [3]*os.File
	childEnds  []*os.File // the child's ends of pipes, closed once it started
	parentEnds []*os.File // rprof's ends, closed when the target is reaped
	copiers    sync.WaitGroup
	copyErrMu  sync.Mutex
	copyErr    error
	devNull    *os.File
}

func (s *stdio) setup(spec ExecSpec) error {
	if err := s.input(spec.Stdin); err != nil {
		return err
	}
	if err := s.output(1, spec.Stdout); err != nil {
		return err
	}
	if _, isFile := spec.Stderr.(*os.File); !isFile && spec.Stderr != nil && sameWriter(spec.Stdout, spec.Stderr) {
		// One pipe and one copier, so the writer is never written to
		// concurrently (as os/exec does).
		s.child[2] = s.child[1]
		return nil
	}
	return s.output(2, spec.Stderr)
}

// sameWriter compares writers whose dynamic types may not be comparable.
func sameWriter(a, b io.Writer) (same bool) {
	defer func() {
		if recover() != nil {
			same = false
		}
	}()
	return a == b
}

func (s *stdio) null() (*os.File, error) {
	if s.devNull == nil {
		f, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
		if err != nil {
			return nil, fmt.Errorf("execute: %w", err)
		}
		s.devNull = f
	}
	return s.devNull, nil
}

func (s *stdio) input(r io.Reader) error {
	switch r := r.(type) {
	case nil:
		f, err := s.null()
		s.child[0] = f
		return err
	case *os.File:
		s.child[0] = r
		return nil
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("execute: stdin pipe: %w", err)
	}
	s.child[0] = pr
	s.childEnds = append(s.childEnds, pr)
	s.parentEnds = append(s.parentEnds, pw)
	// Not waited for: a reader that never ends must not hold rprof once
	// the target is gone; closing pw ends the copy.
	go func() {
		io.Copy(pw, r)
		pw.Close()
	}()
	return nil
}

func (s *stdio) output(fd int, w io.Writer) error {
	switch w := w.(type) {
	case nil:
		f, err := s.null()
		s.child[fd] = f
		return err
	case *os.File:
		s.child[fd] = w
		return nil
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("execute: output pipe: %w", err)
	}
	s.child[fd] = pw
	s.childEnds = append(s.childEnds, pw)
	s.parentEnds = append(s.parentEnds, pr)
	s.copiers.Add(1)
	go func() {
		defer s.copiers.Done()
		if _, err := io.Copy(w, pr); err != nil {
			s.copyErrMu.Lock()
			if s.copyErr == nil {
				s.copyErr = fmt.Errorf("execute: copy target output: %w", err)
			}
			s.copyErrMu.Unlock()
		}
	}()
	return nil
}

func (s *stdio) afterStart() {
	for _, f := range s.childEnds {
		f.Close()
	}
	s.childEnds = nil
	if s.devNull != nil {
		s.devNull.Close()
		s.devNull = nil
	}
}

// wait waits for the target's output to be copied: until every holder of
// the pipes (the target and any children it left behind) closed them.
func (s *stdio) wait() error {
	s.copiers.Wait()
	return s.copyErr
}

// closeAll closes whatever is still open, on every path.
func (s *stdio) closeAll() {
	s.afterStart()
	for _, f := range s.parentEnds {
		f.Close()
	}
	s.parentEnds = nil
}

var subreaper sync.Once

// becomeSubreaper makes rprof the child subreaper of its targets' trees:
// a process the target leaves running when it exits is re-parented to
// rprof, not to init, so that orphans can find it.
func becomeSubreaper() {
	subreaper.Do(func() { unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) })
}

// launched are the launchers (targets) execute has started and not yet
// reaped: rprof's own children, not orphans.
var launched sync.Map

// orphans returns the processes the target (pid, just reaped) left
// running: children of rprof that rprof did not start. Those that have
// exited already are reaped and not counted.
func orphans(target int) []int {
	launched.Delete(target)
	self := os.Getpid()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if _, ours := launched.Load(pid); ours {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses.
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		if len(f) < 2 {
			continue
		}
		if ppid, _ := strconv.Atoi(f[1]); ppid != self {
			continue
		}
		if f[0] == "Z" {
			var ws unix.WaitStatus
			unix.Wait4(pid, &ws, unix.WNOHANG, nil)
			continue
		}
		out = append(out, pid)
	}
	return out
}
