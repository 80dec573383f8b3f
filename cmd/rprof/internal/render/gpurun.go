package render

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/rprof/rprof/internal/unit"
	"github.com/rprof/rprof/roofline"
)

// WriteGPUKernels is rprof run --gpu's table, the kernels that took the
// most GPU time first (as profilers' kernel summaries): each kernel's
// device, launches, summed GPU time, its share of all kernels' time, its
// mean per launch and the device's clocks; where CUPTI's range profiler
// counted W and Q for some kernel, its rates, intensity and placement as
// rprof import ncu shows them ("-" for the kernels with times only); then
// the flags of the points (each once) with their levels.
func WriteGPUKernels(w io.Writer, points []roofline.Point, wall time.Duration) {
	points = slices.Clone(points)
	slices.SortStableFunc(points, func(a, b roofline.Point) int { return cmp.Compare(b.Seconds, a.Seconds) })
	total := 0.0
	for _, p := range points {
		total += p.Seconds
	}
	counted := slices.ContainsFunc(points, func(p roofline.Point) bool { return p.WorkFlops != nil })
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := "kernel\tdevice\tlaunches\tGPU time\tshare\tper launch\tSM clock"
	if counted {
		head += "\t" + kernelRatesHead
	}
	fmt.Fprintln(tw, head)
	for _, p := range points {
		g := p.GPU
		dev := fmt.Sprint(g.Device)
		if g.DeviceName != "" {
			dev += " (" + g.DeviceName + ")"
		}
		clock := "-"
		if g.SMClockMHz > 0 {
			clock = fmt.Sprintf("%.0f MHz", g.SMClockMHz)
			if g.ClockSource == roofline.ClockSourceAttribute {
				clock += " (peak)"
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s", p.Label, dev, g.Launches, unit.SI(p.Seconds, "s"),
			unit.RoundPercent(p.Seconds/total), unit.SI(p.Seconds/float64(g.Launches), "s"), clock)
		if counted && p.WorkFlops != nil {
			fmt.Fprint(tw, "\t"+kernelRates(p))
		} else if counted {
			fmt.Fprint(tw, "\t-\t-\t-\ttimes only\t-")
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	fmt.Fprintf(w, "%d kernels, %s of GPU time in %s of wall time\n", len(points), unit.SI(total, "s"), unit.SI(wall.Seconds(), "s"))
	seen := map[string]bool{}
	for _, p := range points {
		for _, f := range p.Flags {
			if !seen[f.Code+f.Message] {
				seen[f.Code+f.Message] = true
				fmt.Fprintf(w, "%s (%s): %s\n", f.Code, f.Severity(), f.Message)
			}
		}
	}
}
