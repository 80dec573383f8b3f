package gate

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/rprof/rprof/internal/unit"
)

// WriteText writes the comparison as benchstat-style tables, one per label,
// with the tests used and the context differences as notes.
func WriteText(w io.Writer, c *Comparison) error {
	ew := &errWriter{w: w}
	for i := range c.Pairs {
		if i > 0 {
			fmt.Fprintln(ew)
		}
		writePairText(ew, &c.Pairs[i], c.Options, true)
	}
	fmt.Fprintln(ew)
	writeFooter(ew, c.Options)
	return ew.err
}

// WriteVerdictText writes the gate's decision: the comparison table, each
// check and the result.
func WriteVerdictText(w io.Writer, v *Verdict) error {
	ew := &errWriter{w: w}
	writePairText(ew, &v.Pair, v.Options, false) // the notes hold the context
	fmt.Fprintln(ew)
	fmt.Fprintln(ew, "checks:")
	tw := tabwriter.NewWriter(ew, 0, 4, 2, ' ', 0)
	for _, c := range v.Checks {
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", c.Outcome, c.Name, c.Detail)
	}
	tw.Flush()
	if len(v.Notes) > 0 {
		fmt.Fprintln(ew, "notes:")
		for _, n := range v.Notes {
			fmt.Fprintf(ew, "  %s\n", n)
		}
	}
	fmt.Fprintf(ew, "result: %s\n\n", v.Reason)
	writeFooter(ew, v.Options)
	return ew.err
}

func writePairText(w io.Writer, p *Pair, opts Options, context bool) {
	fmt.Fprintf(w, "%s\n", p.Label)
	if !p.anyKnown() {
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  metric\told\tnew\tchange\ttest")
	for _, r := range p.Rows {
		if !r.Old.Known && !r.New.Known {
			continue // the checks say what could not be compared
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", r.Metric, cell(r.Old, r.Unit), cell(r.New, r.Unit), unit.Change(r.Change), verdictCell(r, opts))
	}
	tw.Flush()
	if context && len(p.Context)+len(p.Flags) > 0 {
		fmt.Fprintln(w, "  notes:")
		for _, c := range p.Context {
			fmt.Fprintf(w, "    %s\n", c)
		}
		for _, f := range p.Flags {
			fmt.Fprintf(w, "    %s\n", f)
		}
	}
}

func writeFooter(w io.Writer, opts Options) {
	fmt.Fprintf(w, "time, GFLOP/s, fraction: %s, significant at p < %g; ± is the relative half-width of the point's own confidence interval.\n", testName(opts), opts.Alpha)
	fmt.Fprintf(w, "W, Q, intensity: counted figures, marked same or changed in the table against a relative tolerance of ±%s (none where exact: W between two emulated points; Q and intensity too when both emulated runs had one thread per process); a gate's checks use their own limits.\n", unit.Relative(opts.Tolerance))
}

// errWriter keeps the first write error, so renderers check it once.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}
