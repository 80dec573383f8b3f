// Command rprof places programs on a roofline. See `rprof help`.
package main

import (
	"context"
	"os"
	"os/signal"
	"runtime"
	"syscall"

	"github.com/rprof/rprof/dnnbench"
	"github.com/rprof/rprof/measure"
	"github.com/rprof/rprof/roofs"
)

// The hidden launcher of `rprof run` must exec its target from the main
// thread (see measure.Launch), and `rprof dnn bench` calls oneDNN from it
// (see dnnbench.NeedsMainThread); main unlocks otherwise.
func init() { runtime.LockOSThread() }

func main() {
	if measure.IsLauncher(os.Args) {
		measure.Launch(os.Args)
	}
	if !dnnbench.NeedsMainThread(os.Args[1:]) {
		runtime.UnlockOSThread()
	}
	if len(os.Args) > 1 && os.Args[1] == roofs.WorkerArg {
		os.Exit(roofs.Worker(context.Background(), os.Stdin, os.Stdout))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// The first Ctrl-C stops rprof cleanly; a second one, the default
	// way, at once (an output is then never half-written either: files
	// are renamed into place whole).
	context.AfterFunc(ctx, stop)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
