package launch

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
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
