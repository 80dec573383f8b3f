package launch

import (
	"context"
	"errors"
	"fmt"
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

	"golang.org/x/sys/unix"

	"github.com/rprof/rprof/internal/kfs"
)

// forwarded are the signals passed on to a running target.
var forwarded = []os.Signal{unix.SIGINT, unix.SIGTERM, unix.SIGHUP, unix.SIGQUIT}

// held is a started target that has not run yet, whichever way it was
// started.
type held interface {
	process() *os.Process
	execed() bool
	// release lets the target run.
	release() error
	// abandon kills and reaps a target that was never released.
	abandon()
	// execError is called after the reap: the error of an exec that failed
	// after the release, or nil.
	execError() error
	// close frees what the start held, on every path.
	close()
}

func run(ctx context.Context, spec Spec) (_ Result, err error) {
	path, err := resolveTarget(spec.Argv[0], spec.Dir)
	if err != nil {
		return Result{}, err
	}

	// From here on these signals are rprof's to handle: before the release
	// they stop the target unrun, afterwards they are passed on to it.
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, forwarded...)
	defer signal.Stop(sigs)

	var streams stdio
	defer streams.closeAll()
	if err := streams.setup(spec); err != nil {
		return Result{}, err
	}
	env := spec.Env
	if env == nil {
		env = os.Environ()
	}
	// The target dies with rprof, even by SIGKILL: the kernel sends it
	// SIGKILL when the thread that started it exits. Locking this
	// goroutine to its thread until the target is reaped keeps that
	// thread alive (the runtime ends only threads whose goroutine exits
	// locked).
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	becomeSubreaper()
	sys := &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	// What the target starts dies with it and with rprof (group_linux.go).
	var g group
	g.prepare(sys)
	attr := &os.ProcAttr{Dir: spec.Dir, Env: env, Files: streams.child[:], Sys: sys}

	h, err := start(path, spec, attr)
	streams.afterStart()
	if err != nil {
		g.end(nil)
		return Result{}, err
	}
	defer h.close()
	proc := h.process()
	launched.Store(proc.Pid, true)
	defer launched.Delete(proc.Pid)
	g.started(proc.Pid)
	groupEnded := false
	defer func() {
		if !groupEnded {
			g.end(nil)
		}
	}()
	// Until the target is released, any failure kills it unrun; the Reap
	// of every attached hook runs once it is gone, on every path.
	hooks := &hookSet{hooks: spec.Hooks, pid: proc.Pid}
	released := false
	defer func() {
		if !released {
			h.abandon()
		}
		if rerr := hooks.reap(); rerr != nil && err == nil {
			err = rerr
		}
	}()
	if err := hooks.attach(Held{PID: proc.Pid, Path: path, Execed: h.execed()}); err != nil {
		return Result{}, err
	}

	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	select {
	case s := <-sigs:
		return Result{}, fmt.Errorf("launch: %s before the target started; it was not run", unix.SignalName(s.(syscall.Signal)))
	default:
	}
	start := time.Now()
	if err := h.release(); err != nil {
		return Result{}, err
	}
	released = true

	st, waitErr := waitForwarding(proc, sigs, &g)
	wall := time.Since(start)
	if waitErr != nil {
		return Result{}, fmt.Errorf("launch: wait for target: %w", waitErr)
	}
	if err := hooks.reap(); err != nil {
		return Result{}, err
	}
	// After the hooks stopped counting: the scan is rprof's work.
	outlived := orphans(proc.Pid)
	g.end(outlived)
	groupEnded = true
	g.passOnInterrupt(st.Sys().(syscall.WaitStatus))
	if err := h.execError(); err != nil {
		return Result{}, err
	}
	if err := streams.wait(); err != nil {
		return Result{}, err
	}

	r := Result{Wall: wall, CPU: st.UserTime() + st.SystemTime(), PID: proc.Pid, Traced: h.execed(), Outlived: outlived}
	if ws := st.Sys().(syscall.WaitStatus); ws.Signaled() {
		r.Signal = unix.SignalName(ws.Signal())
		r.ExitCode = 128 + int(ws.Signal())
	} else {
		r.ExitCode = ws.ExitStatus()
	}
	return r, nil
}

// start holds the target: traced where ptrace is allowed and the target
// gains no privileges by its exec, else through the launcher.
func start(path string, spec Spec, attr *os.ProcAttr) (held, error) {
	if !spec.Reexec && !privileged(path) {
		h, err := startTraced(path, spec.Argv, attr)
		if !errors.Is(err, errNoPtrace) {
			return h, err
		}
	}
	return startLauncher(path, spec.Argv, attr)
}

// hookSet attaches hooks in order and reaps those attached, once, in
// reverse order.
type hookSet struct {
	hooks    []Hook
	pid      int
	attached int
	reaped   bool
}

func (hs *hookSet) attach(at Held) error {
	for _, hk := range hs.hooks {
		if hk.Attach != nil {
			if err := hk.Attach(at); err != nil {
				return err
			}
		}
		hs.attached++
	}
	return nil
}

// reap runs the Reap of every attached hook and returns the first error.
func (hs *hookSet) reap() error {
	if hs.reaped {
		return nil
	}
	hs.reaped = true
	var first error
	for i := hs.attached - 1; i >= 0; i-- {
		if r := hs.hooks[i].Reap; r != nil {
			if err := r(hs.pid); err != nil && first == nil {
				first = err
			}
		}
	}
	return first
}

// waitForwarding waits for the released target and forwards to its
// process group the signals rprof receives meanwhile. Where rprof handed
// the target the terminal, a stop of the target stops rprof too.
func waitForwarding(proc *os.Process, sigs <-chan os.Signal, g *group) (*os.ProcessState, error) {
	type waited struct {
		st  *os.ProcessState
		err error
	}
	done := make(chan waited, 1)
	go func() {
		st, err := proc.Wait()
		done <- waited{st, err}
	}()
	var chld chan os.Signal
	if g.watchesStops() {
		chld = make(chan os.Signal, 1)
		signal.Notify(chld, unix.SIGCHLD)
		defer signal.Stop(chld)
	}
	for {
		select {
		case s := <-sigs:
			// The target may be gone already; then there is nobody
			// to tell. A stopped target must run to act on it, as a
			// shell's kill of a stopped job does.
			g.signal(s.(syscall.Signal))
			g.signal(unix.SIGCONT)
		case <-chld:
			if g.stopped() {
				g.suspend()
			}
		case w := <-done:
			return w.st, w.err
		}
	}
}

// privileged reports whether executing path would raise privileges
// (set-user-ID, set-group-ID or file capabilities): a traced exec would
// run it without them, so such targets take the launcher.
func privileged(path string) bool {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return false // the exec will say what is wrong
	}
	if st.Mode&(unix.S_ISUID|unix.S_ISGID) != 0 {
		return true
	}
	n, err := unix.Getxattr(path, "security.capability", nil)
	return err == nil && n > 0
}

// ResolveTarget finds the executable Run would exec for name in dir, as
// an absolute path, or the *LaunchError Run would return: callers that
// read the target's file before running it (region probes) use it.
func ResolveTarget(name, dir string) (string, error) { return resolveTarget(name, dir) }

// resolveTarget finds the executable to exec, so that a missing or
// non-executable target is reported before anything runs. The result is
// absolute: the target starts in spec.Dir.
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
		return "", &Error{Name: name, Kind: kind, Err: cause}
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("launch: %s: %w", name, err)
	}
	return abs, nil
}

// execFailure turns a failed exec's errno into an *Error.
func execFailure(name, path string, errno syscall.Errno) error {
	kind := ErrNotExecutable
	if errno == syscall.ENOENT || errno == syscall.ENOTDIR {
		kind = ErrNotFound
	}
	return &Error{Name: name, Kind: kind, Err: &fs.PathError{Op: "exec", Path: path, Err: errno}}
}

var subreaper sync.Once

// becomeSubreaper makes rprof the child subreaper of its targets' trees:
// a process the target leaves running when it exits is re-parented to
// rprof, not to init, so that orphans can find it.
func becomeSubreaper() {
	subreaper.Do(func() { unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) })
}

var procFS = os.DirFS("/proc")

// launched are the targets run has started and not yet reaped: rprof's
// own children, not orphans.
var launched sync.Map

// orphans returns the processes the target (pid, just reaped) left
// running: children of rprof that rprof did not start. Those that have
// exited already are reaped and not listed.
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
		st, err := kfs.ReadProcStat(procFS, pid)
		if err != nil || st.PPID != self {
			continue
		}
		if st.State == "Z" {
			var ws unix.WaitStatus
			unix.Wait4(pid, &ws, unix.WNOHANG, nil)
			continue
		}
		out = append(out, pid)
	}
	return out
}
