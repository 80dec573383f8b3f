package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"strconv"
	"strings"

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
	tol := ratioFlag{v: opts.Tolerance}
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
	opts.Tolerance = tol.v
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

// ratioFlag is a relative figure given as "5%" or "0.05"; "off" (when
// allowed) is +Inf, a limit that never trips.
type ratioFlag struct {
	v        float64
	allowOff bool
}

func (r *ratioFlag) String() string {
	if r == nil {
		return ""
	}
	if math.IsInf(r.v, 1) {
		return "off"
	}
	return strconv.FormatFloat(r.v*100, 'g', -1, 64) + "%"
}

func (r *ratioFlag) Set(s string) error {
	if r.allowOff && s == "off" {
		r.v = math.Inf(1)
		return nil
	}
	num, isPct := strings.CutSuffix(strings.TrimSpace(s), "%")
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		want := `a non-negative number or percentage, e.g. "5%" or "0.05"`
		if r.allowOff {
			want += `, or "off"`
		}
		return fmt.Errorf("%q is not %s", s, want)
	}
	if isPct {
		v /= 100
	}
	r.v = v
	return nil
}

// ciFlag is --ci of every command that repeats until an interval is
// narrow enough: the interval's half-width as a share of the mean, 2% or
// 0.02 alike, in (0, 1).
type ciFlag struct{ ratioFlag }

func (c *ciFlag) Set(s string) error {
	var r ratioFlag
	if err := r.Set(s); err != nil || !(r.v > 0 && r.v < 1) {
		return fmt.Errorf("%q is not a share of the mean in (0, 1), e.g. 2%% or 0.02", s)
	}
	c.v = r.v
	return nil
}
