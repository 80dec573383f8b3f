package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"time"

	"github.com/rprof/rprof/cmd/rprof/internal/flagval"
	"github.com/rprof/rprof/internal/lock"
	"github.com/rprof/rprof/internal/rundir"
)

// defaultLockTimeout is how long a measurement waits for others by
// default: longer than a quick roofs sweep, short enough that a forgotten
// holder does not hang a CI job.
const defaultLockTimeout = 5 * time.Minute

// lockTimeoutVar defines --lock-timeout. A negative duration is a usage
// error; 0 does not wait at all.
func lockTimeoutVar(fs *flag.FlagSet, p *time.Duration) {
	*p = defaultLockTimeout
	fs.Var(flagval.Wait{Duration: flagval.Duration{P: p}}, "lock-timeout", "wait at most `D` for another rprof measurement on this machine to finish (0 does not wait), then exit 125; an rprof started by one holding the machine (rprof run -- rprof roofs) measures inside it")
}

// holdMachine keeps measurements apart: roofs takes the machine alone,
// runs share it. A second one says whom it waits for, and gives up after
// timeout. One started by a measurement that holds the machine (rprof run
// -- rprof roofs) goes ahead inside it. Where the lock cannot be taken
// (its runtime directory is not private, say), the measurement goes ahead
// with a note.
func holdMachine(ctx context.Context, e *env, cmd string, mode lock.Mode, timeout time.Duration) (release func(), err error) {
	req, notes := machineRequest(e, cmd, mode, timeout)
	release, err = lock.Hold(ctx, rundir.Default(), req, notes)
	if err != nil {
		return nil, machineFailure(err)
	}
	return release, nil
}

// machineRequest is cmd's request for the machine lock, with its words
// for the wait and for going ahead without the lock.
func machineRequest(e *env, cmd string, mode lock.Mode, timeout time.Duration) (lock.Request, lock.Notes) {
	return lock.Request{Mode: mode, What: "rprof " + cmd, Timeout: timeout,
			Waiting: func(h lock.Holder) {
				fmt.Fprintf(e.stderr, "rprof %s: waiting up to %v for %s to finish: measurements at once spoil each other's figures\n", cmd, timeout, h)
			}}, lock.Notes{
			Unavailable: func(err error) {
				fmt.Fprintf(e.stderr, "rprof %s: note: %v: not kept apart from other measurements\n", cmd, err)
			},
			Nested: func(h lock.Holder) {
				fmt.Fprintf(e.stderr, "rprof %s: note: the machine is held by %s, which started this one: measuring inside it, without waiting\n", cmd, h)
			}}
}

// machineFailure is the exit of a measurement that could not have the
// machine: interrupted while waiting, or its wait timed out.
func machineFailure(err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return &exitError{code: exitInterrupted, err: fmt.Errorf("interrupted while waiting for the machine")}
	}
	return &exitError{code: exitInternal, err: fmt.Errorf("nothing measured: %w", err)}
}
