package main

import (
	"context"
	"fmt"

	"github.com/rprof/rprof/internal/lock"
)

// holdMachine keeps measurements apart: roofs takes the machine alone,
// runs share it. A second one says whom it waits for. Where the lock file
// cannot be opened, the measurement goes ahead with a note.
func holdMachine(ctx context.Context, e *env, cmd string, mode lock.Mode) (release func(), err error) {
	l, err := lock.Acquire(ctx, lock.Path(), mode, "rprof "+cmd, func(holder string) {
		fmt.Fprintf(e.stderr, "rprof %s: waiting for %s to finish: measurements at once spoil each other's figures\n", cmd, holder)
	})
	switch {
	case ctx.Err() != nil:
		return nil, &exitError{code: exitInterrupted, err: fmt.Errorf("interrupted while waiting for the machine")}
	case err != nil:
		fmt.Fprintf(e.stderr, "rprof %s: note: %v: not kept apart from other measurements\n", cmd, err)
		return func() {}, nil
	}
	return l.Release, nil
}
