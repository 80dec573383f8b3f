package kernels

import (
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/rprof/rprof/internal/affinity"
)

// pinned runs the benchmark on the first CPU this process may use, so the
// figures are one core's.
func pinned(b *testing.B) {
	cpus, err := affinity.Allowed()
	if err != nil {
		b.Logf("not pinned: %v", err)
		return
	}
	restore, err := affinity.Pin(cpus[0])
	if err != nil {
		b.Logf("not pinned: %v", err)
		return
	}
	b.Cleanup(restore)
}

// timeCalls runs f in the benchmark loop and returns the seconds per call:
// the mean, the usual benchmark figure, and the best of the timed samples,
// the one least disturbed by other processes, which on a busy machine is
// closer to what the hardware can do. Each sample times enough calls to
// last about 20µs, so the clock's resolution does not limit small calls.
func timeCalls(b *testing.B, f func()) (mean, best float64) {
	const sample = 20e-6
	t0 := time.Now()
	f()
	reps := max(1, int(sample/max(time.Since(t0).Seconds(), 1e-9)))
	best = math.Inf(1)
	for b.Loop() {
		t0 := time.Now()
		for range reps {
			f()
		}
		best = min(best, time.Since(t0).Seconds())
	}
	return b.Elapsed().Seconds() / float64(b.N*reps), best / float64(reps)
}

// BenchmarkCompute reports each compute kernel's GFLOP/s on one core.
func BenchmarkCompute(b *testing.B) {
	ok, skipped := ComputeKernels()
	for _, s := range skipped {
		b.Run(s.Name, func(b *testing.B) { b.Skip(s.Reason) })
	}
	// Short calls (tens of microseconds) let the best one fall between
	// other processes' time slices on a shared machine.
	const iters = 1 << 14
	for _, k := range ok {
		b.Run(k.Name, func(b *testing.B) {
			pinned(b)
			mean, best := timeCalls(b, func() { k.Run(iters) })
			b.ReportMetric(k.FlopsPerIter*iters/mean/1e9, "GFLOP/s")
			b.ReportMetric(k.FlopsPerIter*iters/best/1e9, "best-GFLOP/s")
		})
	}
}

// BenchmarkBandwidth reports each bandwidth kernel's GB/s (STREAM byte
// counting) on one core at a working set inside L1, L2 and L3 of a typical
// recent x86 core, and in DRAM.
func BenchmarkBandwidth(b *testing.B) {
	ok, skipped := BandwidthKernels()
	for _, s := range skipped {
		b.Run(s.Name, func(b *testing.B) { b.Skip(s.Reason) })
	}
	sizes := []struct {
		name string
		ws   int
	}{{"16KiB", 16 << 10}, {"384KiB", 384 << 10}, {"8MiB", 8 << 20}, {"384MiB", 384 << 20}}
	for _, k := range ok {
		for _, sz := range sizes {
			b.Run(fmt.Sprintf("%s-%s/%s", k.ISA, k.Name, sz.name), func(b *testing.B) {
				pinned(b)
				n := int(float64(sz.ws) / k.WorkingSetPerElement())
				x, y, z := Alloc(n), Alloc(n), Alloc(n)
				fill(x, 0)
				fill(y, 1)
				fill(z, 2)
				k.Run(x, y, z, 1.5, 1) // warm the caches and the pages
				mean, best := timeCalls(b, func() { k.Run(x, y, z, 1.5, 1) })
				bytes := k.BytesPerElement * float64(len(y))
				b.ReportMetric(bytes/mean/1e9, "GB/s")
				b.ReportMetric(bytes/best/1e9, "best-GB/s")
			})
		}
	}
}

// BenchmarkComputeAllCPUs reports the widest fp64 FMA kernel's GFLOP/s
// summed over one pinned worker per allowed CPU, started together; each
// sample is timed from the first worker's start to the last one's end.
func BenchmarkComputeAllCPUs(b *testing.B) {
	cpus, err := affinity.Allowed()
	if err != nil {
		b.Skip(err)
	}
	ok, _ := ComputeKernels()
	var k Compute
	for _, c := range ok {
		if c.FMA && c.Precision == "fp64" {
			k = c // the table runs from narrow to wide
		}
	}
	if k.Run == nil {
		b.Skip("no fp64 FMA kernel on this CPU")
	}
	const iters = 1 << 14
	var total time.Duration
	best := time.Duration(math.MaxInt64)
	starts, ends := make([]time.Time, len(cpus)), make([]time.Time, len(cpus))
	for b.Loop() {
		if err := affinity.RunPinned(cpus, nil, func(w int) {
			starts[w] = time.Now()
			k.Run(iters)
			ends[w] = time.Now()
		}); err != nil {
			b.Skip(err)
		}
		d := slices.MaxFunc(ends, time.Time.Compare).Sub(slices.MinFunc(starts, time.Time.Compare))
		total += d
		best = min(best, d)
	}
	flops := k.FlopsPerIter * iters * float64(len(cpus))
	b.ReportMetric(flops*float64(b.N)/total.Seconds()/1e9, "GFLOP/s")
	b.ReportMetric(flops/best.Seconds()/1e9, "best-GFLOP/s")
	b.ReportMetric(float64(len(cpus)), "threads")
}

// BenchmarkClock reports the clock the core ran at during the clock
// kernel, on one pinned core.
func BenchmarkClock(b *testing.B) {
	k, ok := ClockKernel()
	if !ok {
		b.Skip("no clock kernel on this architecture")
	}
	pinned(b)
	const iters = 1 << 12
	mean, best := timeCalls(b, func() { k.Run(iters) })
	b.ReportMetric(k.CyclesPerIter*iters/mean/1e9, "GHz")
	b.ReportMetric(k.CyclesPerIter*iters/best/1e9, "best-GHz")
}
