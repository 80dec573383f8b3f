package launch

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rprof/rprof/internal/kfs"
)

// bothStarts runs a subtest for the ptrace start and for the launcher.
func bothStarts(t *testing.T, f func(t *testing.T, reexec bool)) {
	for _, reexec := range []bool{false, true} {
		t.Run(fmt.Sprintf("reexec=%v", reexec), func(t *testing.T) { f(t, reexec) })
	}
}

func TestRunListsChildrenThatOutliveTheTarget(t *testing.T) {
	bothStarts(t, func(t *testing.T, reexec bool) {
		pidFile := filepath.Join(t.TempDir(), "pid")
		r, err := Run(context.Background(), Spec{Argv: []string{"sh", "-c", "sleep 30 & echo $! > " + pidFile}, Reexec: reexec})
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(pidFile)
		if err != nil {
			t.Fatal(err)
		}
		child, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		defer syscall.Kill(child, syscall.SIGKILL)
		if !slices.Contains(r.Outlived, child) {
			t.Errorf("Outlived = %v, want the background sleep %d", r.Outlived, child)
		}
	})
}

// waitGone waits up to 5 s for every pid to be gone (or a zombie).
func waitGone(t *testing.T, pids []int, after string) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if !slices.ContainsFunc(pids, alive) {
			return
		}
	}
	for _, p := range pids {
		if alive(p) {
			t.Errorf("pid %d outlived %s by 5 s", p, after)
		}
	}
}

func readPids(t *testing.T, file string, n int) []int {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		b, _ := os.ReadFile(file)
		if f := strings.Fields(string(b)); len(f) >= n && strings.HasSuffix(string(b), "\n") {
			var pids []int
			for _, s := range f[:n] {
				p, _ := strconv.Atoi(s)
				pids = append(pids, p)
			}
			return pids
		}
	}
	t.Fatalf("%s never named %d processes", file, n)
	return nil
}

// A tree: the target (sh), its child (sh), and that one's child (sleep);
// plus one that left the group (setsid). It prints their pids.
const treeScript = `sh -c 'sleep 60 & echo $!; wait' > "$1.child" & setsid sleep 60 & echo $$ $! >> "$1"; `

func TestRunKillsWhatTheTargetLeftRunning(t *testing.T) {
	bothStarts(t, func(t *testing.T, reexec bool) {
		file := filepath.Join(t.TempDir(), "pids")
		_, err := Run(context.Background(), Spec{Argv: []string{"sh", "-c", treeScript + "sleep 0.2 & wait $!", "sh", file}, Reexec: reexec})
		if err != nil {
			t.Fatal(err)
		}
		pids := append(readPids(t, file, 2), readPids(t, file+".child", 1)...)
		defer killAll(pids)
		waitGone(t, pids[1:], "the run")
	})
}

func killAll(pids []int) {
	for _, p := range pids {
		syscall.Kill(p, syscall.SIGKILL)
	}
}

// TestGrandchildrenDieWithRprof kills a process running Run with SIGKILL
// while the target's tree runs: the target, its child and grandchild go.
func TestGrandchildrenDieWithRprof(t *testing.T) {
	if file := os.Getenv("RPROF_TEST_TREE_FILE"); file != "" {
		Run(context.Background(), Spec{Argv: []string{"sh", "-c", treeScript + "wait", "sh", file},
			Reexec: os.Getenv("RPROF_TEST_RUN_REEXEC") == "true"})
		return
	}
	bothStarts(t, func(t *testing.T, reexec bool) {
		file := filepath.Join(t.TempDir(), "pids")
		cmd := exec.Command(os.Args[0], "-test.run=^TestGrandchildrenDieWithRprof$")
		cmd.Env = append(os.Environ(), "RPROF_TEST_TREE_FILE="+file, fmt.Sprintf("RPROF_TEST_RUN_REEXEC=%v", reexec))
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// The target, its child's child, and one that left the group
		// (setsid), which only a normal end of rprof kills.
		pids := append(readPids(t, file, 2), readPids(t, file+".child", 1)...)
		defer killAll(pids)
		cmd.Process.Kill()
		cmd.Wait()
		waitGone(t, []int{pids[0], pids[2]}, "rprof's SIGKILL")
		killAll(pids[1:2])
		reapAdopted(t)
	})
}

// reapAdopted waits for and reaps the processes a killed helper left to
// this test process, the subreaper of its Runs (its target and watchdog),
// so that a later Run does not list them as its target's.
func reapAdopted(t *testing.T) {
	t.Helper()
	self := os.Getpid()
	procfs := os.DirFS("/proc")
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		ents, _ := os.ReadDir("/proc")
		left := 0
		for _, e := range ents {
			pid, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			if st, err := kfs.ReadProcStat(procfs, pid); err == nil && st.PPID == self {
				var ws syscall.WaitStatus
				if st.State != "Z" {
					left++
				} else {
					syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
				}
			}
		}
		if left == 0 {
			return
		}
	}
	t.Error("processes adopted from the killed helper still run after 5 s")
}

func TestRunDoesNotListChildrenTheTargetWaitedFor(t *testing.T) {
	bothStarts(t, func(t *testing.T, reexec bool) {
		r, err := Run(context.Background(), Spec{Argv: []string{"sh", "-c", "sleep 0.05 & wait"}, Reexec: reexec})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Outlived) != 0 {
			t.Errorf("Outlived = %v, want none", r.Outlived)
		}
	})
}

// alive reports whether pid is a process that has not exited (a zombie
// has).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return len(f) > 0 && f[0] != "Z"
}

// TestTargetDiesWithRprof kills a process running Run with SIGKILL, which
// it cannot handle, and checks that the target does not live on.
func TestTargetDiesWithRprof(t *testing.T) {
	if pidFile := os.Getenv("RPROF_TEST_RUN_PIDFILE"); pidFile != "" {
		Run(context.Background(), Spec{Argv: []string{"sh", "-c", "echo $$ > " + pidFile + "; exec sleep 60"},
			Reexec: os.Getenv("RPROF_TEST_RUN_REEXEC") == "true"})
		return
	}
	bothStarts(t, func(t *testing.T, reexec bool) {
		pidFile := filepath.Join(t.TempDir(), "pid")
		cmd := exec.Command(os.Args[0], "-test.run=^TestTargetDiesWithRprof$")
		cmd.Env = append(os.Environ(), "RPROF_TEST_RUN_PIDFILE="+pidFile, fmt.Sprintf("RPROF_TEST_RUN_REEXEC=%v", reexec))
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var target int
		// The helper builds the C test programs first (TestMain): slow
		// under -race on a loaded machine.
		for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if b, err := os.ReadFile(pidFile); err == nil && strings.HasSuffix(string(b), "\n") {
				target, _ = strconv.Atoi(strings.TrimSpace(string(b)))
				break
			}
		}
		if target == 0 {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatal("the target never started")
		}
		defer syscall.Kill(target, syscall.SIGKILL)
		defer reapAdopted(t)
		cmd.Process.Kill()
		cmd.Wait()
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if !alive(target) {
				return
			}
		}
		t.Errorf("the target (pid %d) outlived rprof's SIGKILL by 5 s", target)
	})
}

// TestATargetOwnsTheTerminal runs Run in a pseudo-terminal's foreground
// (under script(1)): the target, in a process group of its own, must be
// able to read the terminal (a background group would be stopped by
// SIGTTIN), and a Ctrl-Z must not leave it stopped for good.
func TestATargetOwnsTheTerminal(t *testing.T) {
	if os.Getenv("RPROF_TEST_TTY") == "interrupt" {
		got := make(chan os.Signal, 1)
		signal.Notify(got, os.Interrupt)
		r, err := Run(context.Background(), Spec{Argv: []string{"sh", "-c", "echo ready; exec sleep 30"},
			Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Reexec: os.Getenv("RPROF_TEST_RUN_REEXEC") == "true"})
		select {
		case <-got:
			fmt.Println("rprof interrupted too")
		case <-time.After(time.Second):
		}
		fmt.Printf("exit:%d:%v\n", r.ExitCode, err)
		return
	}
	if os.Getenv("RPROF_TEST_TTY") != "" {
		r, err := Run(context.Background(), Spec{Argv: []string{"sh", "-c", `echo ready; read a; echo "read:$a"; read b; echo "read:$b"`},
			Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Reexec: os.Getenv("RPROF_TEST_RUN_REEXEC") == "true"})
		fmt.Printf("exit:%d:%v\n", r.ExitCode, err)
		return
	}
	if _, err := exec.LookPath("script"); err != nil {
		t.Skip("no script(1) to run in a pseudo-terminal")
	}
	bothStarts(t, func(t *testing.T, reexec bool) {
		in, out := startInTerminal(t, "1", reexec)
		steps := []struct{ await, send string }{
			{"ready", "first\n"},
			{"read:first", "\x1a"}, // Ctrl-Z
			{"", "second\n"},
			{"exit:0:<nil>", ""},
		}
		for _, st := range steps {
			if !out.await(st.await, 30*time.Second) {
				t.Fatalf("no %q after 30 s: the target cannot read the terminal, or stayed stopped\n%q", st.await, out.String())
			}
			if st.send == "\x1a" {
				time.Sleep(200 * time.Millisecond) // the target reads again
			}
			io.WriteString(in, st.send)
			if st.send == "\x1a" {
				time.Sleep(300 * time.Millisecond) // the stop passes
			}
		}
		if !strings.Contains(out.String(), "read:second") {
			t.Errorf("the second line was not read after Ctrl-Z:\n%q", out.String())
		}
	})
}

// TestCtrlCInterruptsRprofToo: the terminal's SIGINT reaches only the
// target's group, which holds the terminal; rprof must still learn of it.
func TestCtrlCInterruptsRprofToo(t *testing.T) {
	if _, err := exec.LookPath("script"); err != nil {
		t.Skip("no script(1) to run in a pseudo-terminal")
	}
	bothStarts(t, func(t *testing.T, reexec bool) {
		in, out := startInTerminal(t, "interrupt", reexec)
		if !out.await("ready", 30*time.Second) {
			t.Fatalf("the target never started:\n%q", out.String())
		}
		io.WriteString(in, "\x03") // Ctrl-C
		if !out.await("exit:130:<nil>", 30*time.Second) || !strings.Contains(out.String(), "rprof interrupted too") {
			t.Errorf("Ctrl-C: want the target killed by SIGINT and rprof interrupted:\n%q", out.String())
		}
	})
}

// syncBuffer is a buffer written by one goroutine and read by another.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// await waits until the buffer holds s.
func (b *syncBuffer) await(s string, limit time.Duration) bool {
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if strings.Contains(b.String(), s) {
			return true
		}
	}
	return false
}

// startInTerminal runs TestATargetOwnsTheTerminal's target side (mode is
// its RPROF_TEST_TTY) in a pseudo-terminal under script(1), and returns
// the terminal's input and everything it printed; the test's end kills
// it.
func startInTerminal(t *testing.T, mode string, reexec bool) (io.WriteCloser, *syncBuffer) {
	t.Helper()
	cmd := exec.Command("script", "-qec", fmt.Sprintf("'%s' -test.run='^TestATargetOwnsTheTerminal$'", os.Args[0]), "/dev/null")
	cmd.Env = append(os.Environ(), "RPROF_TEST_TTY="+mode, fmt.Sprintf("RPROF_TEST_RUN_REEXEC=%v", reexec))
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out := new(syncBuffer)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close(); cmd.Process.Kill(); cmd.Wait() })
	return in, out
}
