package render

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/rprof/rprof/internal/stats"
	"github.com/rprof/rprof/internal/unit"
	"github.com/rprof/rprof/roofline"
	"github.com/rprof/rprof/roofs"
)

// WriteRoofsTable prints the roofs with their intervals, their share of
// the theoretical peak and why their evaluations stopped.
func WriteRoofsTable(w io.Writer, rep *roofs.Report) {
	r := rep.Roofs
	fmt.Fprintf(w, "roofs of %s (%s, %d cores), measured in %.1f s%s: %d configurations, %d iterations; %s\n",
		r.Machine.CPU.ModelName, r.Machine.CPU.MicroarchWords(), r.Machine.Cores, r.Tuning.Seconds, partsLine(r.Tuning.PartSeconds),
		r.Tuning.Configurations, r.Tuning.Evaluations, methodLine(stats.Method(r.Tuning.Method)))
	fmt.Fprint(w, stepsLine(r.Tuning.Steps))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "roof\tthreads\tvalue\t%s interval\tof theory\tconfiguration\tstops\n", confidenceWords)
	for i, c := range r.Compute {
		d := rep.Details.Compute[i]
		theory := "-"
		if c.TheoreticalGFlops > 0 {
			theory = unit.RoundPercent(c.GFlops/c.TheoreticalGFlops) + " of " + unit.Sig(c.TheoreticalGFlops)
		}
		fmt.Fprintf(tw, "%s\t%d\t%.4g GFLOP/s\t%s\t%s\t%s\t%s\n", c.Name, c.Threads, c.GFlops, Interval(c.CI, c.IntervalUnknown), theory, d.Config, reasons(d.Reasons))
	}
	if g, d := r.DGEMM, rep.Details.DGEMM; g != nil && d != nil {
		fmt.Fprintf(tw, "dgemm\t%d\t%.4g GFLOP/s\t%s\t-\t%s\t%s\n", g.Threads, g.GFlops, Interval(g.CI, g.IntervalUnknown), d.Config, reasons(d.Reasons))
	}
	for i, b := range r.Bandwidth {
		d := rep.Details.Bandwidth[i]
		fmt.Fprintf(tw, "%s\t%d\t%.4g GB/s\t%s\t-\t%s\t%s\n", levelLabel(b, r.Caches), b.Threads, b.GBytesPerS, Interval(b.CI, b.IntervalUnknown), d.Config, reasons(d.Reasons))
	}
	tw.Flush()
	for _, s := range rep.Skipped {
		fmt.Fprintf(w, "%s skipped: %s\n", s.Harness, s.Why)
	}
	if g := r.DGEMM; g != nil {
		fmt.Fprintf(w, "dgemm: %s %s (%s kernels, %s), measured on the widest thread scope only (threads: %d; --threads for another)\n",
			g.Library, orDash(g.Version), orDash(g.CoreName), rep.DGEMMPath, g.Threads)
		for _, f := range g.Flags {
			fmt.Fprintf(w, "note (%s): %s\n", f.Code, f.Message)
		}
	}
	for _, c := range r.Compute {
		if l := c.Library; l != nil {
			layout := ""
			if l.Layout != "" {
				layout = " in " + l.Layout
			}
			fmt.Fprintf(w, "%s: %s %s (%s runtime, library threads %d): %s %s%s, %s FLOP per call\n",
				c.Name, l.Name, l.Version, orDash(l.Runtime), l.LibraryThreads, l.Primitive, l.Problem, layout, unit.Count(l.WorkFlops))
			for _, f := range l.Flags {
				fmt.Fprintf(w, "note (%s): %s\n", f.Code, f.Message)
			}
		}
	}
	for _, f := range r.Flags {
		if f.Code == roofline.FlagDGEMMSkipped {
			continue // said above
		}
		fmt.Fprintf(w, "note (%s): %s\n", f.Code, f.Message)
	}
}

// confidenceWords is the level of the roofs' intervals, "99%".
var confidenceWords = unit.RoundPercent(roofs.Confidence)

// Interval is a roof's interval in the table, or its samples'
// range when they were too few for one.
func Interval(ci roofline.Interval, unknown bool) string {
	if unknown {
		return roofline.UnknownUncertainty(ci)
	}
	return fmt.Sprintf("[%.4g, %.4g]", ci.Lo, ci.Hi)
}

// levelLabel names a bandwidth roof's level with its effective size and
// where that came from, "L3 (136 MiB measured; declared 480 MiB)"; DRAM
// and levels without a size are their name alone.
func levelLabel(b roofline.BandwidthRoof, caches []roofline.CacheLevel) string {
	i := slices.IndexFunc(caches, func(c roofline.CacheLevel) bool { return c.Level == b.Level && c.Threads == b.Threads })
	if i < 0 {
		return b.Level
	}
	c := caches[i]
	s := fmt.Sprintf("%s (%s %s", c.Level, unit.Bytes(c.Bytes), c.Source)
	if c.DeclaredBytes > 0 && c.DeclaredBytes != c.Bytes {
		s += fmt.Sprintf("; declared %s", unit.Bytes(c.DeclaredBytes))
	}
	return s + ")"
}

func methodLine(m stats.Method) string {
	switch m {
	case stats.MethodMean:
		return "means with Student-t (normal from 30 samples) " + confidenceWords + " intervals"
	case stats.MethodBootstrap:
		return "medians with bootstrap " + confidenceWords + " intervals"
	}
	return "medians with order-statistic " + confidenceWords + " intervals"
}

func reasons(m map[stats.StopReason]int) string {
	if len(m) == 0 {
		return ""
	}
	var parts []string
	for _, r := range []stats.StopReason{stats.StopConverged, stats.StopBelowBest, stats.StopMaxCount, stats.StopMaxTime} {
		if m[r] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", r, m[r]))
		}
	}
	return strings.Join(parts, ", ")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// stepsLine is "time: setup 1.1 s; compute: 1 thread, 6 kernels 4.0 s,
// ...; dgemm: ...": where the run's time went, part by part, in the order
// the steps ran; "" without steps.
func stepsLine(steps []roofline.Step) string {
	var parts []string
	var cur string
	for i, st := range steps {
		item := fmt.Sprintf("%s %.1f s", st.Name, st.Seconds)
		if i == 0 || st.Part != steps[i-1].Part {
			if cur != "" {
				parts = append(parts, cur)
			}
			cur = st.Part + ": " + item
			continue
		}
		cur += ", " + item
	}
	if cur == "" {
		return ""
	}
	return "time: " + strings.Join(append(parts, cur), "; ") + "\n"
}

// partsLine is " (compute 4.1 s, bandwidth 17.9 s, dgemm 15.8 s)", with
// the parts that ran.
func partsLine(parts map[string]float64) string {
	var ps []string
	for _, name := range []string{"compute", "bandwidth", "dgemm", "dnn"} {
		if s, ok := parts[name]; ok {
			ps = append(ps, fmt.Sprintf("%s %.1f s", name, s))
		}
	}
	if len(ps) == 0 {
		return ""
	}
	return " (" + strings.Join(ps, ", ") + ")"
}
