package main

import (
	"os"
	"testing"
)

// TestMain lets the test binary play the roles the rprof binary plays for
// itself (roles: the launcher of `rprof run`, which re-executes
// os.Executable where ptrace is refused, and the worker processes of
// `rprof roofs`), and the test targets of cmd_run_test.go.
func TestMain(m *testing.M) {
	if code, ok := playRole(os.Args); ok {
		os.Exit(code)
	}
	if len(os.Args) > 1 && os.Args[1] == testTargetArg {
		os.Exit(testTarget(os.Args[2:]))
	}
	os.Exit(m.Run())
}
