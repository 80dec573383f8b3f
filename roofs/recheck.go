package roofs

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/rprof/rprof/internal/unit"
	"github.com/rprof/rprof/roofline"
	"github.com/rprof/rprof/roofs/kernels"
)

// sweptRoof is a bandwidth roof as its sweep left it, for the recheck: its
// places in the report, and the kernel, CPUs and operands it came from.
type sweptRoof struct {
	roof, detail int
	kernel       kernels.Bandwidth
	cpus         []int
	ops          []arrays
	// at is when the sweep ended.
	at time.Time
}

// recheckBandwidthRoofs measures every bandwidth roof's point (kernel and
// working set) once more at the end of the run, after DGEMM, and keeps the
// higher of the two estimates with its interval. A host's memory and last
// cache are shared with its other guests, which take seconds to minutes of
// them at a time: on the Zen 5 guest the 2-thread DRAM roof read 55 to
// 110 GB/s from one run to the next, and likwid-bench 41 to 116. A roof is
// what the machine can do, so a point held down at the sweep's moment is
// measured again at another; where the two moments disagree, the flag
// says so with both figures. The operands are freed afterwards.
func recheckBandwidthRoofs(ctx context.Context, r *run) error {
	swept := r.swept
	r.swept = nil
	if len(swept) == 0 {
		return nil
	}
	start := time.Now()
	var moved []string
	for _, s := range swept {
		roof, detail := &r.rep.Roofs.Bandwidth[s.roof], &r.rep.Details[s.detail]
		rule := r.o.bandwidthRule()
		if roof.Level == dramLevel {
			rule = r.o.bandwidthRuleWithin(dramRecheckBudget)
		}
		j := &bandwidthJob{kernel: s.kernel, cpus: s.cpus, inner: rule, best: map[int64]float64{}}
		r.o.progress("bandwidth, %s: rechecking %s", threadsWord(len(s.cpus)), roof.Level)
		v, ci, err := j.evaluate(ctx, roof.WorkingSetBytes, s.ops)
		r.tally.add(j.results...)
		if err != nil {
			return fmt.Errorf("bandwidth recheck of %s on %s: %w", roof.Level, threadsWord(len(s.cpus)), err)
		}
		again := j.results[0]
		detail.Invocations++
		detail.Iterations += again.Iterations
		for reason, n := range again.InnerReasons {
			detail.Reasons[reason] += n
		}
		sweep, sweepCI := roof.GBytesPerS, roof.CI
		if v > sweep {
			roof.GBytesPerS, roof.CI = v, ci
			detail.Value, detail.CI = v, ci
		}
		if math.Min(v, sweep) < movedShare*math.Max(v, sweep) && (ci.Lo > sweepCI.Hi || ci.Hi < sweepCI.Lo) {
			moved = append(moved, fmt.Sprintf("%s (%s) %s GB/s in the sweep, %s %s later", roof.Level, threadsWord(len(s.cpus)),
				gbpsText(sweep, sweepCI), gbpsText(v, ci), time.Since(s.at).Round(time.Second)))
		}
	}
	if len(moved) > 0 {
		r.rep.flag(roofline.FlagBandwidthMoved, "measured again at the end of the run, "+strings.Join(moved, "; ")+
			"; each roof is the higher: the machine's caches and memory are shared (other guests or processes), so a program or another tool run at another moment may see either")
	}
	r.rep.step("bandwidth", "recheck", time.Since(start))
	return nil
}

// movedShare is how far below the other a recheck or sweep figure must
// be to be flagged: a few percent is the noise of a shared machine.
const movedShare = 0.9

// gbpsText is a rate with its interval, as the flags give it.
func gbpsText(v float64, ci roofline.Interval) string {
	return fmt.Sprintf("%s [%s, %s]", unit.Sig(v), unit.Sig(ci.Lo), unit.Sig(ci.Hi))
}
