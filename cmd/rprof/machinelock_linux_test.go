package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rprof/rprof/internal/lock"
	"github.com/rprof/rprof/internal/rundir"
)

// holdAsRoofs takes the machine as a roofs would, in this test process.
func holdAsRoofs(t *testing.T) *lock.Lock {
	t.Helper()
	l, err := lock.Acquire(context.Background(), rundir.Default(), lock.Request{Mode: lock.Exclusive, What: "rprof roofs"})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestRunWaitsForRoofsAndSaysSo(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	roofs := holdAsRoofs(t)
	time.AfterFunc(300*time.Millisecond, roofs.Release)
	start := time.Now()
	var errb bytes.Buffer
	code := run(context.Background(), append([]string{"run", "--work", "1", "--"}, targetArgv(t, "exit", "0")...), strings.NewReader(""), io.Discard, &errb)
	stderr := errb.String()
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, fmt.Sprintf("waiting up to 5m0s for rprof roofs (pid %d)", os.Getpid())) {
		t.Errorf("no word of the wait:\n%s", stderr)
	}
	if took := time.Since(start); took < 250*time.Millisecond {
		t.Errorf("run finished after %v, before roofs released the machine", took)
	}
}

func TestRunGivesUpAfterTheLockTimeout(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	defer holdAsRoofs(t).Release()
	tests := []struct {
		timeout, fix string
	}{
		{"200ms", "fix: wait for it to finish, or give --lock-timeout a longer duration"},
		{"0", "fix: wait for it to finish, or give --lock-timeout a duration to wait"},
	}
	for _, tt := range tests {
		t.Run(tt.timeout, func(t *testing.T) {
			var errb bytes.Buffer
			code := run(context.Background(), append([]string{"run", "--lock-timeout", tt.timeout, "--work", "1", "--"}, targetArgv(t, "exit", "0")...), strings.NewReader(""), io.Discard, &errb)
			stderr := errb.String()
			if code != exitInternal || !strings.Contains(stderr, fmt.Sprintf("still held by rprof roofs (pid %d)", os.Getpid())) || !strings.Contains(stderr, tt.fix) {
				t.Errorf("exit %d, want %d with the holder and the fix:\n%s", code, exitInternal, stderr)
			}
		})
	}
}

func TestLockTimeoutRefusesANegativeWait(t *testing.T) {
	code, _, stderr := rprofCLI(t, "run", "--lock-timeout", "-1s", "--", "true")
	if code != exitUsage || !strings.Contains(stderr, "cannot be negative") {
		t.Errorf("exit %d, %q; want a usage error", code, stderr)
	}
}

// A measurement started under one that holds the machine (here this test,
// holding it as roofs; rprof run -- rprof roofs in life) goes ahead
// inside it instead of waiting for its own ancestor.
func TestANestedRprofDoesNotWaitForItsParent(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	defer holdAsRoofs(t).Release()
	argv := append([]string{os.Args[0], testRprofArg, "run", "--lock-timeout", "20s", "--work", "1", "--"}, targetArgv(t, "exit", "0")...)
	// Under sh, as a target runs a nested rprof under its own children.
	cmd := exec.Command("sh", append([]string{"-c", `"$@"`, "sh"}, argv...)...)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), fmt.Sprintf("held by rprof roofs (pid %d), which started this one", os.Getpid())) {
		t.Errorf("nested rprof run: %v\n%s", err, out)
	}
	if took := time.Since(start); took > 15*time.Second {
		t.Errorf("the nested rprof took %v: it waited for its parent", took)
	}
}

// A runtime directory that is not private is not used: the run says why
// and goes ahead, not kept apart from other measurements.
func TestRunSaysWhyItDoesNotUseAnUnsafeRuntimeDirectory(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	xdg := t.TempDir()
	t.Setenv("XDG_RUNTIME_DIR", xdg)
	if err := os.Mkdir(filepath.Join(xdg, "rprof"), 0o755); err != nil {
		t.Fatal(err)
	}
	var errb bytes.Buffer
	code := run(context.Background(), append([]string{"run", "--work", "1", "--"}, targetArgv(t, "exit", "0")...), strings.NewReader(""), io.Discard, &errb)
	if stderr := errb.String(); code != 0 || !strings.Contains(stderr, "has mode 0755, not 0700: not private") || !strings.Contains(stderr, "not kept apart") {
		t.Errorf("exit %d, want 0 with the reason:\n%s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(xdg, "rprof", "measure.lock")); err == nil {
		t.Error("a lock file was made in the refused directory")
	}
}
