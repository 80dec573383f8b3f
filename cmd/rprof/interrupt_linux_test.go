package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rprof/rprof/roofline"
)

// An interrupted `rprof run` exits 130, and writes the point of the
// repetitions that ended, flagged interrupted: a target that ignores the
// SIGTERM rprof forwards and exits 0 is no longer a clean exit 0 with one
// repetition of five; a target the forwarded SIGINT kills gives the same.
func TestRunInterruptedWritesAFlaggedPointAndExits130(t *testing.T) {
	for _, c := range []struct {
		name   string
		target string
		sig    syscall.Signal
	}{
		{"target ignores SIGTERM and exits 0", "ignore-term", syscall.SIGTERM},
		{"target killed by the SIGINT forwarded", "wait", syscall.SIGINT},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			ready, out := filepath.Join(dir, "ready"), filepath.Join(dir, "p.json")
			args := append([]string{testRprofArg, "run", "--repeat", "5", "--work", "1", "--json", out, "--"}, targetArgv(t, c.target, ready)...)
			cmd, stderr := startRprofUntil(t, dir, ready, args)
			cmd.Process.Signal(c.sig)
			err := cmd.Wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != exitInterrupted {
				t.Fatalf("rprof: %v, want exit %d\n%s", err, exitInterrupted, stderr.String())
			}
			p := readRunPoint(t, out)
			if p.CI.N != 1 || !hasFlag(p, roofline.FlagInterrupted) {
				t.Errorf("n %d, flags %+v: want the one repetition run, flagged interrupted", p.CI.N, p.Flags)
			}
			if !strings.Contains(stderr.String(), "interrupted after 1 repetition") {
				t.Errorf("stderr %q does not say the run was interrupted", stderr.String())
			}
		})
	}
}

// waitFor waits up to 20 s for path to exist.
func waitFor(t *testing.T, path string) {
	t.Helper()
	for range 2000 {
		if _, err := os.Stat(path); err == nil {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s never appeared", path)
}

// A FIFO without a reader as --json is waited for after measuring, and
// the first SIGINT ends the wait: exit 130, not a hang.
func TestRunFIFOWithoutReaderHonoursTheFirstInterrupt(t *testing.T) {
	dir := t.TempDir()
	fifo, ready := filepath.Join(dir, "p.fifo"), filepath.Join(dir, "ready")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	args := append([]string{testRprofArg, "run", "--work", "1", "--json", fifo, "--"}, targetArgv(t, "touch", ready)...)
	cmd, stderr := startRprofUntil(t, dir, ready, args)
	// The target has run; rprof now waits for the FIFO's reader.
	time.Sleep(200 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != exitInterrupted || !strings.Contains(stderr.String(), "FIFO") {
			t.Fatalf("rprof: %v, want exit %d saying it waited for the FIFO's reader\n%s", err, exitInterrupted, stderr.String())
		}
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		t.Fatal("rprof still waits 10 s after the SIGINT")
	}
	if st, _ := os.Lstat(fifo); st.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO was replaced by a %v", st.Mode())
	}
}

// A FIFO without a reader as one of gate's CI outputs is waited for after
// the verdict, and an interruption ends the wait with 130, as for run.
func TestGateFIFOWithoutReaderExitsInterrupted(t *testing.T) {
	for _, flag := range []string{"--markdown", "--junit", "--benchfmt"} {
		t.Run(flag, func(t *testing.T) {
			gateOutsideCI(t)
			fifo := filepath.Join(t.TempDir(), "out.fifo")
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Skipf("mkfifo: %v", err)
			}
			f := &fakeGateMeasure{results: []fakeGateResult{{point: gateReadPoint(t, "testdata/gate/baseline.json")}}}
			ctx, cancel := context.WithCancel(context.Background())
			defer time.AfterFunc(300*time.Millisecond, cancel).Stop()
			var stdout, stderr strings.Builder
			e := &env{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr, measure: f.measure(t)}
			code := runEnv(ctx, e, []string{"gate", "--baseline", "testdata/gate/baseline.json", flag, fifo, "--", "./spin"})
			if code != exitInterrupted {
				t.Errorf("exit %d, want %d: %s", code, exitInterrupted, stderr.String())
			}
		})
	}
}

// startRprofUntil starts rprof with args as a process of its own, its
// runtime and cache directories in dir, and returns once the file ready
// exists (the target has started), with rprof's standard error.
func startRprofUntil(t *testing.T, dir, ready string, args []string) (*exec.Cmd, *strings.Builder) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "XDG_RUNTIME_DIR="+dir, "XDG_CACHE_HOME="+dir)
	stderr := new(strings.Builder)
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ready)
	return cmd, stderr
}
