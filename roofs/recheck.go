package roofs

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/rprof/rprof/internal/stats"
	"github.com/rprof/rprof/internal/unit"
	"github.com/rprof/rprof/machine"
	"github.com/rprof/rprof/roofline"
	"github.com/rprof/rprof/roofs/kernels"
)

// sweptRoofs are the bandwidth roofs as the sweeps left them, for the
// recheck, with the pool of operands they share.
type sweptRoofs struct {
	roofs []sweptRoof
	pool  *operandPool
}

// release drops the sweeps' operands and gives them back to the system
// now, not at the collector's leisure: a process that measured roofs goes
// on (tests, a caller of Measure), and a child it forks starts with its
// resident set. The recheck calls it once done, runHarnesses however the
// run ends.
func (s *sweptRoofs) release() {
	if s == nil {
		return
	}
	s.pool, s.roofs = nil, nil
	freeDropped()
}

// sweptRoof is a bandwidth roof as its sweep left it, for the recheck: its
// place in the report, and the kernel, CPUs and operands it came from.
type sweptRoof struct {
	roof   int
	kernel kernels.Bandwidth
	cpus   []int
	// ops are the scope's own operands where the pool is not shared;
	// nil where it is: the recheck takes them from the pool then, which
	// may have grown since (holding the smaller buffer too would double
	// the memory placed).
	ops [][]float64
	// uneven is how unevenly the roof's threads ran in its evaluation.
	uneven unevenness
	// at is when the sweep ended.
	at time.Time
}

// recheckBandwidthRoofs measures every bandwidth roof's point (kernel and
// working set) once more at the end of the run, after DGEMM, and keeps the
// higher of the two estimates with its interval. A host's memory and last
// cache are shared with its other guests, which take seconds to minutes of
// them at a time: a DRAM roof can read half as much in one run as in the
// next (docs/roofs.md). A roof is what the machine can do, so a point held
// down at the sweep's moment is measured again at another, and a one-thread
// roof on its spare core (spareCores), since a host slows one core at a
// time too; where the two disagree, the flag says so with both figures. A
// roof still physically inconsistent afterwards (inconsistencies) is
// measured once more, and flagged if it stays so. The operands are freed
// afterwards.
func recheckBandwidthRoofs(ctx context.Context, r *run, roofs *sweptRoofs, spare map[int]int, topo machine.Topology) error {
	swept, pool := roofs.roofs, roofs.pool
	defer roofs.release()
	if len(swept) == 0 {
		return nil
	}
	start := time.Now()
	var movedText, unevenText []string
	for i := range swept {
		text, err := recheckSwept(ctx, r, pool, spare, &swept[i])
		if err != nil {
			return err
		}
		if text != "" {
			movedText = append(movedText, text)
		}
	}
	for _, inc := range inconsistencies(&r.rep.Roofs) {
		if i := slices.IndexFunc(swept, func(s sweptRoof) bool { return s.roof == inc.roof }); !inc.compute && i >= 0 {
			if _, err := recheckSwept(ctx, r, pool, spare, &swept[i]); err != nil {
				return err
			}
		}
	}
	flagInconsistent(r.rep, false)
	for _, s := range swept {
		if text := unevenRoof(r.rep.Roofs.Bandwidth[s.roof].Level, s.cpus, s.uneven, topo); text != "" {
			unevenText = append(unevenText, text)
		}
	}
	if len(movedText) > 0 {
		r.rep.flag(roofline.FlagBandwidthMoved, "measured again at the end of the run, "+strings.Join(movedText, "; ")+
			"; each roof is the higher: the machine's caches, memory and cores are shared (other guests or processes), so a program or another tool run at another moment or on another core may see either")
	}
	if len(unevenText) > 0 {
		r.rep.flag(roofline.FlagUnevenThreads, "in these multi-thread roofs' samples one thread took far longer over its equal share than another: "+strings.Join(unevenText, "; ")+
			"; a core ran slow (other guests or processes on it), and a roof is as fast as its slowest thread, so at another moment it may read higher")
	}
	r.rep.step("bandwidth", "recheck", time.Since(start))
	return nil
}

// recheckSwept measures a swept roof's point again (a one-thread roof on
// its spare core), on its own operands or pool's, and keeps the higher
// figure; it returns what the bandwidth-moved flag says of it when the two
// disagree, else "".
func recheckSwept(ctx context.Context, r *run, pool *operandPool, spare map[int]int, s *sweptRoof) (string, error) {
	roof, detail := &r.rep.Roofs.Bandwidth[s.roof], &r.rep.Details.Bandwidth[s.roof]
	budget := bandwidthBudget
	if roof.Level == roofline.LevelDRAM {
		budget = dramRecheckBudget
	}
	cpus, sweptOn, where := s.cpus, "", ""
	if c, ok := spare[s.cpus[0]]; len(s.cpus) == 1 && ok {
		cpus, sweptOn, where = []int{c}, fmt.Sprintf(" on CPU %d", s.cpus[0]), fmt.Sprintf(" on CPU %d", c)
	}
	j := &bandwidthJob{kernel: s.kernel, cpus: cpus, inner: r.o.bandwidthRuleWithin(budget), best: map[int64]float64{}}
	r.o.progress("bandwidth, %s: rechecking %s%s", threadsWord(len(s.cpus)), roof.Level, where)
	fail := func(err error) (string, error) {
		return "", fmt.Errorf("bandwidth recheck of %s on %s: %w", roof.Level, threadsWord(len(s.cpus)), err)
	}
	ops := s.ops
	if ops == nil {
		var err error
		if ops, err = pool.operands(ctx, []kernels.Bandwidth{s.kernel}, s.cpus, roof.WorkingSetBytes); err != nil {
			return fail(err)
		}
	}
	v, ci, err := j.evaluate(ctx, roof.WorkingSetBytes, ops)
	r.tally.add(j.results...)
	if err != nil {
		return fail(err)
	}
	sweepUnknown := roof.IntervalUnknown
	sweep, sweepCI := addRecheck(&roof.GBytesPerS, &roof.CI, &roof.IntervalUnknown, detail, j.results[0])
	if v > sweep {
		s.uneven = j.uneven[roof.WorkingSetBytes]
	}
	if !moved(v, sweep, ci, sweepCI) {
		return "", nil
	}
	return fmt.Sprintf("%s (%s) %s GB/s in the sweep%s, %s %s later%s", roof.Level, threadsWord(len(s.cpus)),
		rateText(sweep, sweepCI, sweepUnknown), sweptOn, rateText(v, ci, !j.results[0].Estimate.Bounded()), time.Since(s.at).Round(time.Second), where), nil
}

// inconsistency is a roof where physics says it cannot be: below the same
// roof (compute kernel, or bandwidth level) on fewer threads, or a cache
// level's bandwidth below DRAM's on the same threads, by as much as
// moved flags (under 0.9 of it, the intervals apart). Measured again, it
// may rise; if it stays, it is flagged.
type inconsistency struct {
	// compute says roof indexes Roofs.Compute, else Roofs.Bandwidth.
	compute bool
	roof    int
	// text names the roof and both figures.
	text string
}

// inconsistencies lists the inconsistent roofs of r, each once. Library
// roofs are left out: their own below-fewer-threads flag covers them.
func inconsistencies(r *roofline.Roofs) []inconsistency {
	var out []inconsistency
	for i, c := range r.Compute {
		for _, d := range r.Compute {
			if c.Kind == "" && d.Kind == "" && d.Name == c.Name && d.Threads < c.Threads && c.GFlops < d.GFlops && movedOrUnknown(c.GFlops, d.GFlops, c.CI, d.CI, c.IntervalUnknown || d.IntervalUnknown) {
				out = append(out, inconsistency{compute: true, roof: i, text: fmt.Sprintf("%s (%s) %s GFLOP/s is below its %s GFLOP/s on %s",
					c.Name, threadsWord(c.Threads), rateText(c.GFlops, c.CI, c.IntervalUnknown), rateText(d.GFlops, d.CI, d.IntervalUnknown), threadsWord(d.Threads))})
				break
			}
		}
	}
	for i, b := range r.Bandwidth {
		for _, d := range r.Bandwidth {
			var than string
			switch {
			case d.Level == b.Level && d.Threads < b.Threads:
				than = fmt.Sprintf("its %s GB/s on %s", rateText(d.GBytesPerS, d.CI, d.IntervalUnknown), threadsWord(d.Threads))
			case d.Level == roofline.LevelDRAM && b.Level != roofline.LevelDRAM && d.Threads == b.Threads:
				than = fmt.Sprintf("DRAM's %s GB/s on the same threads", rateText(d.GBytesPerS, d.CI, d.IntervalUnknown))
			default:
				continue
			}
			if b.GBytesPerS < d.GBytesPerS && movedOrUnknown(b.GBytesPerS, d.GBytesPerS, b.CI, d.CI, b.IntervalUnknown || d.IntervalUnknown) {
				out = append(out, inconsistency{roof: i, text: fmt.Sprintf("%s (%s) %s GB/s is below %s",
					b.Level, threadsWord(b.Threads), rateText(b.GBytesPerS, b.CI, b.IntervalUnknown), than)})
				break
			}
		}
	}
	return out
}

// flagInconsistent flags each compute (or bandwidth) roof still
// inconsistent after being measured again.
func flagInconsistent(rep *Report, compute bool) {
	for _, inc := range inconsistencies(&rep.Roofs) {
		if inc.compute == compute {
			rep.flag(roofline.FlagInconsistentRoof, inc.text+", and stayed so when measured again at the end of the run: the machine was busy (other guests or processes) while it was measured; a program may see the higher figure at another moment")
		}
	}
}

// unevenRoof describes a multi-thread cache roof whose threads ran
// unevenly enough to flag, or is empty. Threads of different core types
// of a hybrid CPU differ by design (the hybrid-scope flag says so).
func unevenRoof(level string, cpus []int, u unevenness, topo machine.Topology) string {
	if len(cpus) < 2 || level == roofline.LevelDRAM || u.ratio < unevenShare || topo.CoreType(u.slow) != topo.CoreType(u.fast) {
		return ""
	}
	return fmt.Sprintf("%s (%s): CPU %d took %.2f× as long as CPU %d", level, threadsWord(len(cpus)), u.slow, u.ratio, u.fast)
}

// unevenShare is how much longer than the fastest the slowest thread of a
// multi-thread cache roof must take over its share to be flagged. It lies
// between the threads' spread when a roof reads well and when it is held
// down (docs/roofs.md, "With the uneven-threads flag"). DRAM is left out:
// there the threads share one memory system and split it unevenly even on a
// quiet host.
const unevenShare = 1.3

// addRecheck adds a recheck's evaluation to a roof's detail and makes the
// roof (value, ci and whether the interval is unknown) the higher of the
// two estimates; it returns the first figure and its interval.
func addRecheck(value *float64, ci *roofline.Interval, unknown *bool, d *Detail, again stats.Result) (float64, roofline.Interval) {
	d.Invocations += again.Invocations
	d.Iterations += again.Iterations
	for reason, n := range again.InnerReasons {
		d.Reasons[reason] += n
	}
	first, firstCI := *value, *ci
	if again.Estimate.Value > first {
		*value, *ci, *unknown = again.Estimate.Value, interval(again.Estimate), !again.Estimate.Bounded()
	}
	return first, firstCI
}

// movedShare is how far below the other a recheck or first figure must
// be to be flagged: a few percent is the noise of a shared machine.
const movedShare = 0.9

// moved says whether two figures of one roof disagree enough to flag:
// the lower under movedShare of the higher, and their intervals apart.
func moved(a, b float64, aCI, bCI roofline.Interval) bool {
	return math.Min(a, b) < movedShare*math.Max(a, b) && apart(aCI, bCI)
}

// movedOrUnknown is moved, except that where either figure has too few
// samples for an interval (unknown), their ranges are no interval to keep
// apart and the share alone decides: a 2-thread FMA roof at 27.9 GFLOP/s
// beside 266 on 1 thread, from samples of 6.3 to 387.6, is no consistent
// roof for want of a test.
func movedOrUnknown(a, b float64, aCI, bCI roofline.Interval, unknown bool) bool {
	if unknown {
		return math.Min(a, b) < movedShare*math.Max(a, b)
	}
	return moved(a, b, aCI, bCI)
}

// apart says whether two intervals do not overlap.
func apart(a, b roofline.Interval) bool { return a.Lo > b.Hi || a.Hi < b.Lo }

// farLowShare is how far below its scope's highest share of theoretical
// peak an FMA roof must be to be measured again. The FMA roofs of a scope
// read within a few percent of each other's share unless a host's neighbour
// on the core holds one down for a few tenths of a second. The highest
// share, not the median, because a neighbour can stay for seconds and hold
// most of a scope's roofs down, the median with them (docs/roofs.md).
const farLowShare = 0.9

// farLowCompute returns the FMA roofs (those with a theoretical peak)
// whose share of their peak is under farLowShare of the highest share of
// their scope's FMA roofs.
func farLowCompute(roofs []roofline.ComputeRoof, measured []measuredCompute) []measuredCompute {
	shares := map[int][]float64{} // by thread count
	share := func(c roofline.ComputeRoof) float64 { return c.GFlops / c.TheoreticalGFlops }
	for _, c := range roofs {
		if c.TheoreticalGFlops > 0 {
			shares[c.Threads] = append(shares[c.Threads], share(c))
		}
	}
	var low []measuredCompute
	for _, m := range measured {
		c := roofs[m.roof]
		if c.TheoreticalGFlops > 0 && share(c) < farLowShare*slices.Max(shares[c.Threads]) {
			low = append(low, m)
		}
	}
	return low
}

// recheckComputeRoofs measures again, at the end of the run, every FMA
// roof far below its scope's others as a share of theoretical peak, with
// the configuration its search chose, and keeps the higher of the two
// estimates with its interval, as the bandwidth recheck does.
//
// So is every compute roof below the same kernel's on fewer threads
// (inconsistencies); one that stays below is flagged.
func recheckComputeRoofs(ctx context.Context, r *run, computed []measuredCompute) error {
	low := farLowCompute(r.rep.Roofs.Compute, computed)
	for _, inc := range inconsistencies(&r.rep.Roofs) {
		i := slices.IndexFunc(computed, func(m measuredCompute) bool { return m.roof == inc.roof })
		if inc.compute && i >= 0 && !slices.ContainsFunc(low, func(m measuredCompute) bool { return m.roof == inc.roof }) {
			low = append(low, computed[i])
		}
	}
	if len(low) == 0 {
		return nil
	}
	defer flagInconsistent(r.rep, true)
	start := time.Now()
	var movedText []string
	for _, m := range low {
		roof, detail := &r.rep.Roofs.Compute[m.roof], &r.rep.Details.Compute[m.roof]
		r.o.progress("compute %s, %s: rechecking", m.kernel, threadsWord(len(m.cpus)))
		var mhz float64 // the search's clock stays the roof's
		job := Job{Kind: "compute", CPUs: m.cpus, Kernel: m.kernel, Iters: m.iters}
		again, err := r.o.evaluator(computeBudget).Evaluate(ctx, 0, r.o.invocation(job, &mhz))
		r.tally.add(again)
		if err != nil {
			return fmt.Errorf("compute recheck of %s on %s: %w", m.kernel, threadsWord(len(m.cpus)), err)
		}
		v, ci := again.Estimate.Value, interval(again.Estimate)
		firstUnknown := roof.IntervalUnknown
		first, firstCI := addRecheck(&roof.GFlops, &roof.CI, &roof.IntervalUnknown, detail, again)
		if moved(v, first, ci, firstCI) {
			movedText = append(movedText, fmt.Sprintf("%s (%s) %s GFLOP/s (%s of its theoretical peak), %s %s later",
				m.kernel, threadsWord(len(m.cpus)), rateText(first, firstCI, firstUnknown), unit.RoundPercent(first/roof.TheoreticalGFlops),
				rateText(v, ci, !again.Estimate.Bounded()), time.Since(m.at).Round(time.Second)))
		}
	}
	if len(movedText) > 0 {
		r.rep.flag(roofline.FlagComputeMoved, "measured again at the end of the run, being far below the other FMA roofs of its scope as a share of theoretical peak or below the same kernel on fewer threads: "+
			strings.Join(movedText, "; ")+"; each roof is the higher: the cores are shared (other guests or processes), so a program run at another moment may see either")
	}
	r.rep.step("compute", "recheck", time.Since(start))
	return nil
}

// rateText is a rate with its interval, as the flags give it; with too
// few samples for one (unknown), their range, said to be no interval: a
// one-sample "[29.76, 29.76]" would claim an exact figure.
func rateText(v float64, ci roofline.Interval, unknown bool) string {
	if unknown {
		return fmt.Sprintf("%s [uncertainty unknown: samples %s to %s]", unit.Sig(v), unit.Sig(ci.Lo), unit.Sig(ci.Hi))
	}
	return fmt.Sprintf("%s [%s, %s]", unit.Sig(v), unit.Sig(ci.Lo), unit.Sig(ci.Hi))
}
