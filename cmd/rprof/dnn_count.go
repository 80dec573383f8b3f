package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/rprof/rprof/dnn"
	"github.com/rprof/rprof/internal/lock"
	"github.com/rprof/rprof/internal/stats"
	"github.com/rprof/rprof/internal/unit"
	"github.com/rprof/rprof/measure"
	"github.com/rprof/rprof/regions"
	"github.com/rprof/rprof/roofline"
)

// dnnlExecute is the function every oneDNN primitive execution goes
// through, from the C and the C++ API alike (oneDNN 1.x to 3.x); oneDNN
// prints an execution's verbose line inside it.
const dnnlExecute = "dnnl_primitive_execute"

// probedDNN is a run of rprof dnn --count pmu: the program ran once under
// measure.Run with uprobes on dnnl_primitive_execute, each call joined to
// its execution in the verbose trace.
type probedDNN struct {
	trace *dnn.Trace
	// whole is the probed run's point: the whole program's figures and
	// the notes that hold for every probed call.
	whole *roofline.Point
	// groups are the trace's groups, with their calls' probed times when
	// the join succeeded; regions the probed figures of each (parallel to
	// groups; nil where not joined).
	groups  []*dnn.Group
	regions []*roofline.Region
	// mismatch is the join's error (*dnn.CallMismatchError): probed calls
	// and executions differ in number, so no call is attributed.
	mismatch error
}

// runDNNProbed runs command once with oneDNN's trace on and uprobes on
// library's dnnl_primitive_execute, reading the per-CPU counters of the pmu
// backend's catalogue (FP work) and events at every call.
func runDNNProbed(ctx context.Context, e *env, command, events []string, library string, roofs roofsDoc, threads int, lockTimeout time.Duration) (*probedDNN, error) {
	pd := &probedDNN{trace: &dnn.Trace{Ordered: true}}
	split := pd.trace.Splitter(e.stdout)
	cfg := measure.Config{
		Command: command, Env: verboseEnv(os.Environ()), Stdin: e.stdin, Stdout: split, Stderr: e.stderr,
		Count: measure.DefaultBackend, Events: events, Regions: []string{library + ":" + dnnlExecute}, Repeat: 1,
		Roofs: roofs.roofs, RoofsPath: roofs.path, Threads: threads, CallGroups: pd.split,
	}
	release, err := holdMachine(ctx, e, "dnn", lock.Shared, lockTimeout)
	if err != nil {
		return nil, err
	}
	p, err := e.measure(ctx, cfg)
	release()
	split.Close()
	if err != nil {
		return nil, measureFailure(err, "rprof dnn")
	}
	pd.whole = p
	if pd.groups == nil {
		pd.groups = pd.trace.Groups()
		return pd, nil
	}
	pd.regions = make([]*roofline.Region, len(pd.groups))
	for i := range p.Regions {
		r := &p.Regions[i]
		if k, err := strconv.Atoi(r.Name); err == nil && k >= 0 && k < len(pd.groups) {
			r.Name = dnnlExecute
			pd.regions[k] = r
		}
	}
	return pd, nil
}

// split joins the probed calls, in the order they returned, to the
// trace's executions and gives measure the calls of each group.
func (pd *probedDNN) split(calls []regions.Call) []measure.CallGroup {
	counts := make([]dnn.CallCount, len(calls))
	for i, c := range calls {
		counts[i] = dnn.CallCount{Thread: int(c.TID), Seconds: &calls[i].Seconds}
	}
	if err := pd.trace.Join(counts); err != nil {
		pd.mismatch = err
		return nil
	}
	pd.groups = pd.trace.Groups()
	out := make([]measure.CallGroup, len(pd.groups))
	for i, g := range pd.groups {
		out[i] = measure.CallGroup{Name: strconv.Itoa(i), Region: 0}
		for _, k := range g.Execs {
			out[i].Calls = append(out[i].Calls, calls[k])
		}
	}
	return out
}

// annotate gives each point (parallel to the groups) its probed region,
// with the notes of the probed run, and flags: counted W against the
// analytic one, OpenMP workers outside the calling CPU's counters, calls
// that were not attributed.
func (pd *probedDNN) annotate(points []roofline.Point, nthr int) {
	var notes []roofline.Flag
	for _, f := range pd.whole.Flags {
		if f.Subject == roofline.SubjectRegions || f.Code == roofline.FlagLostRecords || f.Code == roofline.FlagUserOnly {
			notes = append(notes, f)
		}
	}
	// Worker threads matter where calls are counted: FP work, or -e.
	if counting := pd.whole.Source == roofline.SourceCounters || len(pd.whole.Events) > 0; counting && nthr > 1 {
		notes = append(notes, roofline.Flag{Code: roofline.FlagWorkerThreads,
			Message: fmt.Sprintf("oneDNN ran %d OpenMP threads: the workers' share of a call runs on other CPUs, outside the calling CPU's counters, so counted W and events per call are the calling thread's share only (run with OMP_NUM_THREADS=1 to count all of it)", nthr)})
	}
	for i := range points {
		p := &points[i]
		if pd.mismatch != nil {
			p.Flags = append(p.Flags, roofline.Flag{Code: roofline.FlagCallMismatch,
				Message: fmt.Sprintf("probed calls of %s not attributed: %v", dnnlExecute, pd.mismatch)})
			continue
		}
		if i >= len(pd.regions) || pd.regions[i] == nil {
			continue
		}
		r := pd.regions[i]
		r.Flags = append(r.Flags, notes...)
		if r.WorkFlops != nil && r.Calls > 0 {
			w := *r.WorkFlops / float64(r.Calls)
			p.Flags = append(p.Flags, dnn.CountFlags(pd.groups[i].Model, dnn.Counted{Calls: int(r.Calls), WorkFlops: &w, MinWork: w, MaxWork: w})...)
		}
		if a := agreementOf(pd.groups[i:i+1], r.ProbeCostSeconds); a.short > 0 {
			p.Flags = append(p.Flags, roofline.Flag{Code: roofline.FlagCallMismatch,
				Message: fmt.Sprintf("%d of %d probed calls were shorter than oneDNN's own time of the execution they were joined to: the join by order is wrong for them (calls from several threads at once?)", a.short, a.calls)})
		}
		p.Regions = []roofline.Region{*r}
	}
}

// agreement compares each probed call's time with oneDNN's verbose time
// of its execution: the cross-check of the join and of the probes' cost.
type agreement struct {
	calls int
	// probed and verbose are the summed times (s); diffs the per-call
	// differences probed - verbose, sorted.
	probed, verbose float64
	diffs           []float64
	// short counts calls whose probed time, with the probe cost added
	// back, is below the verbose time by more than the verbose clock's
	// resolution: the verbose window lies inside the probed one, so such a
	// call was joined to another execution.
	short int
}

// verboseResolution is the finest time oneDNN's trace gives: its clock is
// gettimeofday (1 µs, read at both ends), and the milliseconds are printed
// with 6 significant digits.
func verboseResolution(ms float64) float64 { return 2e-6 + ms*1e-3*5e-6 }

// agreementOf compares the joined calls of groups; cost is the probe time
// subtracted from each call (s).
func agreementOf(groups []*dnn.Group, cost float64) agreement {
	var a agreement
	for _, g := range groups {
		for k, c := range g.Counts {
			if c.Seconds == nil || k >= len(g.Millis) {
				continue
			}
			v := g.Millis[k] / 1e3
			a.calls++
			a.probed += *c.Seconds
			a.verbose += v
			a.diffs = append(a.diffs, *c.Seconds-v)
			if *c.Seconds+cost < v-verboseResolution(g.Millis[k]) {
				a.short++
			}
		}
	}
	slices.Sort(a.diffs)
	return a
}

// writeDNNProbed prints the probed figures of the groups shown in the
// table (same numbering), with the join's cross-check against oneDNN's
// own times, and the notes.
func writeDNNProbed(w io.Writer, pd *probedDNN, points []roofline.Point, top int) {
	fmt.Fprintf(w, " Probed calls of %s (uprobes; counters per CPU, read at each call's entry and return):\n", dnnlExecute)
	if pd.mismatch != nil {
		fmt.Fprintf(w, "  not attributed: %v\n\n", pd.mismatch)
		return
	}
	if pd.regions == nil {
		fmt.Fprint(w, "  none: the probes gave no calls\n\n")
		return
	}
	cost := 0.0
	for _, r := range pd.regions {
		if r != nil {
			cost = r.ProbeCostSeconds
			fmt.Fprintf(w, "  probe %s, first instruction %s: %s per call subtracted\n", r.Probe, orDash(r.ProbeFirst), fmtDuration(cost))
			break
		}
	}
	a := agreementOf(pd.groups, cost)
	if a.calls > 0 {
		fmt.Fprintf(w, "  %d calls for %d executions: probed %s ms in all, oneDNN's own %s ms; per call, probed - oneDNN: median %s, from %s to %s\n",
			a.calls, a.calls, unit.Value(a.probed*1e3), unit.Value(a.verbose*1e3),
			signedDuration(stats.Quantile(a.diffs, 0.5)), signedDuration(a.diffs[0]), signedDuration(a.diffs[len(a.diffs)-1]))
	}
	writeShares(w, pd)
	var events []string
	for _, r := range pd.regions {
		for _, ev := range r.Events {
			if !slices.Contains(events, ev.Name) {
				events = append(events, ev.Name)
			}
		}
	}
	counted := slices.ContainsFunc(pd.regions, func(r *roofline.Region) bool {
		return r != nil && (r.CountedFraction > 0 || slices.ContainsFunc(r.Flags, func(f roofline.Flag) bool { return f.Code == roofline.FlagUncountedCalls }))
	})
	fmt.Fprintln(w)
	var notes probedNotes
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := append([]string{"#", "calls", "probed ms/call", "oneDNN ms/call", "counted", "W FLOP/call", "counted/analytic"}, events...)
	fmt.Fprintf(tw, "%s\t\t\n", strings.Join(head, "\t"))
	shown := shownRows(len(points), top)
	for i := range shown {
		r, g := pd.regions[i], pd.groups[i]
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
func writeShares(w io.Writer, pd *probedDNN) {
	var secs, work float64
	counted := pd.whole.WorkFlops != nil
	for _, r := range pd.regions {
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
	if pd.whole.Seconds <= 0 {
		return
	}
	fmt.Fprintf(w, "  the program ran %s s; its primitive calls %s s of it (%s)", unit.Value(pd.whole.Seconds), unit.Value(secs), unit.Percent(secs/pd.whole.Seconds))
	if counted && *pd.whole.WorkFlops > 0 {
		fmt.Fprintf(w, "; W %s FLOP in all, %s in primitive calls (%s)", unit.Count(*pd.whole.WorkFlops), unit.Count(work), unit.Percent(work / *pd.whole.WorkFlops))
	}
	fmt.Fprintln(w)
}

func signedDuration(s float64) string {
	if s < 0 {
		return "-" + fmtDuration(-s)
	}
	return "+" + fmtDuration(s)
}
