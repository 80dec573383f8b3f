package roofs

import (
	"context"
	"fmt"
	"math"
	"runtime/debug"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/rprof/rprof/internal/affinity"
	"github.com/rprof/rprof/internal/stats"
	"github.com/rprof/rprof/machine"
	"github.com/rprof/rprof/roofline"
	"github.com/rprof/rprof/roofs/kernels"

	"github.com/rprof/rprof/internal/unit"
)

// A bandwidth sample is whole passes over the working set, as many as last
// about baseSample, as a compute sample does; a pass that takes longer
// (from about 20 MiB up, DRAM's 512 MiB pass takes 5 to 10 ms) is one
// sample. Short samples, because a longer one is not slower work but one
// more likely to hold an interruption (the guest's tick, an exit to the
// host, a neighbour on the core), which the median of short samples leaves
// out, as it does for the compute kernels. DRAM is the exception: there
// samples of a chunk of the pass at a time read lower than whole passes
// (docs/roofs.md).
//
// warmupTime is how long whole passes run before a size's samples: the
// caches fill, the clock settles, and the passes timed give the rate the
// sample's length is set from.
const warmupTime = time.Millisecond

// bandwidthJob measures one bandwidth kernel at the working-set sizes of a
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
	// uneven is, at each size, how much longer the slowest thread took
	// over its share of the samples than the fastest.
	uneven map[int64]unevenness
}

// unevenness is how much longer the slowest of a gang's threads took over
// its equal share of the samples than the fastest (ratio 1: alike), and
// on which CPUs they ran.
type unevenness struct {
	ratio      float64
	slow, fast int
}

// arrays are one kernel's operands on one thread, carved from the
// thread's buffer (kernels.Bandwidth.Carve).
type arrays struct{ a, b, c []float64 }

// allocOperands allocates every thread's operand buffer for working sets up
// to ws and first-touches it on the pinned threads, so that the pages are
// placed near the CPU that uses them. Every kernel and size takes its
// arrays from it: first-touching a gigabyte costs more than measuring it
// (docs/roofs.md), and an interrupt stops it between chunks.
func allocOperands(ctx context.Context, ks []kernels.Bandwidth, cpus []int, ws int64) ([][]float64, error) {
	n, err := operandLen(ks, len(cpus), ws)
	if err != nil {
		return nil, err
	}
	bufs := make([][]float64, len(cpus))
	freeDropped()
	var stop atomic.Bool
	defer context.AfterFunc(ctx, func() { stop.Store(true) })()
	setup := func(w int) { bufs[w] = firstTouch(kernels.Alloc(n), &stop) }
	if err := affinity.RunPinned(cpus, setup, func(int) {}); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return bufs, nil
}

// operandLen is the length of each of threads threads' operand buffers for
// working sets up to ws: one buffer serves every kernel, whatever arrays it
// runs over (kernels.SharedLen). Three separate arrays (b for the kernels
// over b alone, a and c of half its length for daxpy) placed twice the
// pages, and placing pages is much of a quick run where the host takes back
// the memory a guest frees (docs/roofs.md).
func operandLen(ks []kernels.Bandwidth, threads int, ws int64) (int, error) {
	for _, k := range ks {
		if int(float64(ws)/float64(threads)/k.WorkingSetPerElement()) <= 0 {
			return 0, fmt.Errorf("%s: working set %d bytes is too small for %s", k.Name, ws, threadsWord(threads))
		}
	}
	return kernels.SharedLen(int(ws / int64(8*threads))), nil
}

// firstTouch writes ones over x in chunks of 512 KiB, stopping between
// chunks once stop is set, and returns x.
func firstTouch(x []float64, stop *atomic.Bool) []float64 {
	const chunk = 1 << 16
	for i := 0; i < len(x) && !stop.Load(); i += chunk {
		fill(x[i:min(i+chunk, len(x))], 1)
	}
	return x
}

// operandPool keeps the sweeps' operands from one thread scope to the next.
// Where the host takes back the memory a guest frees (a balloon reporting
// free pages), every fresh page costs a fault in the guest and one in the
// host, the largest part of a quick run (docs/roofs.md). Reusing them is
// safe where every CPU shares one memory node (shared); with several nodes
// each scope places its own, each thread's pages near its CPU.
type operandPool struct {
	shared bool
	// placers are the CPUs that first-touch shared buffers, together:
	// with one memory node, where a page is placed does not matter, and
	// placing in halves on two CPUs takes about half the time where the
	// host's faults dominate it (docs/roofs.md).
	placers []int
	buf     []float64
}

func newOperandPool(shared bool, placers []int) *operandPool {
	return &operandPool{shared: shared, placers: placers}
}

// withSlack is n elements and room for what the other scopes' rounding
// adds: per-thread buffers rounded up to whole huge pages with room for
// the arrays' alignment (kernels.SharedLen), and working sets rounded up
// to a quantum that grows with the threads.
func (p *operandPool) withSlack(n int) int {
	return n + n/256 + kernels.SharedLen(1)*len(p.placers)
}

// operands returns every thread's operand buffer for working sets up to
// ws on cpus: fresh ones unless shared, else parts of the pool's buffer,
// which grows (placed anew, split among the placers) when too small.
func (p *operandPool) operands(ctx context.Context, ks []kernels.Bandwidth, cpus []int, ws int64) ([][]float64, error) {
	if !p.shared {
		return allocOperands(ctx, ks, cpus, ws)
	}
	n, err := operandLen(ks, len(cpus), ws)
	if err != nil {
		return nil, err
	}
	threads := len(cpus)
	if len(p.buf) < threads*n {
		p.buf = nil // the old buffer goes before the new one comes
		freeDropped()
		if err := p.place(ctx, p.withSlack(threads*n)); err != nil {
			p.buf = nil
			return nil, err
		}
	}
	bufs := make([][]float64, threads)
	for w := range bufs {
		// n is a whole number of huge pages, so each thread's part starts
		// on a boundary, as a buffer of its own would.
		bufs[w] = p.buf[w*n : (w+1)*n : (w+1)*n]
	}
	return bufs, nil
}

// ownOperands are a scope's operands to keep for its recheck: none when
// the pool is shared (the recheck takes them from it).
func ownOperands(p *operandPool, ops [][]float64) [][]float64 {
	if p.shared {
		return nil
	}
	return ops
}

// freeDropped returns the operands dropped before a larger set is placed
// to the system first, so that a sweep that grows holds one set at a
// time, not the old one until the collector's next cycle as well.
func freeDropped() { debug.FreeOSMemory() }

// place allocates the pool's buffer of n elements and first-touches it on
// the placers, each its share.
func (p *operandPool) place(ctx context.Context, n int) error {
	cpus := p.placers
	p.buf = kernels.Alloc(n)
	var stop atomic.Bool
	defer context.AfterFunc(ctx, func() { stop.Store(true) })()
	err := affinity.RunPinned(cpus, func(w int) {
		firstTouch(p.buf[len(p.buf)*w/len(cpus):len(p.buf)*(w+1)/len(cpus)], &stop)
	}, func(int) {})
	if err != nil {
		return err
	}
	return ctx.Err()
}

// chunkElems is about how many elements one call of a bandwidth kernel
// covers: a few milliseconds in DRAM, tens of microseconds in L1.
const chunkElems = 1 << 20

// evaluate measures the job's kernel at working set ws on each thread's
// operand buffer from allocOperands or an operandPool.
func (j *bandwidthJob) evaluate(ctx context.Context, ws int64, bufs [][]float64) (float64, roofline.Interval, error) {
	threads := len(j.cpus)
	n := int(float64(ws) / float64(threads) / j.kernel.WorkingSetPerElement())
	ops := make([]arrays, threads)
	for w, buf := range bufs {
		ops[w].a, ops[w].b, ops[w].c = j.kernel.Carve(buf, n)
	}
	// An interrupt ends a pass loop between chunks of passes over about
	// chunkElems elements, so Ctrl-C is felt within milliseconds; a
	// chunk is one call of the kernel, whose Go wrapper a pass at L1
	// sizes would otherwise pay each time.
	chunk := max(1, chunkElems/max(n, 1))
	var stop atomic.Bool
	defer context.AfterFunc(ctx, func() { stop.Store(true) })()
	// The warm-up runs passes in doubling batches, reading the clock
	// between batches only: at L1 a pass takes tens of nanoseconds, and
	// a clock read or a shared counter's cache line per pass made it
	// look several times longer (docs/roofs.md).
	var passes int // worker 0's: the sample's length is set from it
	warm := func(w int) {
		start, done := time.Now(), 0
		for batch := 1; done == 0 || time.Since(start) < warmupTime; batch *= 2 {
			for p := 0; p < batch; p += chunk {
				if stop.Load() {
					return
				}
				j.kernel.Run(ops[w].a, ops[w].b, ops[w].c, 3, min(chunk, batch-p))
			}
			done += batch
		}
		if w == 0 {
			passes = done
		}
	}
	var in stats.Inner
	err := affinity.RunGang(j.cpus, func(g *affinity.Gang) error {
		d := g.Run(warm)
		if err := ctx.Err(); err != nil {
			return err
		}
		reps := samplePasses(passes, d)
		body := func(w int) {
			op := ops[w]
			for p := 0; p < reps; p += chunk {
				if stop.Load() {
					return
				}
				j.kernel.Run(op.a, op.b, op.c, 3, min(chunk, reps-p))
			}
		}
		bytes := float64(n*reps*threads) * j.kernel.BytesPerElement
		before := g.Busy()
		var err error
		in, err = stats.Iterate(ctx, j.inner, j.best[ws], func() (float64, time.Duration, error) {
			d := g.Run(body)
			if err := ctx.Err(); err != nil {
				return 0, 0, err // a cut-short sample is no sample
			}
			return roofline.Rate(bytes, d.Seconds()), d, nil
		})
		if j.uneven == nil {
			j.uneven = map[int64]unevenness{}
		}
		j.uneven[ws] = uneven(j.cpus, before, g.Busy())
		return err
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

// uneven compares the workers of a gang on cpus between two readings of
// Gang.Busy: the slowest one's time over the fastest's.
func uneven(cpus []int, before, after []time.Duration) unevenness {
	u := unevenness{ratio: 1, slow: cpus[0], fast: cpus[0]}
	var lo, hi time.Duration
	for w := range after {
		d := after[w] - before[w]
		if w == 0 || d < lo {
			lo, u.fast = d, cpus[w]
		}
		if w == 0 || d > hi {
			hi, u.slow = d, cpus[w]
		}
	}
	if lo > 0 {
		u.ratio = float64(hi) / float64(lo)
	}
	return u
}

// samplePasses is how many whole passes make a sample of about baseSample
// (at least one), from warm-up passes that took d.
func samplePasses(passes int, d time.Duration) int {
	perPass := max(d/time.Duration(max(passes, 1)), 1)
	return max(1, int(math.Round(float64(baseSample)/float64(perPass))))
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

// bandwidthBudget bounds one size's iteration loop: in the caches it holds
// the most samples (200) of about baseSample; at DRAM sizes only two to
// four whole passes, raising it brought the DRAM ceiling no closer to
// --fixed's and cost much of that part's speedup (docs/roofs.md).
// bandwidthMinCount is the fewest samples before a size may converge:
// sixteen samples of 0.2 ms could all fall into one episode of interference
// (a few milliseconds); 48 span about 10 ms.
const (
	bandwidthBudget   = 50 * time.Millisecond
	bandwidthMinCount = 48
)

// dramRecheckBudget bounds the recheck of a DRAM roof: 30 to 40 whole
// passes instead of the sweep's three to five. DRAM passes speed up over
// the first tenths of a second, so the longer recheck reads what the
// machine sustains (docs/roofs.md).
const dramRecheckBudget = 400 * time.Millisecond

// bandwidthRule is the stop rule of one size's evaluation: --quick halves
// the budget and the fewest samples.
func (o Options) bandwidthRule() stats.StopRule {
	return o.bandwidthRuleWithin(bandwidthBudget)
}

// bandwidthRuleWithin is bandwidthRule with another budget.
func (o Options) bandwidthRuleWithin(budget time.Duration) stats.StopRule {
	minCount := bandwidthMinCount
	if o.Quick {
		budget, minCount = budget/2, minCount/2
	}
	rule := o.innerRule(budget)
	if o.Fixed == 0 {
		rule.MinCount = minCount
	}
	return rule
}

// sizeQuantum is what working-set sizes are multiples of: one loop block of
// the kernel with the most arrays on every thread, the same for all
// kernels so that they share sizes.
func sizeQuantum(ks []kernels.Bandwidth, threads int) int64 {
	var widest float64
	for _, k := range ks {
		widest = max(widest, k.WorkingSetPerElement())
	}
	return int64(threads) * 64 * int64(widest)
}

// envelope is a sweep of every bandwidth kernel: at each size the best
// kernel's rate, which kernel that was and its evaluation, and every
// evaluation for the tuning summary.
type envelope struct {
	points   []sweepPoint
	kernelAt map[int64]kernels.Bandwidth
	resultAt map[int64]stats.Result
	unevenAt map[int64]unevenness
	results  []stats.Result
	// placing is the time taken to allocate and first-touch the operands.
	placing time.Duration
	// ops are the threads' operand buffers, kept for the recheck.
	ops [][]float64
}

// sweepEnvelope measures every kernel at each size on cpus, the sizes
// smallest first, all on one set of shared operands; a size's
// evaluations stop below the best kernel there (stop condition 4).
func sweepEnvelope(ctx context.Context, o Options, pool *operandPool, ks []kernels.Bandwidth, cpus []int, sizes []int64) (envelope, error) {
	s := newEnvelopeSweep(o, pool, ks, cpus)
	err := s.extend(ctx, sizes)
	return s.env, err
}

// envelopeSweep is a sweep of every bandwidth kernel that grows: extend
// measures the sizes past those measured so far.
type envelopeSweep struct {
	o    Options
	pool *operandPool
	ks   []kernels.Bandwidth
	cpus []int
	jobs []*bandwidthJob
	// lead is the kernel that was best at the last size: each size starts
	// with it, so that the others stop once they are clearly below it
	// (the stop rule's condition 4, after bestMinCount samples) instead
	// of running until they converge.
	lead int
	env  envelope
}

func newEnvelopeSweep(o Options, pool *operandPool, ks []kernels.Bandwidth, cpus []int) *envelopeSweep {
	s := &envelopeSweep{o: o, pool: pool, ks: ks, cpus: cpus,
		env: envelope{kernelAt: map[int64]kernels.Bandwidth{}, resultAt: map[int64]stats.Result{}, unevenAt: map[int64]unevenness{}}}
	best := map[int64]float64{}
	for _, k := range ks {
		s.jobs = append(s.jobs, &bandwidthJob{kernel: k, cpus: cpus, inner: o.bandwidthRule(), best: best})
	}
	return s
}

// extend measures the sizes past the largest measured so far, on
// operands for the largest of them.
func (s *envelopeSweep) extend(ctx context.Context, sizes []int64) error {
	var fresh []int64
	for _, ws := range sizes {
		if n := len(s.env.points); n == 0 || ws > s.env.points[n-1].WorkingSetBytes {
			fresh = append(fresh, ws)
		}
	}
	if len(fresh) == 0 {
		return nil
	}
	// One allocation at the largest size serves every size: each size runs
	// on the prefix it needs. First-touching each size's own arrays cost
	// about twice the largest size's (the sizes grow geometrically), and
	// first-touching dominated --quick's sweep on a loaded 2-vCPU guest.
	top := fresh[len(fresh)-1]
	s.o.progress("bandwidth, %s: placing %s of operands", threadsWord(len(s.cpus)), unit.Bytes(top))
	placing := time.Now()
	s.env.ops = nil // the smaller operands go before larger ones come
	ops, err := s.pool.operands(ctx, s.ks, s.cpus, top)
	if err != nil {
		return fmt.Errorf("sweep operands: %w", err)
	}
	s.env.placing += time.Since(placing)
	s.env.ops = ops
	pts, err := sweep(ctx, fresh, s.at, func(done, total int) {
		s.o.progress("bandwidth, %s: %d/%d sizes up to %s", threadsWord(len(s.cpus)), done, total, unit.Bytes(top))
	})
	s.env.points = append(s.env.points, pts...)
	s.env.results = nil
	for _, j := range s.jobs {
		s.env.results = append(s.env.results, j.results...)
	}
	return err
}

// at is the envelope at one size: the best kernel's rate there.
func (s *envelopeSweep) at(ctx context.Context, ws int64) (float64, roofline.Interval, error) {
	var top float64
	var topCI roofline.Interval
	winner := s.lead
	for i := range s.jobs {
		if err := ctx.Err(); err != nil {
			return 0, roofline.Interval{}, err
		}
		w := (s.lead + i) % len(s.jobs)
		j := s.jobs[w]
		gbps, ci, err := j.evaluate(ctx, ws, s.env.ops)
		if err != nil {
			return 0, roofline.Interval{}, fmt.Errorf("%s-%s: %w", j.kernel.ISA, j.kernel.Name, err)
		}
		if gbps > top {
			top, topCI, winner = gbps, ci, w
			s.env.kernelAt[ws] = j.kernel
			s.env.resultAt[ws] = j.results[len(j.results)-1]
			s.env.unevenAt[ws] = j.uneven[ws]
		}
	}
	s.lead = winner
	return top, topCI, nil
}

// sweepFloorPerThread is where a sweep starts, per thread, when no cache
// size is known: well inside any L1 data cache (16 KiB and up since 2000).
const sweepFloorPerThread = 4 << 10

// sweepSpan is the range of a sweep's first pass: sweepRange's over the
// known levels (from sweepFloorPerThread per thread when none is known),
// and up to dramMinBytes at least, where DRAM is first read. The sweep
// grows from there by octaves while DRAM's plateau is not established
// (measureBandwidth).
func sweepSpan(known knownCaches, threads int) (lo, hi int64, err error) {
	lo, hi = int64(sweepFloorPerThread*threads), int64(dramMinBytes)
	if len(known.Levels) > 0 {
		kl, kh, err := sweepRange(known.Levels)
		if err != nil {
			return 0, 0, err
		}
		lo, hi = kl, max(hi, kh)
	}
	// Whole octaves below hi, so that the sweep's sizes fall on hi and
	// on every octave it grows by, rather than up to twice past it
	// (docs/roofs.md).
	lo = hi >> int(math.Floor(math.Log2(float64(hi)/float64(lo))))
	return lo, hi, nil
}

// memoryLimit is the most a sweep may place, and what set it.
type memoryLimit struct {
	Bytes int64
	// From says where Bytes came from: "a quarter of MemAvailable (5.7
	// GiB)".
	From string
}

// sweepGrowth is what growSweep ended with: the ceilings read from the
// sweep at its end, whether DRAM's plateau was established, and whether
// the memory limit stopped the sweep.
type sweepGrowth struct {
	plateaus        []plateau
	levels          []levelSize
	flags           []roofline.Flag
	settled, capped bool
}

// growSweep measures the sweep from lo to hi, then grows it by an octave
// at a time until DRAM's plateau is established (dramSettled), it has
// grown to growthTop, or it reaches the memory limit; hi and the growth
// are cut to the limit. Each pass reads the ceilings again: the effective
// sizes it finds say where DRAM lies.
//
// extend measures the sizes not measured yet (envelopeSweep.extend) and
// returns every point so far, smallest first; sizes are multiples of
// quantum.
func growSweep(ctx context.Context, extend func(context.Context, []int64) ([]sweepPoint, error), quantum int64, known knownCaches, lo, hi int64, perOctave int, limit memoryLimit) (sweepGrowth, error) {
	top := min(hi, limit.Bytes)
	for {
		sizes, err := sizesUpTo(lo, max(top, lo), perOctave, quantum)
		if err != nil {
			return sweepGrowth{}, err
		}
		points, err := extend(ctx, sizes)
		if err != nil {
			return sweepGrowth{}, err
		}
		var g sweepGrowth
		g.plateaus, g.levels, g.flags, err = ceilings(points, known)
		if err != nil {
			return sweepGrowth{}, err
		}
		g.settled = dramSettled(points, g.levels, perOctave)
		want := growthTop(g.levels)
		g.capped = top >= limit.Bytes && limit.Bytes < want
		if g.settled || top >= want || top >= limit.Bytes {
			return g, nil
		}
		// An octave more, but not past growthTop: an octave past it
		// places twice the memory to read a window DRAM's plateau
		// already covers (docs/roofs.md).
		top = min(2*top, want, limit.Bytes)
	}
}

// limitFlags say where the memory limit held a sweep back: below the
// span the declared sizes asked for (hi), or short of DRAM.
func limitFlags(g sweepGrowth, limit memoryLimit, hi, top int64) []roofline.Flag {
	var flags []roofline.Flag
	if hi > limit.Bytes {
		flags = append(flags, roofline.Flag{Code: roofline.FlagMemoryLimit, Message: fmt.Sprintf(
			"the sweep would have placed %s (twice the largest declared cache, or %s), more than %s: it stops at %s",
			unit.Bytes(hi), unit.Bytes(dramMinBytes), limit.From, unit.Bytes(top))})
	}
	if !g.settled && g.capped {
		flags = append(flags, roofline.Flag{Code: roofline.FlagDRAMNotReached, Message: fmt.Sprintf(
			"DRAM not reached: up to %s (%s), the sweep's last sizes past the last cache's edge do not yet agree on one rate; the roofs measured are the caches', and there is no DRAM roof",
			unit.Bytes(top), limit.From)})
	}
	return flags
}

// measuredSizes says which levels' sizes come from the sweep's edges; ""
// when none do.
func measuredSizes(sizes []levelSize) string {
	var parts []string
	for _, l := range sizes {
		if l.Source == roofline.CacheSourceMeasured {
			parts = append(parts, fmt.Sprintf("%s ends between %s and %s", l.Name, unit.Bytes(l.EdgeLo), unit.Bytes(l.EdgeHi)))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "cache sizes measured from the sweep's steps (no trusted size for them): " + strings.Join(parts, ", ")
}

// measureBandwidth sweeps every kernel over the same working-set sizes and
// reads the levels' ceilings from the envelope, the best kernel at each
// size: a level's roof is what the best kernel reaches there, and the
// kernel is recorded with it, named with its ISA. Every ISA is swept: the
// widest is not always the fastest (on Zen 4, which splits 512-bit
// operations, AVX2 beat AVX-512 in DRAM (docs/roofs.md)), and stop
// condition 4 ends a kernel's evaluation early where it cannot beat the
// best so far.
func measureBandwidth(ctx context.Context, o Options, rep *Report, t *tally, pool *operandPool, ks []kernels.Bandwidth, cpus []int, caches machine.Caches, limit memoryLimit) ([]sweptRoof, error) {
	known := knownCaches{Levels: scopeCaches(caches.Instances, cpus), Source: caches.Source}
	known.Complete = caches.Complete && len(known.Levels) > 0
	lo, hi, err := sweepSpan(known, len(cpus))
	if err != nil {
		return nil, fmt.Errorf("bandwidth on %s: %w", threadsWord(len(cpus)), err)
	}
	// --quick halves the sweep's density (and, in bandwidthRule, each
	// size's budget).
	perOctave := 2
	if o.Quick {
		perOctave = 1
	}
	start := time.Now()
	s := newEnvelopeSweep(o, pool, ks, cpus)
	extend := func(ctx context.Context, sizes []int64) ([]sweepPoint, error) {
		err := s.extend(ctx, sizes)
		return s.env.points, err
	}
	g, err := growSweep(ctx, extend, sizeQuantum(ks, len(cpus)), known, lo, hi, perOctave, limit)
	env := s.env
	t.add(env.results...)
	if err != nil {
		return nil, fmt.Errorf("bandwidth on %s: %w", threadsWord(len(cpus)), err)
	}
	top := env.points[len(env.points)-1].WorkingSetBytes
	rep.step("bandwidth", fmt.Sprintf("%s placing %s", threadsWord(len(cpus)), unit.Bytes(top)), env.placing)
	rep.step("bandwidth", fmt.Sprintf("%s sweep", threadsWord(len(cpus))), time.Since(start)-env.placing)
	plateaus, levels, flags := g.plateaus, g.levels, g.flags
	for _, f := range limitFlags(g, limit, hi, top) {
		rep.flag(f.Code, fmt.Sprintf("%d-thread sweep: %s", len(cpus), f.Message))
	}
	if !g.settled && g.capped {
		// What lies past the last cache's edge is not shown to be DRAM.
		plateaus = slices.DeleteFunc(plateaus, func(p plateau) bool { return p.Level == roofline.LevelDRAM })
	}
	for _, f := range flags {
		rep.flag(f.Code, fmt.Sprintf("%d-thread sweep: %s", len(cpus), f.Message))
	}
	if m := measuredSizes(levels); m != "" {
		rep.flag(roofline.FlagCacheSource, fmt.Sprintf("%d-thread sweep: %s", len(cpus), m))
	}
	rep.Roofs.Caches = append(rep.Roofs.Caches, effectiveCaches(levels, len(cpus))...)
	var swept []sweptRoof
	for _, p := range plateaus {
		kernel := env.kernelAt[p.WorkingSetBytes]
		k := kernel.ISA + "-" + kernel.Name
		roof := roofline.BandwidthRoof{Level: p.Level, Kernel: k,
			Threads: len(cpus), GBytesPerS: p.GBytesPerS, CI: p.CI, WorkingSetBytes: p.WorkingSetBytes,
			IntervalUnknown: !env.resultAt[p.WorkingSetBytes].Estimate.Bounded()}
		if i := slices.IndexFunc(levels, func(l levelSize) bool { return l.Name == p.Level }); i >= 0 {
			roof.LevelBytes, roof.LevelSource = levels[i].Bytes, levels[i].Source
		}
		r := env.resultAt[p.WorkingSetBytes]
		i := rep.addBandwidth(roof, Detail{Config: fmt.Sprintf("%s at %s", k, unit.Bytes(p.WorkingSetBytes)), Invocations: r.Invocations,
			Iterations: r.Iterations, Reasons: r.InnerReasons})
		swept = append(swept, sweptRoof{roof: i, kernel: kernel, cpus: cpus, ops: ownOperands(pool, env.ops), uneven: env.unevenAt[p.WorkingSetBytes], at: time.Now()})
	}
	return swept, nil
}
