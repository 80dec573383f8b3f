package dnnrun

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/rprof/rprof/dnn"
	"github.com/rprof/rprof/measure"
	"github.com/rprof/rprof/regions"
	"github.com/rprof/rprof/roofline"
)

// Probed is a run of Count "pmu": the program ran once under measure.Run
// with uprobes on dnnl_primitive_execute, each call joined to its
// execution in the verbose trace.
type Probed struct {
	// Whole is the probed run's point: the whole program's figures and
	// the notes that hold for every probed call.
	Whole *roofline.Point
	// Regions are the probed figures of each group of the result
	// (parallel to its groups; nil where not joined), named Execute; nil
	// when the probes gave no calls.
	Regions []*roofline.Region
	// Mismatch is the join's error (*dnn.CallMismatchError): probed calls
	// and executions differ in number, so no call is attributed.
	Mismatch error

	groups []*dnn.Group
	trace  *dnn.Trace
}

// runProbed runs the command once with oneDNN's trace on and uprobes on
// the library's dnnl_primitive_execute, reading the per-CPU counters of
// the pmu backend's catalogue (FP work) and events at every call.
func runProbed(ctx context.Context, o Options, env []string) (*Probed, error) {
	pd := &Probed{trace: &dnn.Trace{Ordered: true}}
	out := &passOn{w: o.Stdout}
	if out.w == nil {
		out.w = io.Discard
	}
	split := pd.trace.Splitter(out)
	cfg := measure.Config{
		Target:     measure.Target{Command: o.Command, Env: env, Stdin: o.Stdin, Stdout: split, Stderr: o.Stderr},
		Counting:   measure.Counting{Backend: measure.DefaultBackend, Events: o.Events, Regions: []string{o.Library + ":" + Execute}, Host: o.Host},
		Repetition: measure.Repetition{Repeat: 1},
		Placement:  measure.Placement{Roofs: o.Roofs, RoofsPath: o.RoofsPath, Threads: o.Threads},
		Hooks:      measure.Hooks{CallGroups: pd.split},
	}
	p, err := o.measure()(ctx, cfg)
	split.Close()
	if err != nil {
		return nil, err
	}
	pd.Whole = p
	if pd.groups == nil {
		pd.groups = pd.trace.Groups()
		return pd, nil
	}
	pd.Regions = make([]*roofline.Region, len(pd.groups))
	for i := range p.Regions {
		r := &p.Regions[i]
		if k, err := strconv.Atoi(r.Name); err == nil && k >= 0 && k < len(pd.groups) {
			r.Name = Execute
			pd.Regions[k] = r
		}
	}
	return pd, nil
}

// split joins the probed calls, in the order they returned, to the
// trace's executions and gives measure the calls of each group.
func (pd *Probed) split(calls []regions.Call) []measure.CallGroup {
	counts := make([]dnn.CallCount, len(calls))
	for i, c := range calls {
		counts[i] = dnn.CallCount{Thread: int(c.TID), Seconds: &calls[i].Seconds}
	}
	if err := pd.trace.Join(counts); err != nil {
		pd.Mismatch = err
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
func (pd *Probed) annotate(points []roofline.Point, nthr int) {
	var notes []roofline.Flag
	for _, f := range pd.Whole.Flags {
		if f.Subject == roofline.SubjectRegions || f.Code == roofline.FlagLostRecords || f.Code == roofline.FlagUserOnly {
			notes = append(notes, f)
		}
	}
	// Worker threads matter where calls are counted: FP work, or -e.
	if counting := pd.Whole.Source == roofline.SourceCounters || len(pd.Whole.Events) > 0; counting && nthr > 1 {
		notes = append(notes, roofline.Flag{Code: roofline.FlagWorkerThreads,
			Message: fmt.Sprintf("oneDNN ran %d OpenMP threads: the workers' share of a call runs on other CPUs, outside the calling CPU's counters, so counted W and events per call are the calling thread's share only (run with OMP_NUM_THREADS=1 to count all of it)", nthr)})
	}
	for i := range points {
		p := &points[i]
		if pd.Mismatch != nil {
			p.Flags = append(p.Flags, roofline.Flag{Code: roofline.FlagCallMismatch,
				Message: fmt.Sprintf("probed calls of %s not attributed: %v", Execute, pd.Mismatch)})
			continue
		}
		if i >= len(pd.Regions) || pd.Regions[i] == nil {
			continue
		}
		r := pd.Regions[i]
		r.Flags = append(r.Flags, notes...)
		if r.WorkFlops != nil && r.Calls > 0 {
			w := *r.WorkFlops / float64(r.Calls)
			p.Flags = append(p.Flags, dnn.CountFlags(pd.groups[i].Model, dnn.Counted{Calls: int(r.Calls), WorkFlops: &w, MinWork: w, MaxWork: w})...)
		}
		if a := AgreementOf(pd.groups[i:i+1], r.ProbeCostSeconds); a.Short > 0 {
			p.Flags = append(p.Flags, roofline.Flag{Code: roofline.FlagCallMismatch,
				Message: fmt.Sprintf("%d of %d probed calls were shorter than oneDNN's own time of the execution they were joined to: the join by order is wrong for them (calls from several threads at once?)", a.Short, a.Calls)})
		}
		p.Regions = []roofline.Region{*r}
	}
}

// Agreement compares each probed call's time with oneDNN's verbose time
// of its execution: the cross-check of the join and of the probes' cost.
type Agreement struct {
	Calls int
	// Probed and Verbose are the summed times (s); Diffs the per-call
	// differences probed - verbose, sorted.
	Probed, Verbose float64
	Diffs           []float64
	// Short counts calls whose probed time, with the probe cost added
	// back, is below the verbose time by more than the verbose clock's
	// resolution: the verbose window lies inside the probed one, so such a
	// call was joined to another execution.
	Short int
}

// AgreementOf compares the joined calls of groups; cost is the probe time
// subtracted from each call (s).
func AgreementOf(groups []*dnn.Group, cost float64) Agreement {
	var a Agreement
	for _, g := range groups {
		for k, c := range g.Counts {
			if c.Seconds == nil || k >= len(g.Millis) {
				continue
			}
			v := g.Millis[k] / 1e3
			a.Calls++
			a.Probed += *c.Seconds
			a.Verbose += v
			a.Diffs = append(a.Diffs, *c.Seconds-v)
			if *c.Seconds+cost < v-dnn.Resolution(g.Millis[k]) {
				a.Short++
			}
		}
	}
	slices.Sort(a.Diffs)
	return a
}
