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
// kernels' sweep, a library routine such as DGEMM. Measure runs the table's
// entries in order, each timed as one part of the run; a worker process
// runs one invocation of an entry's job kind. Adding a harness (a library
// primitive, say) is one more entry: its search space of configurations
// lives in its measure, its invocations in its run.
type harness struct {
	// name is the harness's part in tuning.part_seconds and the kind of its
	// jobs; title names it in messages.
	name, title string
	// asked, when set, makes the harness opt-in: it runs only when asked
	// says so, and is otherwise neither run, timed nor said.
	asked func(o Options) bool
	// probe says why the harness is not to run ("" when it is), before
	// anything is measured (the table says so, the document does not).
	probe func(o Options) string
	// skipFlag is the code of the document's flag when measure finds it
	// cannot run (none when "").
	skipFlag string
	// measure searches the harness's configurations on the run's thread
	// scopes and adds its roofs to the report. It returns a *skipError
	// when it finds it cannot run after all (a library that will not load).
	measure func(ctx context.Context, r *run) error
	// run serves one invocation of a job of this kind (nil for a harness
	// that measures in this process only).
	run func(ctx context.Context, job Job) (Reply, error)
}

// harnesses is the table, in the order Measure runs it. DGEMM comes after
// the memory-bound sweeps: right after seconds of FMA kernels on every
// core, this VM's DGEMM ran 1.4% slower than after idling (3 pairs, C
// loop), as if the host lowered the clock. The bandwidth roofs, and FMA
// roofs far below their scope's others, are rechecked after it, at another
// moment of the machine's (the time counts as bandwidth's and compute's).
var harnesses = []harness{
	{name: "compute", title: "compute", measure: measureComputeRoofs, run: runCompute},
	{name: "bandwidth", title: "bandwidth", measure: measureBandwidthRoofs},
	{name: "dgemm", title: "DGEMM", probe: probeDGEMM, skipFlag: roofline.FlagDGEMMSkipped, measure: measureDGEMMRoof, run: runDgemm},
	{name: "compute", title: "compute recheck", measure: recheckComputeRoofs},
	{name: "bandwidth", title: "bandwidth recheck", measure: recheckBandwidthRoofs},
	{name: "dnn", title: "oneDNN ceilings", asked: askedDNN, skipFlag: roofline.FlagLibrarySkipped, measure: measureDNNRoofs, run: runDNN},
}

// run is what one Measure call's harnesses share.
type run struct {
	o      Options
	rep    *Report
	tally  *tally
	scopes [][]int
	// spare maps a one-thread scope's CPU to the core its bandwidth roofs
	// are rechecked on (spareCores); a CPU without one is rechecked on
	// itself.
	spare map[int]int
	// topo says which core type each CPU is, for the flags.
	topo   machine.Topology
	caches machine.Caches
	// numaNodes counts the memory nodes (0 when the kernel shows none).
	numaNodes int
	units     fmaPipes
	ghz       float64
	// swept are the bandwidth roofs the recheck measures again, on
	// operands from pool.
	swept []sweptRoof
	pool  *operandPool
	// memLimit bounds what a sweep places.
	memLimit memoryLimit
	// computed are the compute roofs, of which the recheck measures the
	// far-low FMA ones again.
	computed []measuredCompute
}

// release drops the sweeps' operands and gives them back to the system
// now, not at the collector's leisure: a process that measured roofs goes
// on (tests, a caller of Measure), and a child it forks starts with its
// resident set. Measure calls it however it ends, the recheck once done.
func (r *run) release() {
	r.pool, r.swept = nil, nil
	freeDropped()
}

// skipError is why a harness has no roofs when that is not a failure.
type skipError struct{ why string }

func (e *skipError) Error() string { return e.why }

// runHarnesses measures every harness in turn, timing each as a part.
func runHarnesses(ctx context.Context, r *run) error {
	part := partTimer(&r.rep.Roofs.Tuning)
	for _, h := range harnesses {
		if h.asked != nil && !h.asked(r.o) {
			continue
		}
		if h.probe != nil {
			if why := h.probe(r.o); why != "" {
				// Not asked for: said in the table, not flagged.
				r.rep.Skipped = append(r.rep.Skipped, Skip{Harness: h.title, Why: why})
				part(h.name)
				continue
			}
		}
		err := h.measure(ctx, r)
		var skip *skipError
		switch {
		case errors.As(err, &skip):
			r.rep.Skipped = append(r.rep.Skipped, Skip{Harness: h.title, Why: skip.why})
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

// jobRunner is the harness that serves a job kind.
func jobRunner(kind string) (func(context.Context, Job) (Reply, error), error) {
	for _, h := range harnesses {
		if h.name == kind && h.run != nil {
			return h.run, nil
		}
	}
	return nil, fmt.Errorf("unknown job kind %q", kind)
}

func measureComputeRoofs(ctx context.Context, r *run) error {
	comp, skipped := kernels.ComputeKernels()
	if r.o.Quick {
		comp = widestFMA(comp)
	}
	flagSkipped(r.rep, skipped)
	for _, cpus := range r.scopes {
		start := time.Now()
		for _, k := range comp {
			m, err := measureCompute(ctx, r.o, r.rep, r.tally, k, cpus, r.units, r.ghz)
			if err != nil {
				return err
			}
			r.computed = append(r.computed, m)
		}
		r.rep.step("compute", threadsWord(len(cpus)), time.Since(start))
	}
	noteAboveTheory(r.rep, r.ghz)
	return nil
}

func measureBandwidthRoofs(ctx context.Context, r *run) error {
	bw, skipped := kernels.BandwidthKernels()
	flagSkipped(r.rep, skipped)
	r.pool = newOperandPool(r.numaNodes <= 1, widest(r.scopes))
	for _, cpus := range r.scopes {
		swept, err := measureBandwidth(ctx, r.o, r.rep, r.tally, r.pool, bw, cpus, r.caches, r.memLimit)
		if err != nil {
			return err
		}
		r.swept = append(r.swept, swept...)
	}
	r.rep.Roofs.CacheSource = cacheSource(r.rep.Roofs.Bandwidth)
	return nil
}

func probeDGEMM(o Options) string {
	if o.NoDGEMM {
		return "not asked for (--no-dgemm)"
	}
	return ""
}

func measureDGEMMRoof(ctx context.Context, r *run) error {
	return measureDGEMM(ctx, r.o, r.rep, r.tally, widest(r.scopes))
}
