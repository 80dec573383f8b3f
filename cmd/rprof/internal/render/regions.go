package render

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/rprof/rprof/roofline"

	"github.com/rprof/rprof/internal/unit"
)

// WriteRegions prints the regions of a point as a table: per region its
// calls, times and counted figures, then each region's flags.
func WriteRegions(out io.Writer, p *roofline.Point) {
	if len(p.Regions) == 0 {
		return
	}
	cost := ""
	for _, r := range p.Regions {
		if r.ProbeCostSeconds > 0 {
			cost = "; the probes' time inside each call is subtracted (see probe cost)"
			break
		}
	}
	fmt.Fprintf(out, " Regions (last run; times inclusive, self = outside nested regions%s):\n\n", cost)
	var events []string
	for _, r := range p.Regions {
		for _, ev := range r.Events {
			if !slices.Contains(events, ev.Name) {
				events = append(events, ev.Name)
			}
		}
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := []string{"region", "calls", "total s", "self s", "mean", "median", "p99", "probe cost", "GFLOP/s"}
	head = append(head, events...)
	fmt.Fprintf(tw, "  %s\t\n", strings.Join(head, "\t"))
	for _, r := range p.Regions {
		mark := ""
		if len(r.Flags) > 0 {
			mark = " *"
		}
		row := []string{r.Name + mark, unit.Count(float64(r.Calls)), fmt.Sprintf("%.6f", r.Seconds), fmt.Sprintf("%.6f", r.SelfSeconds)}
		if r.Calls > 0 {
			row = append(row, fmtDuration(r.MeanSeconds), fmtDuration(r.MedianSeconds), fmtDuration(r.P99Seconds))
		} else {
			row = append(row, "-", "-", "-")
		}
		pc := "-"
		if r.ProbeCostSeconds > 0 {
			pc = fmtDuration(r.ProbeCostSeconds) + " " + r.ProbeFirst
		}
		row = append(row, pc, OrUnknown(r.GFlops, unit.Value))
		for _, name := range events {
			v := "-"
			for _, ev := range r.Events {
				if ev.Name == name {
					v = unit.Count(ev.Value)
				}
			}
			row = append(row, v)
		}
		fmt.Fprintf(tw, "  %s\t\n", strings.Join(row, "\t"))
	}
	tw.Flush()
	first := true
	for _, r := range p.Regions {
		for _, f := range r.Flags {
			if first {
				fmt.Fprintln(out)
				first = false
			}
			fmt.Fprintf(out, "  * %s: %s (%s): %s\n", r.Name, f.Code, f.Severity(), f.Message)
		}
	}
	fmt.Fprintln(out)
}

// fmtDuration prints seconds in the unit that keeps three significant
// digits readable.
func fmtDuration(s float64) string {
	switch {
	case s >= 1:
		return unit.Value(s) + " s"
	case s >= 1e-3:
		return unit.Value(s*1e3) + " ms"
	case s >= 1e-6:
		return unit.Value(s*1e6) + " µs"
	}
	return unit.Value(s*1e9) + " ns"
}
