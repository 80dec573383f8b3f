package gate

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/rprof/rprof/internal/stats"
)

// pct formats a relative magnitude: 0.05 → "5%", 0.0312 → "3.12%".
func pct(x float64) string {
	if math.IsInf(x, 1) {
		return "off"
	}
	return strconv.FormatFloat(x*100, 'g', 3, 64) + "%"
}

// signedPct formats a relative change with its sign: "+3.12%", "-4%".
// Changes below a millionth are rounding of equal figures and show as +0%.
func signedPct(x float64) string {
	if math.IsNaN(x) {
		return "?"
	}
	if math.Abs(x) < 1e-6 {
		x = 0
	}
	if x >= 10 {
		// Past +1000%, a factor reads better.
		if 1+x >= 1000 {
			return "×" + strconv.FormatFloat(1+x, 'f', 0, 64)
		}
		return "×" + strconv.FormatFloat(1+x, 'g', 3, 64)
	}
	if x >= 0 {
		return "+" + pct(x)
	}
	return "-" + pct(-x)
}

// percent formats a fraction of attainable: 0.6213 → "62.1%".
func percent(x float64) string {
	return fmt.Sprintf("%.1f%%", x*100)
}

// pField formats a p-value as "p=0.031" or "p<0.001".
func pField(p float64) string {
	if p < 0.001 {
		return "p<0.001"
	}
	return "p=" + strconv.FormatFloat(p, 'f', 3, 64)
}

var siPrefixes = []struct {
	scale  float64
	prefix string
}{
	{1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}, {1, ""}, {1e-3, "m"}, {1e-6, "µ"}, {1e-9, "n"},
}

// number formats v in unit with an SI prefix and four significant digits.
// Ratios (FLOP/B), GFLOP/s and unitless fractions are not rescaled.
func number(v float64, unit string) string {
	switch unit {
	case "":
		return percent(v)
	case "FLOP/B", "GFLOP/s":
		return strconv.FormatFloat(v, 'g', 4, 64) + " " + unit
	}
	a := math.Abs(v)
	for _, p := range siPrefixes {
		if a >= p.scale || p.prefix == "n" {
			return strconv.FormatFloat(v/p.scale, 'f', digitsAfter(v/p.scale), 64) + " " + p.prefix + unit
		}
	}
	return strconv.FormatFloat(v, 'g', 4, 64) + " " + unit
}

// digitsAfter keeps four significant digits for a value in [1, 1000).
func digitsAfter(v float64) int {
	a := math.Abs(v)
	switch {
	case a >= 100:
		return 1
	case a >= 10:
		return 2
	}
	return 3
}

// interval formats "± x%" for a value with an interval, "" without.
func interval(v Value) string {
	if math.IsNaN(v.Lo) || math.IsNaN(v.Hi) || v.Center == 0 {
		return ""
	}
	half := math.Max(v.Center-v.Lo, v.Hi-v.Center) / math.Abs(v.Center)
	return "± " + pct(half)
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
	case r.Deterministic:
		if r.Significant {
			return fmt.Sprintf("changed (beyond ±%s)", pct(opts.Tolerance))
		}
		return fmt.Sprintf("same (within ±%s)", pct(opts.Tolerance))
	case r.Test == nil:
		return "? (" + r.NoTest + ")"
	}
	how := ""
	if r.FromIntervals {
		how = ", from intervals"
	}
	if r.Significant {
		return fmt.Sprintf("%s n=%d+%d%s", pField(r.Test.P), r.Test.N1, r.Test.N2, how)
	}
	return fmt.Sprintf("~ (%s n=%d+%d%s)", pField(r.Test.P), r.Test.N1, r.Test.N2, how)
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
