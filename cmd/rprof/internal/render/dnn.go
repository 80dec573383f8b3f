package render

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/rprof/rprof/dnn"
	"github.com/rprof/rprof/dnnrun"
	"github.com/rprof/rprof/internal/stats"
	"github.com/rprof/rprof/internal/unit"
	"github.com/rprof/rprof/roofline"
)

// WriteDNNProbed prints the probed figures of the groups shown in the
// table (same numbering), with the join's cross-check against oneDNN's
// own times, and the notes.
func WriteDNNProbed(w io.Writer, pd *dnnrun.Probed, groups []*dnn.Group, points []roofline.Point, top int) {
	fmt.Fprintf(w, " Probed calls of %s (uprobes; counters per CPU, read at each call's entry and return):\n", dnnrun.Execute)
	if pd.Mismatch != nil {
		fmt.Fprintf(w, "  not attributed: %v\n\n", pd.Mismatch)
		return
	}
	if pd.Regions == nil {
		fmt.Fprint(w, "  none: the probes gave no calls\n\n")
		return
	}
	cost := 0.0
	for _, r := range pd.Regions {
		if r != nil {
			cost = r.ProbeCostSeconds
			fmt.Fprintf(w, "  probe %s, first instruction %s: %s per call subtracted\n", r.Probe, orDash(r.ProbeFirst), fmtDuration(cost))
			break
		}
	}
	a := dnnrun.AgreementOf(groups, cost)
	if a.Calls > 0 {
		fmt.Fprintf(w, "  %d calls for %d executions: probed %s ms in all, oneDNN's own %s ms; per call, probed - oneDNN: median %s, from %s to %s\n",
			a.Calls, a.Calls, unit.Value(a.Probed*1e3), unit.Value(a.Verbose*1e3),
			signedDuration(stats.Quantile(a.Diffs, 0.5)), signedDuration(a.Diffs[0]), signedDuration(a.Diffs[len(a.Diffs)-1]))
	}
	writeShares(w, pd)
	var events []string
	for _, r := range pd.Regions {
		for _, ev := range r.Events {
			if !slices.Contains(events, ev.Name) {
				events = append(events, ev.Name)
			}
		}
	}
	counted := slices.ContainsFunc(pd.Regions, func(r *roofline.Region) bool {
		return r != nil && (r.CountedFraction > 0 || slices.ContainsFunc(r.Flags, func(f roofline.Flag) bool { return f.Code == roofline.FlagUncountedCalls }))
	})
	fmt.Fprintln(w)
	var notes probedNotes
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := append([]string{"#", "calls", "probed ms/call", "oneDNN ms/call", "counted", "W FLOP/call", "counted/analytic"}, events...)
	fmt.Fprintf(tw, "%s\t\t\n", strings.Join(head, "\t"))
	shown := shownRows(len(points), top)
	for i := range shown {
		r, g := pd.Regions[i], groups[i]
		if r == nil {
			continue
		}
		row := []string{strconv.Itoa(i + 1), strconv.FormatUint(r.Calls, 10), unit.Value(r.MeanSeconds * 1e3),
			unit.Value(g.TotalMillis() / float64(g.Calls())), "-", "-", "-"}
		if counted {
			row[4] = unit.Percent(r.CountedFraction)
		}
		if r.WorkFlops != nil && r.Calls > 0 {
			wc := *r.WorkFlops / float64(r.Calls)
			row[5] = unit.Count(wc)
			if aw := g.Model.WorkFlops; aw != nil && *aw > 0 {
				row[6] = unit.Sig(wc / *aw)
			}
		}
		for _, name := range events {
			v := "-"
			for _, ev := range r.Events {
				if ev.Name == name && r.Calls > 0 {
					v = unit.Value(ev.Value / float64(r.Calls))
				}
			}
			row = append(row, v)
		}
		flags := slices.DeleteFunc(slices.Clone(points[i].Flags), func(f roofline.Flag) bool {
			return f.Code != roofline.FlagCountedGap && f.Code != roofline.FlagCallMismatch
		})
		fmt.Fprintf(tw, "%s\t%s\t\n", strings.Join(row, "\t"), notes.mark(i+1, append(flags, r.Flags...)))
	}
	tw.Flush()
	notes.write(w)
	fmt.Fprintln(w)
}

// probedNotes numbers the flags of the probed table by code: a region
// flag's message carries that region's figures, so rows flagged alike
// share one note, which gives the first row's message and lists the rows.
type probedNotes struct {
	first []roofline.Flag
	rows  [][]int
	// differ: rows flagged alike with another message than the first's.
	differ []bool
}

func (n *probedNotes) mark(row int, flags []roofline.Flag) string {
	var b strings.Builder
	for _, f := range flags {
		j := slices.IndexFunc(n.first, func(g roofline.Flag) bool { return g.Code == f.Code && g.Subject == f.Subject })
		if j < 0 {
			n.first, n.rows, n.differ = append(n.first, f), append(n.rows, nil), append(n.differ, false)
			j = len(n.first) - 1
		}
		n.differ[j] = n.differ[j] || f.Message != n.first[j].Message
		if k := len(n.rows[j]); k == 0 || n.rows[j][k-1] != row {
			n.rows[j] = append(n.rows[j], row)
		}
		fmt.Fprintf(&b, "[%d]", j+1)
	}
	return b.String()
}

func (n *probedNotes) write(w io.Writer) {
	if len(n.first) > 0 {
		fmt.Fprintln(w)
	}
	for j, f := range n.first {
		rows := ""
		if n.differ[j] {
			rows = fmt.Sprintf(" (%d rows; figures of #%d)", len(n.rows[j]), n.rows[j][0])
		}
		fmt.Fprintf(w, "  [%d] %s%s: %s\n", j+1, f.Code, rows, f.Message)
	}
}

// writeShares says how much of the probed run's time, and of its counted
// W, was inside primitive calls.
func writeShares(w io.Writer, pd *dnnrun.Probed) {
	var secs, work float64
	counted := pd.Whole.WorkFlops != nil
	for _, r := range pd.Regions {
		if r == nil {
			continue
		}
		secs += r.Seconds
		if r.WorkFlops == nil {
			counted = false
		} else {
			work += *r.WorkFlops
		}
	}
	if pd.Whole.Seconds <= 0 {
		return
	}
	fmt.Fprintf(w, "  the program ran %s s; its primitive calls %s s of it (%s)", unit.Value(pd.Whole.Seconds), unit.Value(secs), unit.Percent(secs/pd.Whole.Seconds))
	if counted && *pd.Whole.WorkFlops > 0 {
		fmt.Fprintf(w, "; W %s FLOP in all, %s in primitive calls (%s)", unit.Count(*pd.Whole.WorkFlops), unit.Count(work), unit.Percent(work / *pd.Whole.WorkFlops))
	}
	fmt.Fprintln(w)
}

func signedDuration(s float64) string {
	if s < 0 {
		return "-" + fmtDuration(-s)
	}
	return "+" + fmtDuration(s)
}

// WriteDNNEmulated prints, for the groups shown in the table (same
// numbering), the counted figures beside the analytic ones.
func WriteDNNEmulated(w io.Writer, em *dnnrun.Emulated, groups []*dnn.Group, top int) {
	fmt.Fprintf(w, " Counted beside analytic, per call (%s calls of %s under %s, %s; emulated run %.1f s):\n",
		dnnrun.Execute, filepath.Base(em.Probe.Path), em.Emulation.Emulator, em.Emulation.ISA, em.Emulation.Seconds)
	fmt.Fprintf(w, " W counted exactly; Q modelled DRAM bytes (cache model %s); medians over the counted calls\n", em.Emulation.CacheModel)
	writeInterleavedAdvice(w, " ", em.Notes)
	if em.Mismatch != "" {
		advice := ""
		if em.NotLoaded {
			advice = " (give it with --library)"
		}
		fmt.Fprintf(w, "  not attributed: %s%s\n\n", em.Mismatch, advice)
		return
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "#\tcalls\tW counted\tW analytic\tratio\tQ counted\tQ compulsory\tratio\t counted as")
	shown := shownRows(len(groups), top)
	for i, g := range groups[:shown] {
		m := g.Match
		if m == nil || m.Group == nil {
			fmt.Fprintf(tw, "%d\t-\t\t\t\t\t\t\t not counted\n", i+1)
			continue
		}
		c, a := m.Counted, m.Group.Model
		as := "the timed implementation"
		if m.Group.Describe() != g.Describe() {
			as = m.Group.Describe()
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t %s\n", i+1, strconv.Itoa(c.Calls),
			OrUnknown(c.WorkFlops, unit.Count), OrUnknown(a.WorkFlops, unit.Count), ratioText(c.WorkFlops, a.WorkFlops),
			OrUnknown(c.TrafficBytes, unit.Count), OrUnknown(a.TrafficBytes, unit.Count), ratioText(c.TrafficBytes, a.TrafficBytes), as)
	}
	tw.Flush()
	fmt.Fprintln(w)
}

// ratioText is dnn.Ratio with three significant digits, "-" when it is
// unknown.
func ratioText(counted, analytic *float64) string {
	r, ok := dnn.Ratio(counted, analytic)
	if !ok {
		return "-"
	}
	return strings.TrimSpace(fmt.Sprintf("%.3g", r))
}

// WriteDNNTable prints the groups, longest total time first, with numbered
// footnotes for their flags (each distinct flag once).
func WriteDNNTable(w io.Writer, command []string, tr *dnn.Trace, groups []*dnn.Group, points []roofline.Point, top int) {
	execs, total := 0, 0.0
	for _, g := range groups {
		execs += g.Calls()
		total += g.TotalMillis()
	}
	lib := "oneDNN " + tr.Info.Version
	if tr.Info.Runtime != "" {
		lib += ", " + tr.Info.Runtime
	}
	fmt.Fprintf(w, "\n oneDNN primitives of '%s' (%s; %d executions in %d groups, %s ms in all):\n", strings.Join(command, " "), strings.TrimSpace(lib), execs, len(groups), unit.Value(total))
	wq := "W, Q: analytic per call (FLOP; bytes, each tensor once)"
	if slices.ContainsFunc(points, func(p roofline.Point) bool { return p.Analytic != nil }) {
		wq = "W, Q: per call, counted (W exact, Q modelled) where the counted table below has the group, else analytic (FLOP; bytes)"
	}
	fmt.Fprintf(w, " time: oneDNN's wall time per call (mean, %g%% interval); %s\n", 100*points[0].CI.Confidence, wq)
	if p := points[0]; p.RoofsFile != "" {
		fmt.Fprintf(w, " roofs %s, thread scope %d\n", p.RoofsFile, p.Threads)
	} else {
		fmt.Fprintln(w, " no roofs document: run 'rprof roofs' to place the groups under this machine's roofs")
	}
	fmt.Fprintln(w)
	var notes []roofline.Flag
	mark := func(fs []roofline.Flag) string {
		var b strings.Builder
		for _, f := range fs {
			if f.Code == roofline.FlagAnalytic {
				continue
			}
			i := slices.Index(notes, f)
			if i < 0 {
				notes = append(notes, f)
				i = len(notes) - 1
			}
			fmt.Fprintf(&b, "[%d]", i+1)
		}
		return b.String()
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "#\tcalls\ttotal ms\tms/call\t±\tW FLOP\tQ B\tFLOP/B\tGFLOP/s\tGB/s\t% roof\tbound\t\t primitive")
	shown := shownRows(len(points), top)
	for i, p := range points[:shown] {
		g := groups[i]
		pm := ""
		if s, ok := unit.HalfWidthPercent(p.Seconds, p.CI.Seconds.Lo, p.CI.Seconds.Hi); ok && p.CI.N > 1 {
			pm = s
		}
		frac, bound := "", ""
		if p.FractionOfAttainable != nil {
			frac = fmt.Sprintf("%.1f", 100**p.FractionOfAttainable)
			bound = p.Bound.String()
		}
		fmt.Fprintf(tw, "%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t %s\n", i+1, g.Calls(),
			unit.Value(g.TotalMillis()), unit.Value(p.Seconds*1e3), pm,
			OrUnknown(p.WorkFlops, unit.Count), OrUnknown(p.TrafficBytes, unit.Count),
			OrUnknownDash(p.Intensity), OrUnknownDash(p.GFlops), OrUnknownDash(p.GBytesPerS), frac, bound, mark(p.Flags), p.Label)
	}
	tw.Flush()
	if shown < len(points) {
		fmt.Fprintf(w, "  ... %d more groups (--top %d); the point set has all\n", len(points)-shown, top)
	}
	if len(notes) > 0 {
		fmt.Fprintln(w)
		for i, f := range notes {
			fmt.Fprintf(w, "  [%d] %s: %s\n", i+1, f.Code, f.Message)
		}
	}
	fmt.Fprintln(w)
}

// shownRows is how many of n groups a table shows with --top top (0:
// all).
func shownRows(n, top int) int {
	if top > 0 && top < n {
		return top
	}
	return n
}

func OrUnknownDash(v *float64) string {
	if v == nil {
		return "-"
	}
	return unit.Value(*v)
}
