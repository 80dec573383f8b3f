package dnnrun

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/rprof/rprof/dnn"
	"github.com/rprof/rprof/internal/launch"
	"github.com/rprof/rprof/machine"
	"github.com/rprof/rprof/measure"
	"github.com/rprof/rprof/measure/emulate"
	"github.com/rprof/rprof/regions"
	"github.com/rprof/rprof/roofline"
)

// Emulated is the counted run of Count "emulate": the program once more
// under QEMU with rprof's plugin counting every dnnl_primitive_execute
// call on its own, its calls joined to that run's own verbose trace. QEMU
// offers up to AVX2, so oneDNN may pick other implementations than in the
// timed native run; dnn.MatchCounted pairs the groups by problem.
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
	Emulation roofline.Emulation
	// Notes are the flags of how the calls were counted.
	Notes []roofline.Flag

	session *emulate.Session
}

// prepareEmulation checks the emulator and resolves the library's
// dnnl_primitive_execute before anything runs.
func prepareEmulation(ctx context.Context, o Options, env []string) (*Emulated, error) {
	path, err := targetPath(o.Command[0])
	if err != nil {
		return nil, err
	}
	q, err := emulate.FindQEMU(ctx)
	if err != nil {
		return nil, err
	}
	spec, err := regions.ParseSpec(o.Library + ":" + Execute)
	if err != nil {
		return nil, fmt.Errorf("%w: library %s: %w", ErrInvalidOptions, o.Library, err)
	}
	probes, err := regions.Resolver{Target: path, Env: env}.Resolve([]regions.Spec{spec})
	if err != nil {
		return nil, err
	}
	model := emulate.HostCacheModel()
	s, err := emulate.NewSession(q, model)
	if err != nil {
		return nil, err
	}
	em := &Emulated{session: s, Probe: probes[0]}
	if err := s.CountCalls(em.Probe.Path, em.Probe.Addr, em.Probe.Size); err != nil {
		s.Close()
		return nil, err
	}
	em.Emulation = roofline.Emulation{
		Emulator: fmt.Sprintf("%s %s", emulate.QEMUBinary, q.Version), PluginAPI: q.PluginAPI,
		ISA: measure.EmulatedISA, CacheModel: model.String(), CacheModelSource: model.Source,
	}
	if cpu, err := machine.ReadCPU(os.DirFS("/proc")); err == nil {
		em.Notes = measure.EmulationNotes(cpu, model)
	}
	return em, nil
}

func (em *Emulated) close() { em.session.Close() }

// EmulatedRunError is an emulated run that gave no counts: Stderr is what
// the run printed there (kept back while it ran).
type EmulatedRunError struct {
	Stderr []byte
	Err    error
}

func (e *EmulatedRunError) Error() string { return "emulated run: " + e.Err.Error() }

func (e *EmulatedRunError) Unwrap() error { return e.Err }

// run runs the command under emulation (its stdout and stderr kept back)
// and joins the counted calls to the run's trace.
func (em *Emulated) run(ctx context.Context, command, env []string) error {
	path, err := targetPath(command[0])
	if err != nil {
		return err
	}
	argv, err := em.session.Argv(path, command)
	if err != nil {
		return err
	}
	var stderr bytes.Buffer
	start := time.Now()
	tr := &dnn.Trace{Ordered: true}
	code, _, err := runTraced(ctx, launch.Spec{Argv: argv, Env: env, Stderr: &stderr}, tr)
	if err != nil || ctx.Err() != nil {
		return err
	}
	em.Emulation.Seconds = time.Since(start).Seconds()
	res, err := em.session.Result()
	if err != nil {
		if errors.Is(err, emulate.ErrNoOutput) {
			err = fmt.Errorf("%w (the emulated run exited with status %d)", err, code)
		}
		return &EmulatedRunError{Stderr: stderr.Bytes(), Err: err}
	}
	em.Trace = tr
	em.Emulation.Images, em.Emulation.Threads, em.Emulation.ImageThreads = res.Images, res.Threads, res.ImageThreads
	if f, ok := measure.InterleavingNote(res); ok {
		em.Notes = append(em.Notes, f)
	}
	em.Join(countedCalls(res))
	return nil
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

// countedCalls is the calls of the plugin's result.
func countedCalls(res emulate.Result) CountedCalls {
	c := CountedCalls{Mapped: res.CallMapped, Images: res.CallImages, Calls: make([]dnn.CallCount, len(res.Calls))}
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
