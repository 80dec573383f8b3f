package main

import (
	"os"
	"strings"
	"testing"
)

// TestMain lets the test binary play the roles the rprof binary plays for
// itself (roles: the launcher of `rprof run`, which re-executes
// os.Executable where ptrace is refused, and the worker processes of
// `rprof roofs`), the test targets of cmd_run_test.go, and rprof itself
// (testRprofArg) for commands that keep the main thread.
func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == testRprofArg {
		args := append([]string{os.Args[0]}, os.Args[2:]...)
		if code, ok := playRole(args); ok {
			os.Exit(code)
		}
		// Signals as in main.
		ctx, stop := signalContext()
		code := run(ctx, args[1:], os.Stdin, os.Stdout, os.Stderr)
		stop()
		os.Exit(code)
	}
	if code, ok := playRole(os.Args); ok {
		os.Exit(code)
	}
	if len(os.Args) > 1 && os.Args[1] == testTargetArg {
		os.Exit(testTarget(os.Args[2:]))
	}
	// The tests' measurements keep apart from each other, not from
	// whatever else measures on this machine (a real 'rprof roofs' would
	// hold them up for minutes).
	runtimeDir, err := os.MkdirTemp("", "rprof-test-runtime-")
	if err != nil {
		os.Exit(1)
	}
	os.Setenv("XDG_RUNTIME_DIR", runtimeDir)
	code := m.Run()
	os.RemoveAll(runtimeDir)
	os.Exit(code)
}

func TestVersionNamesTheBuild(t *testing.T) {
	for _, arg := range []string{"--version", "version"} {
		code, stdout, _ := rprofCLI(t, arg)
		if code != exitOK || !strings.HasPrefix(stdout, "rprof ") || !strings.Contains(stdout, "go1.") {
			t.Errorf("rprof %s: exit %d, %q; want rprof, the version and the Go version", arg, code, stdout)
		}
	}
}
