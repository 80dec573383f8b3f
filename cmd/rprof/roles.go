package main

import (
	"context"
	"os"
	"runtime"

	"github.com/rprof/rprof/dnnbench"
	"github.com/rprof/rprof/internal/launch"
	"github.com/rprof/rprof/roofs"
)

// role is a hidden part the rprof binary plays when it re-executes
// itself with the role's name as its first argument.
type role struct {
	main func(args []string) int
	// mainThread keeps the role on the main OS thread, locked by main's
	// init: the launcher execs its target from it, a roofs worker calls
	// oneDNN from it.
	mainThread bool
}

// roles is the one table of hidden roles, dispatched by main and by the
// tests' TestMain alike: the launcher of `rprof run` (where ptrace is
// refused) and the worker processes of `rprof roofs`. A new role is one
// more entry.
var roles = map[string]role{
	launch.Role: {main: launch.Main, mainThread: true},
	// A worker keeps the main thread: its dnn jobs call oneDNN, whose
	// kernels need the main thread's stack (dnnbench.NeedsMainThread).
	roofs.WorkerArg: {main: func([]string) int { return roofs.Worker(context.Background(), os.Stdin, os.Stdout) }, mainThread: true},
	kernelRole:      {main: kernelMain},
}

// playRole plays the role args (os.Args) name and returns its exit status;
// ok is false when they name none. The caller has locked the main
// goroutine to the main thread; playRole unlocks it unless the role needs
// it, and when no role is played, unless the command needs it (`rprof dnn
// bench` calls oneDNN from it: see dnnbench.NeedsMainThread).
func playRole(args []string) (code int, ok bool) {
	var r role
	if len(args) > 1 {
		r, ok = roles[args[1]]
	}
	if (!ok || !r.mainThread) && !dnnbench.NeedsMainThread(args[1:]) {
		runtime.UnlockOSThread()
	}
	if !ok {
		return 0, false
	}
	return r.main(args), true
}
