package roofs

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/rprof/rprof/internal/affinity"
	"github.com/rprof/rprof/internal/stats"
	"github.com/rprof/rprof/roofs/kernels"
)

// BenchmarkDRAMEarlyVsFixed measures the DRAM ceiling (the best kernel at
// the DRAM working sets, as the sweep reads it) with the early-stopping
// rule and with --fixed 200, alternately in each round, so that both see
// the same state of the machine (a shared VM's DRAM bandwidth moves by
// several percent from one minute to the next, more than the two rules
// differ by). It reports the mean of each, the mean and range of the
// paired differences, and how much less time the early rule took. Run
// with -benchtime Nx for N rounds; -cpu is ignored (one thread, or all
// with RPROF_BENCH_THREADS=all).
func BenchmarkDRAMEarlyVsFixed(b *testing.B) {
	ks, _ := kernels.BandwidthKernels()
	cpus, err := affinity.Allowed()
	if err != nil {
		b.Fatal(err)
	}
	if !benchAllThreads() {
		cpus = cpus[:1]
	}
	sizes := withDRAMSizes(nil, sizeQuantum(ks, len(cpus)))
	ceiling := func(o Options) (float64, time.Duration) {
		start := time.Now()
		env, err := sweepEnvelope(context.Background(), o, newOperandPool(false, cpus), ks, cpus, sizes)
		if err != nil {
			b.Fatal(err)
		}
		top := 0.0
		for _, p := range env.points {
			top = max(top, p.GBytesPerS)
		}
		return top, time.Since(start)
	}
	var early, fixed, diffs []float64
	var earlyTime, fixedTime time.Duration
	for i := 0; i < b.N; i++ {
		// Which rule goes first alternates (ABBA), so a trend in the
		// machine's bandwidth does not favour one.
		var e, f float64
		var te, tf time.Duration
		if i%2 == 0 {
			e, te = ceiling(Options{})
			f, tf = ceiling(Options{Fixed: 200})
		} else {
			f, tf = ceiling(Options{Fixed: 200})
			e, te = ceiling(Options{})
		}
		early, fixed = append(early, e), append(fixed, f)
		diffs = append(diffs, 100*(e-f)/f)
		earlyTime, fixedTime = earlyTime+te, fixedTime+tf
	}
	fixedMean := stats.Summarize(fixed).Mean
	b.ReportMetric(stats.Summarize(early).Mean, "early-GB/s")
	b.ReportMetric(fixedMean, "fixed-GB/s")
	b.ReportMetric(stats.Summarize(diffs).Mean, "diff-%")
	b.ReportMetric(slices.Min(diffs), "min-diff-%")
	b.ReportMetric(slices.Max(diffs), "max-diff-%")
	b.ReportMetric(100*(slices.Max(fixed)-slices.Min(fixed))/fixedMean, "fixed-range-%")
	b.ReportMetric(fixedTime.Seconds()/earlyTime.Seconds(), "speedup")
}

func benchAllThreads() bool { return os.Getenv("RPROF_BENCH_THREADS") == "all" }
