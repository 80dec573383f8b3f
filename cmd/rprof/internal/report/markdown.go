package report

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/rprof/rprof/cmd/rprof/internal/chart"
)

// Markdown writes the report as GitHub-flavoured Markdown, fit for a CI job
// summary: text charts (one per thread scope) in code blocks, the roofs and points tables, and
// the raw events folded in a details block.
func Markdown(w io.Writer, in Input) (notes []string, err error) {
	v, err := buildView(in)
	if err != nil {
		return nil, err
	}
	var charts []string
	chartNotes, err := renderCharts(in, v.Threads, func(g scopeGroup, opts chart.Options) ([]string, error) {
		var text bytes.Buffer
		notes, err := chart.WriteText(&text, in.Roofs, g.points, opts)
		if err != nil {
			return nil, fmt.Errorf("draw text chart: %w", err)
		}
		charts = append(charts, text.String())
		return notes, nil
	})
	if err != nil {
		return nil, err
	}
	v.Notes = append(chartNotes, v.Notes...)
	b := bufio.NewWriter(w)
	v.markdown(b, charts)
	if err := b.Flush(); err != nil {
		return nil, fmt.Errorf("write Markdown report: %w", err)
	}
	return v.Notes, nil
}

func (v *view) markdown(w io.Writer, textCharts []string) {
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	p("## %s\n\n", mdEscape(v.Title))
	if v.NoRoofs {
		p("No roofs document: points only. ")
	} else {
		p("Roofs: `%s`", strings.ReplaceAll(v.RoofsFile, "`", "'"))
		if v.RoofsDate != "" {
			p(", measured %s", v.RoofsDate)
		}
		p(". ")
	}
	p("Each point is charted and placed under the roofs of its own thread scope when they were measured, else under the %d-thread roofs.\n\n", v.Threads)
	for _, c := range textCharts {
		// Four backticks, so a label holding three cannot end the block.
		p("````text\n%s````\n\n", c)
	}
	if len(v.Notes) > 0 {
		p("Notes:\n\n")
		for _, n := range v.Notes {
			p("- %s\n", mdEscape(n))
		}
		p("\n")
	}

	p("### Machine\n\n")
	table(w, []string{"", ""}, func(row func(...string)) {
		for _, m := range v.Machine {
			row(m.Key, m.Value)
		}
	})

	p("### Roofs\n\n")
	if v.NoRoofs {
		p("No roofs document was given: run `rprof roofs` or pass `--roofs FILE`.\n\n")
	} else {
		if len(v.Compute) > 0 {
			table(w, []string{"compute roof", "ISA", "precision", "threads", "GFLOP/s", v.RoofCI, "theoretical", "% of theoretical"}, func(row func(...string)) {
				for _, c := range v.Compute {
					row(c.Name, c.ISA, c.Precision, c.Threads, c.GFlops, c.CI, c.Theoretical, c.OfTheoretical)
				}
			})
		} else {
			p("No compute roofs were measured.\n\n")
		}
		if len(v.Bandwidth) > 0 {
			table(w, []string{"level", "kernel", "threads", "GB/s", v.RoofCI, "working set"}, func(row func(...string)) {
				for _, b := range v.Bandwidth {
					row(b.Level, b.Kernel, b.Threads, b.GBytesPerS, b.CI, b.WorkingSet)
				}
			})
		} else {
			p("No bandwidth roofs were measured: points cannot be classified as memory- or compute-bound.\n\n")
		}
		if v.Tuning != "" {
			p("Autotuning: %s.\n\n", mdEscape(v.Tuning))
		}
		for _, f := range v.RoofFlags {
			p("- **%s** (%s): %s\n", mdEscape(f.Code), f.Severity(), mdEscape(f.Message))
		}
		if len(v.RoofFlags) > 0 {
			p("\n")
		}
	}

	p("### Points\n\n")
	if len(v.Points) == 0 {
		p("No points were given.\n")
		return
	}
	table(w, []string{"point", "source", "threads", "W (GFLOP)", "Q (GB)", "T (s) [" + v.PointCI + "]", "intensity (FLOP/B)", "GFLOP/s [" + v.PointCI + "]", "bound", "attainable (GFLOP/s)", "of attainable", "flags"}, func(row func(...string)) {
		for _, pt := range v.Points {
			var flags []string
			for _, f := range pt.Flags {
				flags = append(flags, fmt.Sprintf("%s [%d]", f.Code, f.N))
			}
			row(pt.Label, pt.Source, pt.Threads, pt.Work, pt.Traffic, pt.Seconds, pt.Intensity, pt.GFlops, pt.Bound, pt.Attainable, pt.Fraction, strings.Join(flags, ", "))
		}
	})
	for _, f := range v.Footnotes {
		p("%d. %s: **%s** (%s): %s\n", f.N, mdEscape(f.Point), mdEscape(f.Code), f.Level, mdEscape(f.Message))
	}
	if len(v.Footnotes) > 0 {
		p("\n")
	}

	p("<details><summary>Raw events</summary>\n\n")
	for _, pt := range v.Points {
		p("#### %s\n\n", mdEscape(pt.Label))
		p("Command: `%s`; exit status %s", strings.ReplaceAll(pt.Command, "`", "'"), pt.Exit)
		if pt.Samples != "" {
			p("; wall time samples: %s", pt.Samples)
		}
		if pt.Overhead != "" {
			p("; overhead subtracted: %s", mdEscape(pt.Overhead))
		}
		p(".\n\n")
		if len(pt.Events) == 0 {
			p("No counter readings (%s point).\n\n", pt.Source)
			continue
		}
		table(w, []string{"event", "PMU", "value (scaled)", "raw", "running", "unit"}, func(row func(...string)) {
			for _, e := range pt.Events {
				row(e.Name, e.PMU, e.Value, e.Raw, e.Running, e.Unit)
			}
		})
	}
	p("</details>\n")
}

// table writes a Markdown table of plain-text cells; header cells may be
// empty.
func table(w io.Writer, header []string, rows func(row func(...string))) {
	line := func(cells ...string) {
		for i := range cells {
			cells[i] = mdEscape(cells[i])
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
	}
	line(header...)
	sep := make([]string, len(header))
	for i := range sep {
		sep[i] = "---"
	}
	fmt.Fprintf(w, "|%s|\n", strings.Join(sep, "|"))
	rows(line)
	fmt.Fprintln(w)
}

// mdEscape keeps text from being read as Markdown or HTML markup.
func mdEscape(s string) string {
	return strings.NewReplacer("*", `\*`, "_", `\_`, "`", "\\`", "&", "&amp;", "<", "&lt;", ">", "&gt;", "|", `\|`).Replace(s)
}
