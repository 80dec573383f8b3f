package gate

import (
	"fmt"
	"io"
	"strings"

	"github.com/rprof/rprof/internal/unit"
)

// WriteMarkdown writes the gate's decision as a Markdown section, for a CI
// job summary.
func WriteMarkdown(w io.Writer, v *Verdict) error {
	ew := &errWriter{w: w}
	fmt.Fprintf(ew, "### rprof gate: %s for `%s`\n\n", v.Outcome, v.Label)
	fmt.Fprintf(ew, "%s\n\n", mdEscape(v.Reason))
	writePairMarkdown(ew, &v.Pair, "baseline", v.Options)
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
	writeMarkdownFooter(ew, v.Options)
	return ew.err
}

// WriteComparisonMarkdown writes a comparison as Markdown tables, one per
// label, for a pull-request comment or a job summary.
func WriteComparisonMarkdown(w io.Writer, c *Comparison) error {
	ew := &errWriter{w: w}
	for i := range c.Pairs {
		p := &c.Pairs[i]
		fmt.Fprintf(ew, "### `%s`\n\n", p.Label)
		writePairMarkdown(ew, p, "old", c.Options)
		for _, n := range append(append([]string(nil), p.Context...), p.Flags...) {
			fmt.Fprintf(ew, "- %s\n", mdEscape(n))
		}
		if len(p.Context)+len(p.Flags) > 0 {
			fmt.Fprintln(ew)
		}
	}
	writeMarkdownFooter(ew, c.Options)
	return ew.err
}

func writePairMarkdown(w io.Writer, p *Pair, oldName string, opts Options) {
	if !p.anyKnown() {
		return
	}
	fmt.Fprintf(w, "| metric | %s | new | change | test |\n", oldName)
	fmt.Fprintln(w, "|---|---:|---:|---:|---|")
	for _, r := range p.Rows {
		if !r.Old.Known && !r.New.Known {
			continue
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", r.Metric, mdEscape(cell(r.Old, r.Unit)), mdEscape(cell(r.New, r.Unit)), unit.Change(r.Change), mdEscape(verdictCell(r, opts)))
	}
	fmt.Fprintln(w)
}

func writeMarkdownFooter(w io.Writer, opts Options) {
	fmt.Fprintf(w, "Timed figures: %s, significant at p < %g. W, Q, intensity: relative tolerance ±%s.\n\n", testName(opts), opts.Alpha, unit.Relative(opts.Tolerance))
}

// mdEscape keeps table cells whole: a pipe would split the cell.
func mdEscape(s string) string {
	return strings.ReplaceAll(s, "|", `\|`)
}
