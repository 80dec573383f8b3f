package render

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/rprof/rprof/internal/unit"
	"github.com/rprof/rprof/roofline"
)

// WriteImportTable is rprof import's table: each kernel placed, then
// those that could not be.
func WriteImportTable(w io.Writer, points []roofline.Point, unplaced []string) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "kernel\tlaunches\ttime\tGFLOP/s\tFLOP/byte (DRAM)\tGB/s\tbound\tof attainable\tSM clock")
	for _, p := range points {
		bound, frac := "not placed (no GPU roofs)", "-"
		if p.Bound != nil {
			bound, frac = p.Bound.String(), unit.RoundPercent(*p.FractionOfAttainable)
		}
		clock := "-"
		if p.GPU.SMClockMHz > 0 {
			clock = fmt.Sprintf("%.0f MHz", p.GPU.SMClockMHz)
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", p.Label, p.GPU.Launches, unit.SI(p.Seconds, "s"),
			OrUnknownDash(p.GFlops), OrUnknownDash(p.Intensity), OrUnknownDash(p.GBytesPerS), bound, frac, clock)
	}
	tw.Flush()
	for _, u := range unplaced {
		fmt.Fprintf(w, "not placed: %s\n", u)
	}
}
