package measure

import (
	"context"
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

func TestExecuteListsChildrenThatOutliveTheTarget(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	x := execOK(t, ExecSpec{Argv: []string{"sh", "-c", "sleep 30 & echo $! > " + pidFile}})
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	child, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	defer syscall.Kill(child, syscall.SIGKILL)
	if !slices.Contains(x.Outlived, child) {
		t.Errorf("Outlived = %v, want the background sleep %d", x.Outlived, child)
	}
}

func TestExecuteDoesNotListChildrenTheTargetWaitedFor(t *testing.T) {
	x := execOK(t, ExecSpec{Argv: []string{"sh", "-c", "sleep 0.05 & wait"}})
	if len(x.Outlived) != 0 {
		t.Errorf("Outlived = %v, want none", x.Outlived)
	}
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

// TestTargetDiesWithRprof kills a process running Execute with SIGKILL,
// which it cannot handle, and checks that the target does not live on.
func TestTargetDiesWithRprof(t *testing.T) {
	if pidFile := os.Getenv("RPROF_TEST_EXECUTE_PIDFILE"); pidFile != "" {
		Execute(context.Background(), ExecSpec{Argv: []string{"sh", "-c", "echo $$ > " + pidFile + "; exec sleep 60"}})
		return
	}
	pidFile := filepath.Join(t.TempDir(), "pid")
	cmd := exec.Command(os.Args[0], "-test.run=^TestTargetDiesWithRprof$")
	cmd.Env = append(os.Environ(), "RPROF_TEST_EXECUTE_PIDFILE="+pidFile)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var target int
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
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
}
