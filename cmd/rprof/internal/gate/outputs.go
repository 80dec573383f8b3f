package gate

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/rprof/rprof/internal/output"
	"github.com/rprof/rprof/roofline"
)

// Outputs are the gate's outputs besides its text report; "" or false is
// none.
type Outputs struct {
	// Annotate writes GitHub Actions annotations before the report.
	Annotate bool
	// Markdown, JUnit and Benchfmt are files (output.Stdout: stdout).
	Markdown, JUnit, Benchfmt string
	// StepSummary is a job summary file the Markdown is appended to.
	StepSummary string
}

// WriteOutputs writes the verdict's text report to stdout, and the
// outputs o asks for: the baseline's and the new point's samples go to
// the benchmark file.
func WriteOutputs(ctx context.Context, stdout io.Writer, o Outputs, v *Verdict, base, cur roofline.Point) error {
	if o.Annotate {
		if err := WriteAnnotations(stdout, v); err != nil {
			return err
		}
	}
	if err := WriteVerdictText(stdout, v); err != nil {
		return err
	}
	if o.Markdown != "" {
		if err := output.Write(ctx, o.Markdown, stdout, func(w io.Writer) error { return WriteMarkdown(w, v) }); err != nil {
			return err
		}
	}
	if o.StepSummary != "" {
		// The job summary collects every step's output: append.
		f, err := os.OpenFile(o.StepSummary, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			return fmt.Errorf("job summary: %w", err)
		}
		werr := WriteMarkdown(f, v)
		if err := f.Close(); werr == nil {
			werr = err
		}
		if werr != nil {
			return fmt.Errorf("job summary %s: %w", o.StepSummary, werr)
		}
	}
	if o.JUnit != "" {
		if err := output.Write(ctx, o.JUnit, stdout, func(w io.Writer) error { return WriteJUnit(w, v) }); err != nil {
			return err
		}
	}
	if o.Benchfmt == "" {
		return nil
	}
	return output.Write(ctx, o.Benchfmt, stdout, func(w io.Writer) error {
		if len(base.Samples.Seconds) > 0 {
			if err := WriteBenchfmt(w, "baseline", []roofline.Point{base}); err != nil {
				return err
			}
		}
		return WriteBenchfmt(w, "new", []roofline.Point{cur})
	})
}

// WriteComparisonFiles writes a comparison's Markdown tables to markdown
// and the old and new points' samples to benchfmt in Go benchmark format
// ("" is none; output.Stdout is stdout).
func WriteComparisonFiles(ctx context.Context, stdout io.Writer, c *Comparison, old, new []roofline.Point, markdown, benchfmt string) error {
	if markdown != "" {
		if err := output.Write(ctx, markdown, stdout, func(w io.Writer) error { return WriteComparisonMarkdown(w, c) }); err != nil {
			return err
		}
	}
	if benchfmt == "" {
		return nil
	}
	return output.Write(ctx, benchfmt, stdout, func(w io.Writer) error {
		if err := WriteBenchfmt(w, "old", old); err != nil {
			return err
		}
		return WriteBenchfmt(w, "new", new)
	})
}
