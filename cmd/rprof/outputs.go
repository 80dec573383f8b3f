package main

import (
	"context"
	"errors"
	"io"
	"os"

	"golang.org/x/term"

	"github.com/rprof/rprof/internal/output"
)

// checkOutputs refuses, before anything is measured or drawn, an output
// that names an input (bad command line, exit 2) and one that cannot be
// written (exit 125), so no measurement is lost to it afterwards. "" is
// no output or input.
func checkOutputs(outs []string, ins ...string) error {
	if err := output.Distinct(outs, ins); err != nil {
		return usagef("%v", err)
	}
	for _, p := range outs {
		if p == "" {
			continue
		}
		if err := output.Check(p); err != nil {
			return &exitError{code: exitInternal, err: err}
		}
	}
	return nil
}

// writeFailure is the exit status of an output that failed after the
// work was done: 130 when an interruption ended the wait for a FIFO's
// reader, else 125.
func writeFailure(err error) error {
	if errors.Is(err, context.Canceled) {
		return &exitError{code: exitInterrupted, err: err}
	}
	return &exitError{code: exitInternal, err: err}
}

// targetStdout is where the target's standard output goes: rprof's
// stdout, unless the document goes there (--json -), when the target's
// output would corrupt it and goes to stderr instead.
func targetStdout(e *env, jsonPath string) io.Writer {
	if jsonPath == output.Stdout {
		return e.stderr
	}
	return e.stdout
}

// isTerminal says whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
