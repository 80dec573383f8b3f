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
// path that cannot be written ("" is no output), so no measurement is lost
// to it afterwards.
func checkOutputs(paths ...string) error {
	for _, p := range paths {
		if p == "" {
			continue
		}
		if err := output.Check(p); err != nil {
			return err
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
