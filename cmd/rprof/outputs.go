package main

import (
	"context"
	"io"
	"os"

	"golang.org/x/term"

	"github.com/rprof/rprof/internal/output"
	"github.com/rprof/rprof/roofline"
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

// writeDoc writes a JSON document to path ("-": stdout).
func writeDoc(ctx context.Context, e *env, path string, v any) error {
	data, err := roofline.MarshalDoc(v)
	if err != nil {
		return err
	}
	return output.Write(ctx, path, e.stdout, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// isTerminal says whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
