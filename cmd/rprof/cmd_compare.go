package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/rprof/rprof/cmd/rprof/internal/flagval"
	"github.com/rprof/rprof/cmd/rprof/internal/gate"
	"github.com/rprof/rprof/internal/docfile"
	"github.com/rprof/rprof/internal/stats"
	"github.com/rprof/rprof/roofline"
)

var cmdCompare = &command{
	Name:      "compare",
	UsageLine: "rprof compare [--test welch-t|mann-whitney-u] [flags] OLD.json NEW.json",
	Short:     "compare two points or point sets, benchstat-style",
	Long: `
Compare prints, for each label, every metric of the old and new point: its
value with the relative half-width of its confidence interval, the change,
and whether the change is significant.

Timed figures (time, GFLOP/s, fraction of attainable) are tested on the
per-repetition samples the points keep: Welch's t test by default, the
Mann-Whitney U test with --test mann-whitney-u. A point that kept only its
mean and interval is tested with Welch's t on the summary. "~" marks a
change that is not significant. Counted figures (W, Q, intensity) barely
vary between runs; they are compared against a relative tolerance, except
where exact: W between two emulated points (--count emulate), and Q and
intensity too when both emulated runs had one thread per process (with
more, the threads' interleaving moves the modelled Q).

Two files of one point each are compared whatever their labels; files of
several points are paired by label, and every label must be in both.


Exit status: 0 when compared, 2 when a file cannot be read or labels do
not pair.
`,
	Run: runCompare,
}

func runCompare(ctx context.Context, e *env, args []string) error {
	fset := newFlagSet(e, "compare")
	opts := gate.DefaultOptions
	fset.StringVar(&opts.Test, "test", opts.Test, "the two-sample `TEST`: welch-t or mann-whitney-u")
	fset.Float64Var(&opts.Alpha, "alpha", opts.Alpha, "significance level `P`")
	tol := flagval.Ratio{V: opts.Tolerance}
	fset.Var(&tol, "tolerance", "relative tolerance `PCT` of W, Q and intensity (1% or 0.01 alike)")
	markdown := fset.String("markdown", "", "also write the tables as Markdown to `FILE` (for a pull-request comment or a job summary)")
	benchfmt := fset.String("benchfmt", "", "also write both files' samples in Go benchmark format to `FILE`, for 'benchstat -col run FILE'")
	if err := parseFlags(fset, args); err != nil {
		return err
	}
	if fset.NArg() != 2 {
		return usagef("want two files, OLD.json and NEW.json; got %d arguments", fset.NArg())
	}
	if err := checkTest(opts.Test); err != nil {
		return err
	}
	opts.Tolerance = tol.V
	if err := checkOutputs([]string{*markdown, *benchfmt}, fset.Args()...); err != nil {
		return err
	}
	old, err := readPointsInput(fset.Arg(0))
	if err != nil {
		return err
	}
	new, err := readPointsInput(fset.Arg(1))
	if err != nil {
		return err
	}
	c, err := gate.Compare(old, new, opts)
	if err != nil {
		return &exitError{code: exitUsage, err: err}
	}
	if err := gate.WriteText(e.stdout, c); err != nil {
		return err
	}
	if err := gate.WriteComparisonFiles(ctx, e.stdout, c, old, new, *markdown, *benchfmt); err != nil {
		return &exitError{code: exitInternal, err: err}
	}
	return nil
}

func checkTest(name string) error {
	if name != stats.TestWelch && name != stats.TestMannWhitney {
		return usagef("--test %q: want %s or %s", name, stats.TestWelch, stats.TestMannWhitney)
	}
	return nil
}

// readPointsInput reads a point or point set given on the command line;
// failures are bad input (exit 2) with one line naming the file.
func readPointsInput(path string) ([]roofline.Point, error) {
	ps, err := docfile.ReadPoints(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, &exitError{code: exitUsage, err: fmt.Errorf("%s: no such file", path)}
	case errors.Is(err, roofline.ErrSchema):
		return nil, &exitError{code: exitUsage, err: fmt.Errorf("%w: not an rprof point of this version", err)}
	case err != nil:
		return nil, &exitError{code: exitUsage, err: err}
	case len(ps) == 0:
		return nil, &exitError{code: exitUsage, err: fmt.Errorf("%s: the point set holds no points", path)}
	}
	return ps, nil
}
