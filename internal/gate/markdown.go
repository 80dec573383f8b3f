package gate

import (
	"fmt"
	"io"
	"strings"
)

// WriteMarkdown writes the gate's decision as a Markdown section, for a CI
// job summary.
func WriteMarkdown(w io.Writer, v *Verdict) error {
	ew := &errWriter{w: w}
	fmt.Fprintf(ew, "### rprof gate: %s for `%s`\n\n", v.Outcome, v.Label)
	fmt.Fprintf(ew, "%s\n\n", mdEscape(v.Reason))
	if v.Pair.anyKnown() {
		fmt.Fprintln(ew, "| metric | baseline | new | change | test |")
		fmt.Fprintln(ew, "|---|---:|---:|---:|---|")
		for _, r := range v.Pair.Rows {
			if !r.Old.Known && !r.New.Known {
				continue
			}
			fmt.Fprintf(ew, "| %s | %s | %s | %s | %s |\n", r.Metric, mdEscape(cell(r.Old, r.Unit)), mdEscape(cell(r.New, r.Unit)), signedPct(r.Change), mdEscape(verdictCell(r, v.Options)))
		}
		fmt.Fprintln(ew)
	}
	fmt.Fprintln(ew, "| check | result | detail |")
	fmt.Fprintln(ew, "|---|---|---|")
	for _, c := range v.Checks {
		fmt.Fprintf(ew, "| %s | %s | %s |\n", c.Name, c.Outcome, mdEscape(c.Detail))
	}
	if len(v.Notes) > 0 {
		fmt.Fprintln(ew)
		for _, n := range v.Notes {
			fmt.Fprintf(ew, "- %s\n", mdEscape(n))
		}
	}
	fmt.Fprintln(ew)
	fmt.Fprintf(ew, "Timed figures: %s, significant at p < %g. W, Q, intensity: relative tolerance ±%s.\n\n", testName(v.Options), v.Options.Alpha, pct(v.Options.Tolerance))
	return ew.err
}

// mdEscape keeps table cells whole: a pipe would split the cell.
func mdEscape(s string) string {
	return strings.ReplaceAll(s, "|", `\|`)
}
