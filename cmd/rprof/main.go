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
	ctx, stop := signalContext()
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// signalContext is cancelled by the first SIGINT or SIGTERM, which stops
// rprof cleanly; a second one stops it the default way, at once (a file
// written in place may then be cut short; one replaced by a rename is
// whole or untouched).
func signalContext() (context.Context, context.CancelFunc) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	context.AfterFunc(ctx, stop)
	return ctx, stop
}
