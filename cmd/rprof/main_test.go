package main

import (
	"os"
	"runtime"
	"testing"

	"github.com/rprof/rprof/measure"
)

// TestMain lets the test binary play the roles the rprof binary plays for
// itself: the launcher of `rprof run` (which re-executes os.Executable),
// and the test targets of cmd_run_test.go.
func TestMain(m *testing.M) {
	if measure.IsLauncher(os.Args) {
		measure.Launch(os.Args)
	}
	runtime.UnlockOSThread()
	if len(os.Args) > 1 && os.Args[1] == testTargetArg {
		os.Exit(testTarget(os.Args[2:]))
	}
	os.Exit(m.Run())
}
