package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	rpreport "github.com/rprof/rprof/cmd/rprof/internal/report"
	"github.com/rprof/rprof/internal/output"
)

var cmdReport = &command{
	Name:      "report",
	UsageLine: "rprof report [--format html|md] [-o FILE|-] [flags] [POINT.json...]",
	Short:     "write an HTML or Markdown roofline report",
	Long: `
Report writes the roofline of the given points under this machine's roofs
as a report: the machine, the roofs with their confidence intervals and
percentage of the theoretical peak, a table of the points (W, Q, T,
intensity, GFLOP/s, binding roof, fraction of attainable, flags with their
explanations) and every point's raw counter readings.

Points measured at different thread counts get one chart per thread scope,
each under its own roofs.

--format html (the default, or when -o ends in .html) writes one
self-contained page with the charts as inline SVG: no network fetches, no
external style sheets or scripts. --format md (or -o FILE.md) writes
Markdown for a CI job summary, with a text chart, e.g.
  rprof report --format md run.json >> "$GITHUB_STEP_SUMMARY"

`,
	Run: runReport,
}

func runReport(ctx context.Context, e *env, args []string) error {
	fset := newFlagSet(e, "report")
	var draw drawFlags
	draw.register(fset)
	out := fset.String("o", "-", "write to `FILE`; - is stdout")
	format := fset.String("format", "", "the `FORMAT`, html or md (default: from the -o extension, else html)")
	fset.StringVar(&draw.title, "title", "", "report `TITLE`")
	files, err := parseInterspersed(fset, args)
	if err != nil {
		return err
	}
	f, err := reportFormat(*format, *out)
	if err != nil {
		return err
	}
	if *out == output.Stdout && f == "html" && isTerminal(e.stdout) {
		return usagef("will not write HTML to a terminal: give -o FILE.html (or redirect stdout), or --format md")
	}
	in, err := draw.load(e, "report", *out, files)
	if err != nil {
		return err
	}
	input := rpreport.Input{Roofs: in.Roofs, RoofsPath: in.RoofsPath, Points: in.Points, Chart: draw.options()}
	write := rpreport.HTML
	if f == "md" {
		write = rpreport.Markdown
	}
	var notes []string
	err = output.Write(ctx, *out, e.stdout, func(w io.Writer) error {
		var werr error
		notes, werr = write(w, input)
		return werr
	})
	if err != nil {
		return err
	}
	printNotes(e, "report", notes)
	if *out != "-" {
		fmt.Fprintf(e.stderr, "rprof report: wrote %s\n", *out)
	}
	return nil
}

// reportFormat returns "html" or "md" from --format, else from the output
// file's extension.
func reportFormat(flagValue, out string) (string, error) {
	switch strings.ToLower(flagValue) {
	case "html", "md":
		return strings.ToLower(flagValue), nil
	case "markdown":
		return "md", nil
	case "":
	default:
		return "", usagef("--format %q: want html or md", flagValue)
	}
	switch ext := strings.ToLower(filepath.Ext(out)); ext {
	case ".md", ".markdown":
		return "md", nil
	case ".html", ".htm", "":
		return "html", nil
	default:
		return "", usagef("-o %s: unknown report extension %q (want .html or .md, or give --format)", out, ext)
	}
}
