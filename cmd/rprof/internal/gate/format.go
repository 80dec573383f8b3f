package gate

import (
	"fmt"
	"math"
	"strings"

	"github.com/rprof/rprof/internal/stats"

	"github.com/rprof/rprof/internal/unit"
)

// number formats v in unit with an SI prefix and four significant digits.
// Ratios (FLOP/B), GFLOP/s and unitless fractions are not rescaled.
func number(v float64, u string) string {
	switch u {
	case "":
		return unit.Percent(v)
	case "FLOP/B", "GFLOP/s":
		return unit.Sig(v) + " " + u
	}
	return unit.SI(v, u)
}

// interval formats "± x%" for a value with an interval, "(n=1, no
// interval)" for a single repetition, which has no spread, and "" when
// nothing is known of the spread.
func interval(v Value) string {
	if v.N == 1 {
		return "(n=1, no interval)"
	}
	if math.IsNaN(v.Lo) || math.IsNaN(v.Hi) || v.Center == 0 {
		return ""
	}
	half := math.Max(v.Center-v.Lo, v.Hi-v.Center) / math.Abs(v.Center)
	return "± " + unit.Relative(half)
}

// span formats the bounds lo and hi with f as "lo to hi", or as one figure
// when both print the same.
func span(lo, hi float64, f func(float64) string) string {
	a, b := f(lo), f(hi)
	if a == b {
		return a
	}
	return a + " to " + b
}

// cell formats one side of a row.
func cell(v Value, unit string) string {
	if !v.Known {
		return "unknown"
	}
	s := number(v.Center, unit)
	if iv := interval(v); iv != "" {
		s += " " + iv
	}
	return s
}

// verdictCell says whether a row changed, and how that was decided.
func verdictCell(r Row, opts Options) string {
	switch {
	case !r.Old.Known || !r.New.Known:
		return ""
	case r.Deterministic && r.Exact:
		if r.Significant {
			return "changed (exact counts)"
		}
		return "same (exact counts)"
	case r.Deterministic:
		why := ""
		if r.Inexact != "" {
			why = ": " + r.Inexact
		}
		if r.Significant {
			return fmt.Sprintf("changed (beyond ±%s%s)", unit.Relative(opts.Tolerance), why)
		}
		return fmt.Sprintf("same (within ±%s%s)", unit.Relative(opts.Tolerance), why)
	case r.Test == nil:
		return "? (" + r.NoTest + ")"
	}
	how := ""
	if r.FromIntervals {
		how = ", from intervals"
	}
	if r.Significant {
		return fmt.Sprintf("%s n=%d+%d%s", unit.PValue(r.Test.P), r.Test.N1, r.Test.N2, how)
	}
	return fmt.Sprintf("~ (%s n=%d+%d%s)", unit.PValue(r.Test.P), r.Test.N1, r.Test.N2, how)
}

// testName names the test of timed rows for footers.
func testName(opts Options) string {
	if opts.Test == stats.TestMannWhitney {
		return "Mann-Whitney U test on the per-repetition samples (Welch's t where only summaries were kept)"
	}
	return "Welch's t test on the per-repetition samples (on the summaries where only means and intervals were kept)"
}

// benchName turns a label into a Go benchmark name part: no spaces, which
// end the name in the benchmark format.
func benchName(label string) string {
	if label == "" {
		return "point"
	}
	return strings.Map(func(r rune) rune {
		if r == ' ' || r == '\t' || r == '\n' {
			return '_'
		}
		return r
	}, label)
}
