package kernels

import (
	"testing"
	"time"
)

func TestClockKernelDoesItsAdds(t *testing.T) {
	k, ok := ClockKernel()
	if !ok {
		t.Skip("no clock kernel on this architecture")
	}
	for _, iters := range []int64{0, 1, 1000} {
		if got, want := k.Run(iters), iters*int64(k.CyclesPerIter); got != want {
			t.Errorf("Run(%d) = %d, want %d adds", iters, got, want)
		}
	}
}

// The clock the kernel implies must be a clock some x86 core runs at. The
// best of many short runs is used, so a busy machine cannot push it below.
func TestClockKernelGivesAPlausibleClock(t *testing.T) {
	k, ok := ClockKernel()
	if !ok {
		t.Skip("no clock kernel on this architecture")
	}
	const iters = 1 << 12 // about 0.1 ms at 3 GHz
	best := time.Hour
	for range 200 {
		t0 := time.Now()
		k.Run(iters)
		best = min(best, time.Since(t0))
	}
	ghz := k.CyclesPerIter * iters / best.Seconds() / 1e9
	if ghz < 0.4 || ghz > 7 {
		t.Errorf("clock kernel implies %.2f GHz", ghz)
	}
	t.Logf("%.3f GHz", ghz)
}
