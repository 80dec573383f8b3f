// Command rprof places programs on a roofline. See `rprof help`.
package main

import (
	"context"
	"os"
	"os/signal"
	"runtime"
	"syscall"
)

// A hidden role may need the main thread (see roles); playRole unlocks it
// otherwise.
func init() { runtime.LockOSThread() }

func main() {
	if code, ok := playRole(os.Args); ok {
		os.Exit(code)
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
