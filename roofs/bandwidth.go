package roofs

import (
	"context"
	"fmt"
	"time"

	"github.com/rprof/rprof/internal/affinity"
	"github.com/rprof/rprof/internal/stats"
	"github.com/rprof/rprof/pmu"
	"github.com/rprof/rprof/roofline"
	"github.com/rprof/rprof/roofs/kernels"
)

// minSampleBytes is the traffic one bandwidth sample moves at least: about
// a millisecond inside L1. With 64 MiB (a quarter of that) the early-stopped
// L1 ceilings on this 2-core VM came out 4 to 11% below the --fixed ones in
// three of four runs; with 256 MiB they matched within 1%.
const minSampleBytes = 256 << 20

// bandwidthJob measures one bandwidth kernel at every working-set size of a
// sweep on one thread scope. It runs in this process: each size allocates
// and first-touches its arrays on the pinned threads, so a fresh process per
// invocation would add allocation and page faults, not independence.
type bandwidthJob struct {
	kernel kernels.Bandwidth
	cpus   []int
	inner  stats.StopRule
	// best is the highest rate another kernel reached at each size, for
	// stop condition 4: a kernel that cannot beat it at a size stops early.
	best map[int64]float64
	// results keeps each size's evaluation for the tuning summary.
	results []stats.Result
}

// arrays are one thread's operands.
type arrays struct{ a, b, c []float64 }

// evaluate is a SweepEvaluator.
func (j *bandwidthJob) evaluate(ctx context.Context, ws int64) (float64, roofline.Interval, error) {
	threads := len(j.cpus)
	perThread := int(float64(ws) / float64(threads) / j.kernel.BytesPerElement)
	if perThread <= 0 {
		return 0, roofline.Interval{}, fmt.Errorf("%s: working set %d bytes is too small for %s", j.kernel.Name, ws, threadsWord(threads))
	}
	load := j.kernel.Name == "load"
	ops := make([]arrays, threads)
	setup := func(w int) {
		// Written here, on the pinned thread, so the pages are placed
		// near the CPU that uses them.
		var op arrays
		op.b = fill(kernels.Alloc(perThread), 1)
		if !load {
			op.a, op.c = fill(kernels.Alloc(perThread), 0), fill(kernels.Alloc(perThread), 2)
		}
		ops[w] = op
	}
	if err := affinity.RunPinned(j.cpus, setup, func(int) {}); err != nil {
		return 0, roofline.Interval{}, err
	}
	bytes := float64(len(ops[0].b)) * j.kernel.BytesPerElement * float64(threads)
	reps := max(1, int(minSampleBytes/bytes))
	body := func(w int) {
		op := ops[w]
		for range reps {
			j.kernel.Run(op.a, op.b, op.c, 3)
		}
	}
	// A first pass loads the caches (and settles the clock).
	if _, err := pinnedSample(j.cpus, body); err != nil {
		return 0, roofline.Interval{}, err
	}
	in, err := stats.Iterate(ctx, j.inner, j.best[ws], func() (float64, time.Duration, error) {
		d, err := pinnedSample(j.cpus, body)
		if err != nil {
			return 0, 0, err
		}
		return bytes * float64(reps) / d.Seconds() / 1e9, d, nil
	})
	if err != nil {
		return 0, roofline.Interval{}, err
	}
	j.results = append(j.results, stats.Result{
		Estimate: in.Estimate, Method: j.inner.Method, Invocations: 1, Iterations: len(in.Samples),
		Elapsed: in.Elapsed, Reason: in.Reason, InnerReasons: map[stats.StopReason]int{in.Reason: 1},
	})
	if in.Estimate.Value > j.best[ws] {
		j.best[ws] = in.Estimate.Value
	}
	return in.Estimate.Value, interval(in.Estimate), nil
}

func fill(x []float64, v float64) []float64 {
	for i := range x {
		x[i] = v
	}
	return x
}

// interval is an estimate's interval for a document. JSON has no infinity:
// when the sample was too small for an interval at the confidence asked,
// the sample's range stands in for it.
func interval(e stats.Estimate) roofline.Interval {
	if e.Bounded() {
		return roofline.Interval{Lo: e.Lo, Hi: e.Hi}
	}
	return roofline.Interval{Lo: e.Min, Hi: e.Max}
}

// bandwidthBudget bounds one size's iteration loop. bandwidthMinCount is the
// fewest samples before a size may converge: samples last about a
// millisecond in the caches, and eight of them could all fall into one
// episode of interference; sixteen span more of it.
const (
	bandwidthBudget   = 50 * time.Millisecond
	bandwidthMinCount = 16
)

// measureBandwidth sweeps every kernel over the same working-set sizes and
// reads the levels' ceilings from the envelope, the best kernel at each
// size: a level's roof is what the best kernel reaches there, and the
// kernel is recorded with it, named with its ISA. Every ISA is swept: the
// widest is not always the fastest (on Zen 4, which splits 512-bit
// operations, AVX2 moved 40-42 GB/s of DRAM TRIAD against 28-36 for
// AVX-512), and stop condition 4 ends a kernel's evaluation early where it
// cannot beat the best so far.
func measureBandwidth(ctx context.Context, o Options, rep *Report, t *tally, ks []kernels.Bandwidth, cpus []int, topo pmu.Topology) error {
	levels := ScopeCaches(topo.Caches, cpus)
	lo, hi, err := SweepRange(levels)
	if err != nil {
		return fmt.Errorf("bandwidth on %s: %w", threadsWord(len(cpus)), err)
	}
	perOctave := 2
	if o.Quick {
		perOctave = 1
	}
	// One quantum for all kernels, so they share sizes: a loop block of
	// the kernel with the most bytes per element, on every thread.
	var widest float64
	for _, k := range ks {
		widest = max(widest, k.BytesPerElement)
	}
	sizes, err := SweepSizes(lo, hi, perOctave, int64(len(cpus))*64*int64(widest))
	if err != nil {
		return err
	}
	envelope := make([]SweepPoint, len(sizes))
	kernelAt := map[int64]string{}
	resultAt := map[int64]stats.Result{} // the winning kernel's evaluation
	best := map[int64]float64{}
	for _, k := range ks {
		inner := o.innerRule(bandwidthBudget)
		if o.Fixed == 0 {
			inner.MinCount = bandwidthMinCount
		}
		job := &bandwidthJob{kernel: k, cpus: cpus, inner: inner, best: best}
		points, err := Sweep(ctx, sizes, job.evaluate, func(done, total int) {
			o.progress("bandwidth %s-%s, %s: %d/%d sizes", k.ISA, k.Name, threadsWord(len(cpus)), done, total)
		})
		if err != nil {
			return fmt.Errorf("bandwidth %s on %s: %w", k.Name, threadsWord(len(cpus)), err)
		}
		t.add(job.results...)
		for i, p := range points {
			if p.GBytesPerS > envelope[i].GBytesPerS {
				envelope[i] = p
				kernelAt[p.WorkingSetBytes] = k.ISA + "-" + k.Name
				resultAt[p.WorkingSetBytes] = job.results[i]
			}
		}
	}
	plateaus, flags, err := Plateaus(envelope, levels)
	if err != nil {
		return fmt.Errorf("bandwidth on %s: %w", threadsWord(len(cpus)), err)
	}
	for _, f := range flags {
		rep.flag(f.Code, fmt.Sprintf("%d-thread sweep: %s", len(cpus), f.Message))
	}
	for _, p := range plateaus {
		k := kernelAt[p.WorkingSetBytes]
		rep.Roofs.Bandwidth = append(rep.Roofs.Bandwidth, roofline.BandwidthRoof{Level: p.Level, Kernel: k,
			Threads: len(cpus), GBytesPerS: p.GBytesPerS, CI: p.CI, WorkingSetBytes: p.WorkingSetBytes})
		r := resultAt[p.WorkingSetBytes]
		rep.Details = append(rep.Details, Detail{Kind: "bandwidth", Name: p.Level, Threads: len(cpus),
			Config: fmt.Sprintf("%s at %s", k, FormatBytes(p.WorkingSetBytes)), Invocations: r.Invocations,
			Iterations: r.Iterations, Value: p.GBytesPerS, CI: p.CI, Reasons: r.InnerReasons})
	}
	return nil
}
