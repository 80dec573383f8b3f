package launch

import (
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rprof/rprof/internal/kfs"
)

// group is the target's process group: the target leads a group of its
// own, which everything it starts joins unless it leaves on purpose
// (setsid, setpgid), so that rprof can signal and kill the whole tree.
//
// The kernel kills only the target itself when rprof dies (Pdeathsig):
// its children would live on, re-parented to init. A watchdog, /bin/sh
// reading a pipe only rprof writes to, sees EOF when rprof dies, however
// it dies, and kills the group. When rprof ends normally it kills what is
// left of the group itself, and the watchdog with it.
//
// A process group outside the terminal's foreground may not read the
// terminal (SIGTTIN stops it), so when rprof is in the foreground it hands
// the terminal to the target's group for the run, takes it back at a stop
// (Ctrl-Z) and at the end, and stops itself as the shell expects.
type group struct {
	pgid int
	// tty is the controlling terminal when rprof was in its foreground
	// and handed it to the target's group; nil otherwise.
	tty      *os.File
	watchdog *os.Process
	wdW      *os.File
	pidfd    int
}

// watchdogScript kills the group whose id is its first line once its
// stdin reaches EOF: when rprof, the only writer, has exited. It ignores
// the terminal's and the session's signals, which rprof's own process
// group may receive.
const watchdogScript = `trap '' INT HUP TERM QUIT TSTP TTIN TTOU; read g; read _; kill -s KILL -- -"$g" 2>/dev/null`

// prepare makes the target a group leader, in the terminal's foreground
// when rprof is there.
func (g *group) prepare(sys *syscall.SysProcAttr) {
	g.pidfd = -1
	sys.Setpgid = true
	tty, err := os.OpenFile("/dev/tty", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		return // no controlling terminal
	}
	if fg, err := unix.IoctlGetInt(int(tty.Fd()), unix.TIOCGPGRP); err != nil || fg != unix.Getpgrp() {
		tty.Close()
		return
	}
	g.tty = tty
	sys.Foreground = true
	sys.Ctty = int(tty.Fd())
}

// started records the group (led by pid, the held target: nothing in it
// has run yet) and starts its watchdog. Without /bin/sh there is no
// watchdog, and the target's children outlive a killed rprof.
func (g *group) started(pid int) {
	g.pgid = pid
	if fd, err := unix.PidfdOpen(pid, 0); err == nil {
		g.pidfd = fd
	}
	r, w, err := os.Pipe()
	if err != nil {
		return
	}
	defer r.Close()
	p, err := os.StartProcess("/bin/sh", []string{"sh", "-c", watchdogScript}, &os.ProcAttr{Files: []*os.File{r}})
	if err != nil {
		w.Close()
		return
	}
	launched.Store(p.Pid, true)
	fmt.Fprintf(w, "%d\n", pid)
	g.watchdog, g.wdW = p, w
}

// signal sends sig to every process of the group.
func (g *group) signal(sig syscall.Signal) {
	if g.pgid > 0 {
		unix.Kill(-g.pgid, sig)
	}
}

// watchesStops reports whether rprof handed the target the terminal, and
// so must pass the target's stops on (see stopped).
func (g *group) watchesStops() bool { return g.tty != nil && g.pidfd >= 0 }

// cldStopped is si_code CLD_STOPPED (asm-generic/siginfo.h).
const cldStopped = 5

// stopped reports whether the target has stopped (Ctrl-Z reached its
// group) since last asked; rprof learns of it by SIGCHLD.
func (g *group) stopped() bool {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PIDFD, g.pidfd, &info, unix.WSTOPPED|unix.WNOHANG, nil)
		if err == unix.EINTR {
			continue
		}
		// Linux leaves the zeroed siginfo alone when nothing stopped.
		return err == nil && info.Signo == int32(unix.SIGCHLD) && info.Code == cldStopped
	}
}

// suspend passes the target's stop on to rprof, as if the terminal had
// stopped both: it takes the terminal back and stops its own process
// group, so that the shell sees its job stopped. Once continued, it hands
// the terminal back and continues the target's group. The stop takes
// effect after kill(2) returns, so it waits for the SIGCONT; a group
// without a shell's job control (orphaned) discards the SIGTSTP, and then
// it goes on after a second.
func (g *group) suspend() {
	cont := make(chan os.Signal, 1)
	signal.Notify(cont, unix.SIGCONT)
	defer signal.Stop(cont)
	g.foreground(unix.Getpgrp())
	unix.Kill(0, unix.SIGTSTP)
	select {
	case <-cont:
	case <-time.After(time.Second):
	}
	g.foreground(g.pgid)
	g.signal(unix.SIGCONT)
}

// foreground puts process group pgrp in the terminal's foreground, from a
// background group (which SIGTTOU would stop unless ignored).
func (g *group) foreground(pgrp int) {
	if g.tty == nil {
		return
	}
	signal.Ignore(unix.SIGTTOU)
	defer signal.Reset(unix.SIGTTOU)
	unix.IoctlSetPointerInt(int(g.tty.Fd()), unix.TIOCSPGRP, pgrp)
}

// reap waits, at most a second, until the killed group is gone, reaping
// its members that were re-parented to rprof: a later run's scan for
// orphans must not find them. A group already empty costs one kill(2).
func (g *group) reap() {
	if g.pgid <= 0 || unix.Kill(-g.pgid, 0) == unix.ESRCH {
		return
	}
	self := os.Getpid()
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		ents, err := os.ReadDir("/proc")
		if err != nil {
			return
		}
		members := 0
		for _, e := range ents {
			pid, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			st, err := kfs.ReadProcStat(procFS, pid)
			if err != nil || st.PGRP != g.pgid {
				continue
			}
			members++
			if st.State == "Z" && st.PPID == self {
				var ws unix.WaitStatus
				unix.Wait4(pid, &ws, unix.WNOHANG, nil)
			}
		}
		if members == 0 {
			return
		}
	}
}

// passOnInterrupt: a target that held the terminal and died of SIGINT was
// most likely interrupted from the keyboard, which reached only its group;
// before, the terminal interrupted rprof with it. rprof sends itself the
// SIGINT it would have had, as a shell does when its foreground job dies
// of one, so that it stops repeating and says it was interrupted. A
// target that handles SIGINT and exits is taken at its word.
func (g *group) passOnInterrupt(ws syscall.WaitStatus) {
	if g.tty != nil && ws.Signaled() && ws.Signal() == unix.SIGINT {
		unix.Kill(os.Getpid(), unix.SIGINT)
	}
}

// end kills what is left of the group and the orphans (processes the
// target left that were re-parented to rprof, which may have left the
// group), takes the terminal back, and stops the watchdog.
func (g *group) end(orphans []int) {
	g.signal(unix.SIGKILL)
	for _, pid := range orphans {
		unix.Kill(pid, unix.SIGKILL)
		var ws unix.WaitStatus
		unix.Wait4(pid, &ws, 0, nil)
	}
	g.reap()
	if g.tty != nil {
		g.foreground(unix.Getpgrp())
		g.tty.Close()
	}
	if g.watchdog != nil {
		g.watchdog.Kill()
		g.watchdog.Wait()
		launched.Delete(g.watchdog.Pid)
		g.wdW.Close()
	}
	if g.pidfd >= 0 {
		unix.Close(g.pidfd)
	}
}
