package main

import (
	"context"
	"os"
	"runtime"
	"testing"

	"github.com/rprof/rprof/dnnbench"
	"github.com/rprof/rprof/measure"
	"github.com/rprof/rprof/roofs"
)

// TestMain lets the test binary play the roles the rprof binary plays for
// itself: the launcher of `rprof run` (which re-executes os.Executable),
// the test targets of cmd_run_test.go, the worker processes of
// `rprof roofs`, and rprof itself for commands that call a library from the
// main thread (testRprofArg).
func TestMain(m *testing.M) {
	if measure.IsLauncher(os.Args) {
		measure.Launch(os.Args)
	}
	if len(os.Args) > 1 && os.Args[1] == testRprofArg {
		// rprof itself, for commands that must run on the main thread.
		if !dnnbench.NeedsMainThread(os.Args[2:]) {
			runtime.UnlockOSThread()
		}
		os.Exit(run(context.Background(), os.Args[2:], os.Stdin, os.Stdout, os.Stderr))
	}
	runtime.UnlockOSThread()
	if len(os.Args) > 1 && os.Args[1] == roofs.WorkerArg {
		os.Exit(roofs.Worker(context.Background(), os.Stdin, os.Stdout))
	}
	if len(os.Args) > 1 && os.Args[1] == testTargetArg {
		os.Exit(testTarget(os.Args[2:]))
	}
	os.Exit(m.Run())
}
