package dnnrun

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/rprof/rprof/dnn"
	"github.com/rprof/rprof/measure"
	"github.com/rprof/rprof/regions"
	"github.com/rprof/rprof/roofline"
)

// Emulated is the counting of Count "emulate": measure's emulate backend
// ran the program natively (the timed run), then once more under QEMU
// with rprof's plugin counting every dnnl_primitive_execute call on its
// own; the calls are joined to that run's own verbose trace. QEMU offers
// up to AVX2, so oneDNN may pick other implementations than in the timed
// native run; dnn.MatchCounted pairs the groups by problem.
type Emulated struct {
	// Probe is the counted function.
	Probe regions.Probe
	// Trace and Groups are the emulated run's; the groups carry their
	// calls' counts when the join succeeded.
	Trace  *dnn.Trace
	Groups []*dnn.Group
	// Mismatch says why no call was attributed ("" when they were);
	// NotLoaded that the reason is that the emulated run never loaded the
	// probed library.
	Mismatch  string
	NotLoaded bool
	// Emulation is how the calls were counted (the whole emulated run's
	// record, without its work by vector width, which no call has).
	Emulation roofline.Emulation
	// Notes are the flags of how the calls were counted.
	Notes []roofline.Flag
}

// emulationNotes are the codes of the flags of an emulated run that hold
// for every call counted in it.
var emulationNotes = []string{roofline.FlagEmulatedISA, roofline.FlagModelled, roofline.FlagNoUncore, roofline.FlagInterleaved}

// EmulatedRunError is an emulated run that gave no counts: Stderr is what
// the run printed there (kept back while it ran).
type EmulatedRunError struct {
	Stderr []byte
	Err    error
}

func (e *EmulatedRunError) Error() string { return e.Err.Error() }

func (e *EmulatedRunError) Unwrap() error { return e.Err }

// runEmulated runs the command natively with the trace into tr, then under
// measure's emulate backend, counting every call of Execute, and joins
// the calls to the emulated run's trace. It returns the native run's exit
// status and the error of passing its stdout on.
func runEmulated(ctx context.Context, o Options, env []string, tr *dnn.Trace) (em *Emulated, code int, outErr error, err error) {
	out := &passOn{w: o.Stdout}
	if out.w == nil {
		out.w = io.Discard
	}
	native := tr.Splitter(out)
	em = &Emulated{Trace: &dnn.Trace{Ordered: true}}
	emulated := em.Trace.Splitter(io.Discard)
	var stderr bytes.Buffer
	var counted *measure.CountedCalls
	cfg := measure.Config{
		Target:     measure.Target{Command: o.Command, Env: env, Stdin: o.Stdin, Stdout: native, Stderr: o.Stderr},
		Counting:   measure.Counting{Backend: measure.BackendEmulate, Host: o.Host, Emulator: o.Emulation},
		Repetition: measure.Repetition{Repeat: 1},
		// The roofs give the cache model their effective sizes, as in run.
		Placement: measure.Placement{Roofs: o.Roofs, RoofsPath: o.RoofsPath, Threads: o.Threads},
		Hooks: measure.Hooks{EmulatedCalls: &measure.CallCounting{Function: o.Library + ":" + Execute, Stdout: emulated, Stderr: &stderr,
			Started: o.Counting, Done: func(c measure.CountedCalls) { counted = &c }}},
	}
	p, err := o.measure()(ctx, cfg)
	native.Close()
	emulated.Close()
	if err != nil {
		if ctx.Err() == nil && stderr.Len() > 0 {
			err = &EmulatedRunError{Stderr: stderr.Bytes(), Err: err}
		}
		return nil, 0, nil, err
	}
	if counted == nil {
		// Interrupted, or killed, in the native run: nothing was counted.
		return nil, p.Exit.Code, out.err, nil
	}
	if p.Emulation != nil {
		em.Emulation = *p.Emulation
		em.Emulation.WorkByWidth = nil
	}
	for _, f := range p.Flags {
		if slices.Contains(emulationNotes, f.Code) {
			em.Notes = append(em.Notes, f)
		}
	}
	em.Probe.Path = counted.Path
	em.Join(countedCalls(*counted))
	return em, p.Exit.Code, out.err, nil
}

// CountedCalls is what an emulated run counted of the calls of Execute.
type CountedCalls struct {
	// Calls are the calls in the order they returned.
	Calls []dnn.CallCount
	// Mapped says that the run loaded the probed file; Images is how many
	// processes called the function.
	Mapped bool
	Images int
}

// countedCalls is the calls measure counted.
func countedCalls(res measure.CountedCalls) CountedCalls {
	c := CountedCalls{Mapped: res.Mapped, Images: res.Images, Calls: make([]dnn.CallCount, len(res.Calls))}
	for i, call := range res.Calls {
		work := map[string]float64{}
		for p, v := range call.Work {
			if v > 0 {
				work[p] = float64(v)
			}
		}
		q := float64(call.DRAM.Total())
		c.Calls[i] = dnn.CallCount{Thread: call.Thread, WorkByPrecision: work, TrafficBytes: &q, Overlapped: call.Overlapped}
	}
	return c
}

// Join attributes the counted calls to the executions of em.Trace, the
// emulated run's, setting em.Groups, or says why not (em.Mismatch).
func (em *Emulated) Join(c CountedCalls) {
	switch {
	case !c.Mapped:
		em.Mismatch, em.NotLoaded = fmt.Sprintf("the emulated run never loaded %s: the program's oneDNN is another file", em.Probe.Path), true
	case c.Images > 1:
		em.Mismatch = fmt.Sprintf("%d processes of the emulated run called %s: their calls have no order between them", c.Images, Execute)
	}
	if em.Mismatch != "" {
		em.Groups = em.Trace.Groups()
		return
	}
	err := em.Trace.Join(c.Calls)
	var me *dnn.CallMismatchError
	if errors.As(err, &me) {
		em.Mismatch = fmt.Sprintf("%d counted calls for %d executions in the emulated run's trace", me.Calls, me.Execs)
	}
	em.Groups = em.Trace.Groups()
}

// apply matches the timed groups with the counted ones and sets the point
// options of counted points; calls that could not be attributed leave the
// groups analytic (annotate flags them).
func (em *Emulated) apply(timed []*dnn.Group, o *dnn.PointOptions) {
	if em.Mismatch != "" {
		return
	}
	dnn.MatchCounted(timed, em.Groups)
	o.CountSource, o.CountNotes, o.Emulation = roofline.SourceEmulated, em.Notes, &em.Emulation
}

// annotate flags every point when no call could be attributed.
func (em *Emulated) annotate(points []roofline.Point) {
	if em.Mismatch == "" {
		return
	}
	for i := range points {
		points[i].Flags = append(points[i].Flags, roofline.Flag{Code: roofline.FlagCallMismatch, Subject: roofline.SubjectWork,
			Message: "counted calls not attributed: " + em.Mismatch})
	}
}
