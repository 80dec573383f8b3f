package roofs

import (
	"context"
	"fmt"
	"time"

	"github.com/rprof/rprof/internal/stats"
	"github.com/rprof/rprof/internal/unit"
	"github.com/rprof/rprof/roofline"
	"github.com/rprof/rprof/roofs/kernels"
)

// Iteration counts are tuned around the count that takes baseSample: long
// enough that the timer and the start barrier vanish, short enough that a
// preemption spoils one sample rather than the estimate.
const (
	baseSample    = 200 * time.Microsecond
	computeBudget = 100 * time.Millisecond // per configuration and invocation
)

// iterFactors are the configurations of the compute search: multiples of
// the calibrated count.
var iterFactors = []int64{1, 8}

// calibrate returns the smallest power-of-two iteration count at which k
// runs for at least d on this thread.
func calibrate(k kernels.Compute, d time.Duration) int64 {
	iters := int64(1024)
	for {
		t0 := time.Now()
		k.Run(iters)
		if time.Since(t0) >= d || iters >= 1<<40 {
			return iters
		}
		iters *= 2
	}
}

// measuredCompute is a compute roof as its search left it, for the
// recheck: its place in the report and the configuration it came from.
type measuredCompute struct {
	roof   int
	kernel string
	cpus   []int
	iters  int64
	// at is when the search ended.
	at time.Time
}

func measureCompute(ctx context.Context, o Options, rep *Report, t *tally, k kernels.Compute, cpus []int, units fmaPipes, ghz float64) (measuredCompute, error) {
	base := calibrate(k, baseSample)
	factors := iterFactors
	if o.Quick {
		factors = []int64{4}
	}
	ev := o.evaluator(computeBudget)
	mhz := make([]float64, len(factors))
	o.progress("compute %s, %s", k.Name, threadsWord(len(cpus)))
	tuned, err := stats.Search(ctx, len(factors), o.Order.Or(stats.Forward), func(ctx context.Context, i int, best float64) (stats.Result, error) {
		job := Job{Kind: "compute", CPUs: cpus, Kernel: k.Name, Iters: base * factors[i]}
		return ev.Evaluate(ctx, best, o.invocation(job, &mhz[i]))
	})
	if err != nil {
		return measuredCompute{}, fmt.Errorf("measure %s on %s: %w", k.Name, threadsWord(len(cpus)), err)
	}
	best := tuned.Results[tuned.Best]
	roof := roofline.ComputeRoof{
		Name: k.Name, ISA: k.ISA, Precision: k.Precision, Threads: len(cpus),
		GFlops: best.Estimate.Value, CI: interval(best.Estimate), IntervalUnknown: !best.Estimate.Bounded(),
		TheoreticalGFlops: TheoreticalGFlops(units, ghz, len(cpus), k.ISA, k.Precision, k.FMA),
		FrequencyGHz:      mhz[tuned.Best] / 1000,
	}
	i := rep.addCompute(roof, Detail{Config: fmt.Sprintf("iters=%d", base*factors[tuned.Best]), Invocations: best.Invocations,
		Iterations: best.Iterations, Reasons: t.add(tuned.Results...)})
	noteInterval(rep, k.Name, len(cpus), best.Estimate)
	return measuredCompute{roof: i, kernel: k.Name, cpus: cpus,
		iters: base * factors[tuned.Best], at: time.Now()}, nil
}

// invocation is one invocation of a compute job through o's invoker, for
// an Evaluator; mhz gets the clock the worker read.
func (o Options) invocation(job Job, mhz *float64) func(context.Context, stats.StopRule, float64) (stats.Inner, error) {
	return func(ctx context.Context, inner stats.StopRule, best float64) (stats.Inner, error) {
		job.Inner, job.Best = inner, best
		r, err := o.Invoker.Invoke(ctx, job)
		*mhz = r.MHz
		return r.Inner, err
	}
}

// noteInterval flags a roof whose interval is the sample range, because the
// sample was too small for one at the confidence asked.
func noteInterval(rep *Report, name string, threads int, e stats.Estimate) {
	if !e.Bounded() {
		rep.flag(roofline.FlagNoInterval, fmt.Sprintf("%s (%s): %s too few for a %s interval; the sample range is given instead", name, threadsWord(threads), samplesWord(e.N), unit.RoundPercent(Confidence)))
	}
}
