package roofs

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/rprof/rprof/roofs/kernels"
)

// An interrupt must be felt within a chunk of first-touching, not after
// the whole working set: on a loaded 2-vCPU guest, first-touching a
// 512 MiB size took 13 s before allocOperands checked for one. (The
// working set is kept at 256 MiB: the second case's allocation reuses the
// first's heap, which the runtime zeroes before it returns, uninterrupted,
// at the guest's cost of fresh pages.)
func TestPlacingOperandsStopsAtAnInterrupt(t *testing.T) {
	ks := bandwidthKernelsOrSkip(t)
	for _, shared := range []bool{true, false} {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		start := time.Now()
		_, err := newOperandPool(shared, []int{0}).operands(ctx, ks, []int{0}, 1<<28)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("placing (shared %v) after an interrupt = %v, want context.Canceled", shared, err)
		}
		t.Logf("shared %v: returned after %v (a 256 MiB working set's first touch takes a second or more)", shared, time.Since(start))
	}
}

func TestBandwidthEvaluateStopsAtAnInterrupt(t *testing.T) {
	ks := bandwidthKernelsOrSkip(t)
	ws := int64(1 << 20)
	ops, err := allocOperands(context.Background(), ks, []int{0}, ws)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	j := &bandwidthJob{kernel: ks[0], cpus: []int{0}, inner: Options{}.bandwidthRule(), best: map[int64]float64{}}
	if _, _, err := j.evaluate(ctx, ws, ops); !errors.Is(err, context.Canceled) {
		t.Fatalf("evaluate after an interrupt = %v, want context.Canceled", err)
	}
	if len(j.results) != 0 {
		t.Errorf("an interrupted evaluation left %d results", len(j.results))
	}
}

// bandwidthKernelsOrSkip is the bandwidth kernels this CPU runs; the test
// skips where there are none.
func bandwidthKernelsOrSkip(t *testing.T) []kernels.Bandwidth {
	t.Helper()
	ks, _ := kernels.BandwidthKernels()
	if len(ks) == 0 {
		t.Skip("no bandwidth kernels on this CPU")
	}
	return ks
}
