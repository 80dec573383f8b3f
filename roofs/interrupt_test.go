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
// 512 MiB size took 13 s before allocOperands checked for one.
func TestAllocOperandsStopsAtAnInterrupt(t *testing.T) {
	ks, _ := kernels.BandwidthKernels()
	if len(ks) == 0 {
		t.Skip("no bandwidth kernels on this CPU")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	_, err := allocOperands(ctx, ks, []int{0}, 1<<30)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("allocOperands after an interrupt = %v, want context.Canceled", err)
	}
	t.Logf("returned after %v (a 1 GiB working set's first touch takes seconds)", time.Since(start))
}

func TestBandwidthEvaluateStopsAtAnInterrupt(t *testing.T) {
	ks, _ := kernels.BandwidthKernels()
	if len(ks) == 0 {
		t.Skip("no bandwidth kernels on this CPU")
	}
	ws := int64(1 << 20)
	ops, err := allocOperands(context.Background(), ks, []int{0}, ws)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	j := &bandwidthJob{kernel: ks[0], cpus: []int{0}, inner: Options{}.innerRule(bandwidthBudget), best: map[int64]float64{}}
	if _, _, err := j.evaluate(ctx, ws, ops); !errors.Is(err, context.Canceled) {
		t.Fatalf("evaluate after an interrupt = %v, want context.Canceled", err)
	}
	if len(j.results) != 0 {
		t.Errorf("an interrupted evaluation left %d results", len(j.results))
	}
}
