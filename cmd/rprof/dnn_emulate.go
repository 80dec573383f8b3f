package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/rprof/rprof/dnn"
	"github.com/rprof/rprof/internal/unit"
	"github.com/rprof/rprof/machine"
	"github.com/rprof/rprof/measure"
	"github.com/rprof/rprof/measure/emulate"
	"github.com/rprof/rprof/regions"
	"github.com/rprof/rprof/roofline"
)

// emulatedDNN is the counted run of rprof dnn --count emulate: the program
// once more under QEMU with rprof's plugin counting every
// dnnl_primitive_execute call on its own, its calls joined to that run's
// own verbose trace. QEMU offers up to AVX2, so oneDNN may pick other
// implementations than in the timed native run; dnn.MatchCounted pairs the
// groups by problem.
type emulatedDNN struct {
	session *emulate.Session
	probe   regions.Probe
	// trace and groups are the emulated run's; groups carry their calls'
	// counts when the join succeeded.
	trace  *dnn.Trace
	groups []*dnn.Group
	// mismatch says why no call was attributed ("" when they were).
	mismatch  string
	emulation roofline.Emulation
	notes     []roofline.Flag
}

// prepareDNNEmulation checks the emulator and resolves library's
// dnnl_primitive_execute before anything runs.
func prepareDNNEmulation(ctx context.Context, command []string, library string) (*emulatedDNN, error) {
	q, err := emulate.FindQEMU(ctx)
	if err != nil {
		return nil, &exitError{code: exitInternal, err: fmt.Errorf("rprof dnn --count emulate: %w", err)}
	}
	path, err := exec.LookPath(command[0])
	if err != nil {
		return nil, &exitError{code: exitNotFound, err: err}
	}
	if path, err = filepath.Abs(path); err != nil {
		return nil, &exitError{code: exitInternal, err: err}
	}
	spec, err := regions.ParseSpec(library + ":" + dnnlExecute)
	if err != nil {
		return nil, usagef("--library %s: %v", library, err)
	}
	probes, err := regions.Resolver{Target: path, Env: os.Environ()}.Resolve([]regions.Spec{spec})
	if err != nil {
		return nil, &exitError{code: exitInternal, err: fmt.Errorf("rprof dnn --count emulate: %w", err)}
	}
	model := emulate.HostCacheModel()
	s, err := emulate.NewSession(q, model)
	if err != nil {
		return nil, &exitError{code: exitInternal, err: err}
	}
	em := &emulatedDNN{session: s, probe: probes[0]}
	if err := s.CountCalls(em.probe.Path, em.probe.Addr, em.probe.Size); err != nil {
		s.Close()
		return nil, &exitError{code: exitInternal, err: fmt.Errorf("rprof dnn --count emulate: %w", err)}
	}
	em.emulation = roofline.Emulation{
		Emulator: fmt.Sprintf("%s %s", emulate.QEMUBinary, q.Version), PluginAPI: q.PluginAPI,
		ISA: measure.EmulatedISA, CacheModel: model.String(), CacheModelSource: model.Source,
	}
	if cpu, err := machine.ReadCPU(os.DirFS("/proc")); err == nil {
		em.notes = measure.EmulationNotes(cpu, model)
	}
	return em, nil
}

func (em *emulatedDNN) close() { em.session.Close() }

// run runs command under emulation (its stdout and stderr kept back, the
// latter shown if the run fails) and joins the counted calls to the run's
// trace.
func (em *emulatedDNN) run(ctx context.Context, e *env, command []string) error {
	fmt.Fprintf(e.stderr, "rprof dnn: counting %s calls under %s (slower than native) ...\n", dnnlExecute, em.emulation.Emulator)
	path, _ := exec.LookPath(command[0])
	argv, err := em.session.Argv(path, command)
	if err != nil {
		return &exitError{code: exitInternal, err: err}
	}
	var stderr bytes.Buffer
	start := time.Now()
	tr := &dnn.Trace{Ordered: true}
	code, err := runVerboseTo(ctx, tr, argv, nil, io.Discard, &stderr)
	if err != nil || ctx.Err() != nil {
		return err
	}
	em.emulation.Seconds = time.Since(start).Seconds()
	res, err := em.session.Result()
	if err != nil {
		e.stderr.Write(stderr.Bytes())
		if errors.Is(err, emulate.ErrNoOutput) {
			err = fmt.Errorf("%w (the emulated run exited with status %d)", err, code)
		}
		return &exitError{code: exitInternal, err: fmt.Errorf("rprof dnn --count emulate: %w", err)}
	}
	em.trace = tr
	em.emulation.Images, em.emulation.Threads, em.emulation.ImageThreads = res.Images, res.Threads, res.ImageThreads
	if f, ok := measure.InterleavingNote(res); ok {
		em.notes = append(em.notes, f)
	}
	em.join(res)
	return nil
}

// join attributes the counted calls to the emulated trace's executions,
// or says why not.
func (em *emulatedDNN) join(res emulate.Result) {
	switch {
	case !res.CallMapped:
		em.mismatch = fmt.Sprintf("the emulated run never loaded %s: the program's oneDNN is another file (give it with --library)", em.probe.Path)
	case res.CallImages > 1:
		em.mismatch = fmt.Sprintf("%d processes of the emulated run called %s: their calls have no order between them", res.CallImages, dnnlExecute)
	}
	if em.mismatch != "" {
		em.groups = em.trace.Groups()
		return
	}
	calls := make([]dnn.CallCount, len(res.Calls))
	for i, c := range res.Calls {
		work := map[string]float64{}
		for p, v := range c.Work {
			if v > 0 {
				work[p] = float64(v)
			}
		}
		q := float64(c.DRAM.Total())
		calls[i] = dnn.CallCount{Thread: c.Thread, WorkByPrecision: work, TrafficBytes: &q, Overlapped: c.Overlapped}
	}
	err := em.trace.Join(calls)
	var me *dnn.CallMismatchError
	if errors.As(err, &me) {
		em.mismatch = fmt.Sprintf("%d counted calls for %d executions in the emulated run's trace", me.Calls, me.Execs)
	}
	em.groups = em.trace.Groups()
}

// apply matches the timed groups with the counted ones and sets the point
// options of counted points; calls that could not be attributed leave the
// groups analytic (annotate flags them).
func (em *emulatedDNN) apply(timed []*dnn.Group, o *dnn.PointOptions) {
	if em.mismatch != "" {
		return
	}
	dnn.MatchCounted(timed, em.groups)
	o.CountSource, o.CountNotes, o.Emulation = roofline.SourceEmulated, em.notes, &em.emulation
}

// annotate flags every point when no call could be attributed.
func (em *emulatedDNN) annotate(points []roofline.Point) {
	if em.mismatch == "" {
		return
	}
	for i := range points {
		points[i].Flags = append(points[i].Flags, roofline.Flag{Code: roofline.FlagCallMismatch, Subject: roofline.SubjectWork,
			Message: "counted calls not attributed: " + em.mismatch})
	}
}

// writeDNNEmulated prints, for the groups shown in the table (same
// numbering), the counted figures beside the analytic ones.
func writeDNNEmulated(w io.Writer, em *emulatedDNN, groups []*dnn.Group, top int) {
	fmt.Fprintf(w, " Counted beside analytic, per call (%s calls of %s under %s, %s; emulated run %.1f s):\n",
		dnnlExecute, filepath.Base(em.probe.Path), em.emulation.Emulator, em.emulation.ISA, em.emulation.Seconds)
	fmt.Fprintf(w, " W counted exactly; Q modelled DRAM bytes (cache model %s); medians over the counted calls\n", em.emulation.CacheModel)
	writeInterleavedAdvice(w, " ", em.notes)
	if em.mismatch != "" {
		fmt.Fprintf(w, "  not attributed: %s\n\n", em.mismatch)
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
			orUnknown(c.WorkFlops, unit.Count), orUnknown(a.WorkFlops, unit.Count), ratioText(c.WorkFlops, a.WorkFlops),
			orUnknown(c.TrafficBytes, unit.Count), orUnknown(a.TrafficBytes, unit.Count), ratioText(c.TrafficBytes, a.TrafficBytes), as)
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
