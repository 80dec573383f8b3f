package render

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/rprof/rprof/internal/unit"
	"github.com/rprof/rprof/roofline"
)

// WriteImportTable is rprof import's table: each kernel placed, then
// those that could not be.
func WriteImportTable(w io.Writer, points []roofline.Point, unplaced []string) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "kernel\tlaunches\ttime\t"+kernelRatesHead+"\tSM clock")
	for _, p := range points {
		clock := "-"
		if p.GPU.SMClockMHz > 0 {
			clock = fmt.Sprintf("%.0f MHz", p.GPU.SMClockMHz)
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\n", p.Label, p.GPU.Launches, unit.SI(p.Seconds, "s"), kernelRates(p), clock)
	}
	tw.Flush()
	for _, u := range unplaced {
		fmt.Fprintf(w, "not placed: %s\n", u)
	}
}

// kernelRatesHead heads kernelRates' columns.
const kernelRatesHead = "GFLOP/s\tFLOP/byte (DRAM)\tGB/s\tbound\tof attainable"

// kernelRates are a counted GPU kernel's rates, intensity and placement,
// tab-separated.
func kernelRates(p roofline.Point) string {
	bound, frac := "not placed (no GPU roofs)", "-"
	if p.Bound != nil {
		bound, frac = p.Bound.String(), unit.RoundPercent(*p.FractionOfAttainable)
	}
	return strings.Join([]string{OrUnknownDash(p.GFlops), OrUnknownDash(p.Intensity), OrUnknownDash(p.GBytesPerS), bound, frac}, "\t")
}
