package render

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/rprof/rprof/cluster"
	"github.com/rprof/rprof/dnnbench"
	"github.com/rprof/rprof/gpu"
	"github.com/rprof/rprof/internal/unit"
	"github.com/rprof/rprof/roofline"
)

// WriteBenchTable prints dnn bench's results, one row per problem, with
// their points under the roofs when there are roofs.
func WriteBenchTable(w io.Writer, v dnnbench.Version, bind dnnbench.Binding, results []dnnbench.Result, points []roofline.Point, roofs *roofline.Roofs) {
	caches := "warm caches"
	if results[0].Cold {
		caches = "cold caches"
	}
	fmt.Fprintf(w, "\n oneDNN %s (%s, %d threads %s), %s; time per execution: median of the samples and its interval, and the fastest sample (a busy machine slows the median first)\n", v, v.CPURuntime, results[0].Threads, bind.Describe(v), caches)
	if roofs == nil {
		fmt.Fprintln(w, " no roofs document: run 'rprof roofs' for the share of peak and the roof reached")
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "ms\t±\tn\tbest ms\tW FLOP\tQ B\tFLOP/B\tGFLOP/s\t% fp32 peak\tbest\t% roof\tbound\t implementation  problem")
	// Every figure of a row but "best" is the point's: one statistic.
	for i, r := range results {
		p := points[i]
		pm := ""
		if ci := p.CI.Seconds; ci.Hi > ci.Lo {
			pm, _ = unit.HalfWidthPercent(p.Seconds, ci.Lo, ci.Hi)
		}
		minSecs := r.Seconds.Estimate.Min
		gf, peak, best, frac, bound := "-", "", "", "", ""
		if p.GFlops != nil {
			gf = unit.Value(*p.GFlops)
			if roofs != nil {
				if c, ok := roofs.PeakCompute(p.Threads, roofline.Single); ok && c.GFlops > 0 {
					peak = fmt.Sprintf("%.1f", 100**p.GFlops/c.GFlops)
					best = fmt.Sprintf("%.1f", 100**p.WorkFlops/minSecs/1e9/c.GFlops)
				}
			}
		}
		if p.FractionOfAttainable != nil {
			frac, bound = fmt.Sprintf("%.1f", 100**p.FractionOfAttainable), p.Bound.String()
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t %s  %s\n", unit.Value(p.Seconds*1e3), pm, p.CI.N, unit.Value(minSecs*1e3),
			OrUnknown(r.Model.WorkFlops, unit.Count), OrUnknown(r.Model.TrafficBytes, unit.Count), OrUnknownDash(p.Intensity),
			gf, peak, best, frac, bound, r.Implementation, r.Problem)
	}
	tw.Flush()
	var notes []string
	for _, p := range points {
		for _, f := range p.Flags {
			if f.Code == roofline.FlagAnalytic {
				continue
			}
			n := f.Code + ": " + f.Message
			if !slices.Contains(notes, n) {
				notes = append(notes, n)
			}
		}
	}
	if len(notes) > 0 {
		fmt.Fprintln(w)
		for _, n := range notes {
			fmt.Fprintf(w, "  - %s\n", n)
		}
	}
	fmt.Fprintln(w)
}

// WriteGPUTable shows a GPU's roofs as the CPU's table does.
func WriteGPUTable(w io.Writer, g *roofline.GPURoofs, took time.Duration) {
	d := g.Device
	fmt.Fprintf(w, "GPU %d: %s (compute capability %s, %d SMs, %s memory; driver %s), measured in %.1f s\n",
		d.Index, d.Name, d.ComputeCapability, d.SMs, unit.Bytes(d.MemoryBytes), d.Driver, took.Seconds())
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "roof\tvalue\t%s interval\tof theory\tconfiguration\tclocks (MHz)\n", unit.RoundPercent(gpu.Confidence))
	for _, c := range g.Compute {
		fmt.Fprintf(tw, "%s\t%.4g GFLOP/s\t%s\t%s\t%s, %dx%d\t%s\n", c.Name, c.GFlops, Interval(c.CI, c.IntervalUnknown),
			ofTheory(c.GFlops, c.TheoreticalGFlops), c.Kernel, c.Launch.Blocks, c.Launch.Threads, clocksLine(c.Clocks))
	}
	for _, m := range g.Memory {
		fmt.Fprintf(tw, "%s\t%.4g GB/s\t%s\t%s\t%s over %s, %dx%d\t%s\n", m.Level, m.GBytesPerS, Interval(m.CI, m.IntervalUnknown),
			ofTheory(m.GBytesPerS, m.TheoreticalGBytesPerS), m.Kernel, unit.Bytes(m.WorkingSetBytes), m.Launch.Blocks, m.Launch.Threads, clocksLine(m.Clocks))
	}
	tw.Flush()
	if len(g.Ladder) > 0 {
		var steps []string
		for _, s := range g.Ladder {
			steps = append(steps, fmt.Sprintf("%s: %s", unit.Value(s.FlopsPerByte), unit.Value(s.GFlops)))
		}
		fmt.Fprintf(w, "ladder (FLOP/byte: GFLOP/s): %s\n", strings.Join(steps, ", "))
	}
	for _, f := range g.Flags {
		fmt.Fprintf(w, "%s: %s\n", f.Code, f.Message)
	}
}

func ofTheory(v, peak float64) string {
	if peak <= 0 {
		return "-"
	}
	return unit.RoundPercent(v/peak) + " of " + unit.Sig(peak)
}

func clocksLine(c roofline.GPUClocks) string {
	return fmt.Sprintf("SM %.0f, memory %.0f (%s)", c.SMClockMHz, c.MemClockMHz, c.Source)
}

// WriteJobSummary prints a job's ranks and nodes, then its point.
func WriteJobSummary(w io.Writer, m cluster.Merged) {
	j := m.Point.Job
	fmt.Fprintf(w, "\n Job %s (%s): %d ranks on %d node(s)", j.ID, j.Launcher, j.Ranks-len(j.Missing), len(j.Nodes))
	if len(j.Missing) > 0 {
		fmt.Fprintf(w, ", %d of %d ranks missing", len(j.Missing), j.Ranks)
	}
	fmt.Fprintf(w, "; slowest rank %d: %.6f s\n", j.SlowestRank, j.SlowestSeconds)
	for _, n := range j.Nodes {
		owner := "no traffic owner"
		switch {
		case m.Point.Source == roofline.SourceEmulated:
			owner = fmt.Sprintf("ranks' modelled Q summed: %s B", OrUnknown(n.TrafficBytes, unit.Count))
		case len(n.Owners) == 1:
			owner = fmt.Sprintf("traffic owner rank %d: %s B", n.Owners[0], OrUnknown(n.TrafficBytes, unit.Count))
		case len(n.Owners) > 1:
			owner = fmt.Sprintf("%d traffic owners", len(n.Owners))
		}
		fmt.Fprintf(w, "   node %-20s ranks %-12s %s\n", n.Node, JoinInts(n.Ranks), owner)
	}
	WriteRunSummary(w, &m.Point, "the node roofs' widest scope × nodes")
}

// JoinInts is "0,1,2": a node's ranks.
func JoinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ",")
}

// WriteNodeType says which nodes are of node type n and where their
// merged roofs were written, with the flags of nodes that differ.
func WriteNodeType(w io.Writer, n int, t cluster.NodeType, path string) {
	fmt.Fprintf(w, "node type %d: %s\n  nodes %s\n  wrote %s", n, t.Key, strings.Join(t.Nodes, ","), path)
	for _, f := range t.Roofs.Flags {
		if f.Code == roofline.FlagUnequalRoofs {
			fmt.Fprintf(w, "\n  %s: %s", f.Code, f.Message)
		}
	}
	fmt.Fprintln(w)
}

// WriteNoJobRoofs says why nodes of several types make no job roofs.
func WriteNoJobRoofs(w io.Writer, types int) {
	fmt.Fprintf(w, "no job roofs: the nodes are of %d types, whose ceilings are not measured at common thread scopes\n", types)
}

// WriteJobRoofs says where the job's roofs, one node type's × nodes, were
// written.
func WriteJobRoofs(w io.Writer, nodes int, path string) {
	fmt.Fprintf(w, "job roofs: node type 1 × %d nodes (assumes perfect scaling; the network is not a roof)\n  wrote %s\n", nodes, path)
}
