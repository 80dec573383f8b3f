package affinity

import (
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestAllowedMatchesTheProcessMask(t *testing.T) {
	cpus, err := Allowed()
	if err != nil {
		t.Fatal(err)
	}
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		t.Fatal(err)
	}
	if len(cpus) != set.Count() || !slices.IsSorted(cpus) {
		t.Fatalf("Allowed() = %v, want the %d CPUs of the mask in order", cpus, set.Count())
	}
	for _, c := range cpus {
		if !set.IsSet(c) {
			t.Errorf("cpu %d listed but not in the mask", c)
		}
	}
}

func TestPinRestrictsThenRestoresTheThread(t *testing.T) {
	cpus, err := Allowed()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		var before unix.CPUSet
		if err := unix.SchedGetaffinity(0, &before); err != nil {
			t.Error(err)
			return
		}
		last := cpus[len(cpus)-1]
		restore, err := Pin(last)
		if err != nil {
			t.Error(err)
			return
		}
		var during, after unix.CPUSet
		unix.SchedGetaffinity(0, &during)
		if during.Count() != 1 || !during.IsSet(last) {
			t.Errorf("pinned to %d: thread mask has %d CPUs", last, during.Count())
		}
		restore()
		// restore unlocked the thread, but this goroutine is still on it
		// until it blocks: the mask must be the old one.
		unix.SchedGetaffinity(0, &after)
		if after != before {
			t.Errorf("mask after restore differs from before")
		}
	}()
	<-done
}

func TestPinRejectsBadCPUs(t *testing.T) {
	for _, cpu := range []int{-1, 1 << 20, 1 << 12} {
		done := make(chan error)
		go func() {
			_, err := Pin(cpu)
			done <- err
		}()
		if err := <-done; err == nil || !strings.Contains(err.Error(), "cpu") {
			t.Errorf("Pin(%d) = %v, want an error naming the cpu", cpu, err)
		}
	}
}

func TestRunPinnedRunsEachWorkerOnItsCPUAfterAllSetups(t *testing.T) {
	cpus, err := Allowed()
	if err != nil {
		t.Fatal(err)
	}
	var setups atomic.Int32
	seenSetups := make([]int32, len(cpus))
	onCPU := make([]bool, len(cpus))
	err = RunPinned(cpus, func(w int) {
		time.Sleep(time.Duration(w) * 10 * time.Millisecond) // late arrivals must still be waited for
		setups.Add(1)
	}, func(w int) {
		seenSetups[w] = setups.Load()
		var set unix.CPUSet
		unix.SchedGetaffinity(0, &set)
		onCPU[w] = set.Count() == 1 && set.IsSet(cpus[w])
	})
	if err != nil {
		t.Fatal(err)
	}
	for w := range cpus {
		if seenSetups[w] != int32(len(cpus)) {
			t.Errorf("worker %d started its body after %d of %d setups", w, seenSetups[w], len(cpus))
		}
		if !onCPU[w] {
			t.Errorf("worker %d's body did not run pinned to cpu %d", w, cpus[w])
		}
	}
}

func TestRunPinnedRunsNoBodyWhenAPinFails(t *testing.T) {
	cpus, err := Allowed()
	if err != nil {
		t.Fatal(err)
	}
	var bodies atomic.Int32
	err = RunPinned(append([]int{cpus[0]}, 1<<20), nil, func(int) { bodies.Add(1) })
	if err == nil || bodies.Load() != 0 {
		t.Errorf("err = %v, bodies run = %d; want an error and none", err, bodies.Load())
	}
	if err := RunPinned([]int{cpus[0], cpus[0]}, nil, func(int) { bodies.Add(1) }); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("duplicate cpus: err = %v, want one naming the duplicate", err)
	}
}

func BenchmarkRunPinned(b *testing.B) {
	cpus, err := Allowed()
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		RunPinned(cpus, nil, func(int) {})
	}
}

func TestGangRunsEveryBodyOnItsCPUInEachRunAndReturnsWhenTheLeadDoes(t *testing.T) {
	// The last worker sleeps in each body, so its busy time is the
	// longest: Busy tells the threads apart.
	cpus, err := Allowed()
	if err != nil {
		t.Fatal(err)
	}
	const runs = 50
	counts := make([]int, len(cpus))
	onCPU := make([]bool, len(cpus))
	for w := range onCPU {
		onCPU[w] = true
	}
	var spans, busy []time.Duration
	err = RunGang(cpus, func(g *Gang) error {
		for range runs {
			spans = append(spans, g.Run(func(w int) {
				counts[w]++
				var set unix.CPUSet
				unix.SchedGetaffinity(0, &set)
				onCPU[w] = onCPU[w] && set.Count() == 1 && set.IsSet(cpus[w])
				if w == len(cpus)-1 {
					time.Sleep(time.Millisecond) // the run lasts as long as its slowest body
				}
			}))
		}
		busy = g.Busy()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for w := range cpus {
		if counts[w] != runs || !onCPU[w] {
			t.Errorf("worker %d ran %d of %d bodies, always on cpu %d: %v", w, counts[w], runs, cpus[w], onCPU[w])
		}
	}
	for i, d := range spans {
		if d < time.Millisecond {
			t.Errorf("run %d took %v, shorter than its slowest body (1ms)", i, d)
		}
	}
	last := len(cpus) - 1
	if busy[last] < runs*time.Millisecond || (last > 0 && busy[0] >= busy[last]) {
		t.Errorf("busy %v: want the last worker's at least %v and the longest", busy, runs*time.Millisecond)
	}
}

func TestGangCallsNoLeadWhenAPinFails(t *testing.T) {
	cpus, err := Allowed()
	if err != nil {
		t.Fatal(err)
	}
	led := false
	if err := RunGang(append([]int{cpus[0]}, 1<<20), func(*Gang) error { led = true; return nil }); err == nil || led {
		t.Errorf("err = %v, lead called = %v; want an error and no lead", err, led)
	}
}
