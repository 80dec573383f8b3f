package roofs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rprof/rprof/machine"
	"github.com/rprof/rprof/roofline"
	"github.com/rprof/rprof/roofs/kernels"
)

// A harness measures one family of roofs: the FMA kernels, the bandwidth
// kernels' sweep, a library routine such as DGEMM. runHarnesses runs them
// in order, each timed as one part of the run, and hands each what it
// needs as arguments: the run, the machine's figures, and the results of
// the harnesses before it (the rechecks take the roofs their harness
// measured). A worker process runs one invocation of a job kind
// (jobRunners).
type harness struct {
	// name is the harness's part in tuning.part_seconds; title names it
	// in messages.
	name, title string
	// notAsked leaves an opt-in harness out: it is then neither run,
	// timed nor said.
	notAsked bool
	// notRun says why the harness is not to run ("" when it is), before
	// anything is measured (the table says so, the document does not).
	notRun string
	// notRunCode is the Skip's Code when notRun is set.
	notRunCode string
	// skipFlag is the code of the document's flag when measure finds it
	// cannot run (none when "").
	skipFlag string
	// measure searches the harness's configurations and adds its roofs
	// to the report. It returns a *skipError when it finds it cannot run
	// after all (a library that will not load).
	measure func(ctx context.Context) error
}

// run is what every harness of one Measure call shares: the options, the
// thread scopes, and the report and tally they add to.
type run struct {
	o      Options
	rep    *Report
	tally  *tally
	scopes [][]int
}

// host is what Measure found of the machine before the harnesses, for
// those that need it.
type host struct {
	// topo says which core type and memory node each CPU is.
	topo   machine.Topology
	caches machine.Caches
	// spare maps a one-thread scope's CPU to the core its bandwidth
	// roofs are rechecked on (spareCores); a CPU without one is
	// rechecked on itself.
	spare map[int]int
	units fmaPipes
	ghz   float64
	// memLimit bounds what a sweep places.
	memLimit memoryLimit
}

// skipError is why a harness has no roofs when that is not a failure.
type skipError struct {
	why string
	// code is the Skip's Code.
	code string
}

func (e *skipError) Error() string { return e.why }

// runHarnesses measures the harnesses in turn. DGEMM comes after the
// memory-bound sweeps: right after seconds of FMA kernels on every core,
// DGEMM ran slower than after idling, as if the host lowered the clock
// (docs/roofs.md). The bandwidth roofs, and FMA roofs far below their
// scope's others, are rechecked after it, at another moment of the
// machine's (the time counts as bandwidth's and compute's). The sweeps'
// operands go back to the system however it ends.
func runHarnesses(ctx context.Context, r *run, h host) error {
	hs, release := plan(r, h)
	defer release()
	return r.measure(ctx, hs)
}

// plan is the run's harnesses in the order they run, each bound to what
// it needs; release gives back what the bandwidth harness placed.
func plan(r *run, h host) (hs []harness, release func()) {
	var computed []measuredCompute
	swept := &sweptRoofs{}
	return []harness{
		{name: "compute", title: "compute", measure: func(ctx context.Context) (err error) {
			computed, err = measureComputeRoofs(ctx, r, h.units, h.ghz)
			return err
		}},
		{name: "bandwidth", title: "bandwidth", measure: func(ctx context.Context) (err error) {
			swept, err = measureBandwidthRoofs(ctx, r, h.caches, len(h.topo.NUMANodes), h.memLimit)
			return err
		}},
		{name: "dgemm", title: "DGEMM", notRun: dgemmNotRun(r.o), notRunCode: SkipNoDGEMM, skipFlag: roofline.FlagDGEMMSkipped, measure: func(ctx context.Context) error {
			cpus := widest(r.scopes)
			return measureDGEMM(ctx, r.o, r.rep, r.tally, cpus, bestFMA64(r.rep.Roofs.Compute, len(cpus)))
		}},
		{name: "compute", title: "compute recheck", measure: func(ctx context.Context) error {
			return recheckComputeRoofs(ctx, r, computed)
		}},
		{name: "bandwidth", title: "bandwidth recheck", measure: func(ctx context.Context) error {
			return recheckBandwidthRoofs(ctx, r, swept, h.spare, h.topo)
		}},
		{name: "dnn", title: "oneDNN ceilings", notAsked: len(r.o.DNN) == 0, skipFlag: roofline.FlagLibrarySkipped, measure: func(ctx context.Context) error {
			return measureDNNRoofs(ctx, r)
		}},
	}, func() { swept.release() }
}

// measure runs the harnesses in order, timing each as a part.
func (r *run) measure(ctx context.Context, hs []harness) error {
	part := partTimer(&r.rep.Roofs.Tuning)
	for _, h := range hs {
		if h.notAsked {
			continue
		}
		if h.notRun != "" {
			// Not asked for: said in the table, not flagged.
			r.rep.Skipped = append(r.rep.Skipped, Skip{Harness: h.title, Why: h.notRun, Code: h.notRunCode})
			part(h.name)
			continue
		}
		err := h.measure(ctx)
		var skip *skipError
		switch {
		case errors.As(err, &skip):
			r.rep.Skipped = append(r.rep.Skipped, Skip{Harness: h.title, Why: skip.why, Code: skip.code})
			if h.skipFlag != "" {
				r.rep.flag(h.skipFlag, h.title+" skipped: "+skip.why)
			}
		case err != nil:
			return err
		}
		part(h.name)
	}
	return nil
}

// jobRunners serve the job kinds of the harnesses that measure in worker
// processes, one invocation each.
var jobRunners = map[string]func(context.Context, Job) (Reply, error){
	"compute": runCompute,
	"dgemm":   runDgemm,
	"dnn":     runDNN,
}

// jobRunner is the function that serves a job kind.
func jobRunner(kind string) (func(context.Context, Job) (Reply, error), error) {
	if run, ok := jobRunners[kind]; ok {
		return run, nil
	}
	return nil, fmt.Errorf("unknown job kind %q", kind)
}

// measureComputeRoofs measures every compute kernel on every scope; it
// returns the roofs as their searches left them, for the recheck.
func measureComputeRoofs(ctx context.Context, r *run, units fmaPipes, ghz float64) ([]measuredCompute, error) {
	comp, skipped := kernels.ComputeKernels()
	if r.o.Quick {
		comp = widestFMA(comp)
	}
	flagSkipped(r.rep, skipped)
	var computed []measuredCompute
	for _, cpus := range r.scopes {
		start := time.Now()
		for _, k := range comp {
			m, err := measureCompute(ctx, r.o, r.rep, r.tally, k, cpus, units, ghz)
			if err != nil {
				return nil, err
			}
			computed = append(computed, m)
		}
		r.rep.step("compute", threadsWord(len(cpus)), time.Since(start))
	}
	noteAboveTheory(r.rep, ghz)
	return computed, nil
}

// measureBandwidthRoofs sweeps every scope, one after the other, on
// operands placed on numaNodes memory nodes; it returns the roofs as the
// sweeps left them, with their operands, for the recheck.
func measureBandwidthRoofs(ctx context.Context, r *run, caches machine.Caches, numaNodes int, limit memoryLimit) (*sweptRoofs, error) {
	bw, skipped := kernels.BandwidthKernels()
	flagSkipped(r.rep, skipped)
	swept := &sweptRoofs{pool: newOperandPool(numaNodes <= 1, widest(r.scopes))}
	for _, cpus := range r.scopes {
		roofs, err := measureBandwidth(ctx, r.o, r.rep, r.tally, swept.pool, bw, cpus, caches, limit)
		if err != nil {
			return swept, err
		}
		swept.roofs = append(swept.roofs, roofs...)
	}
	r.rep.Roofs.CacheSource = cacheSource(r.rep.Roofs.Bandwidth)
	return swept, nil
}

// dgemmNotRun says why DGEMM is not to run, or "".
func dgemmNotRun(o Options) string {
	if o.NoDGEMM {
		return "not asked for"
	}
	return ""
}
