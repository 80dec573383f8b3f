// Package affinity pins goroutines to CPUs, so that benchmark workers run on
// the cores they measure and touch their memory from there first.
package affinity

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
)

// ErrNotSupported is returned where the OS offers no thread affinity.
var ErrNotSupported = errors.New("thread affinity not supported")

// Pin locks the calling goroutine to its OS thread and restricts that thread
// to cpu. restore puts back the thread's previous CPU mask and unlocks it;
// call it on the same goroutine.
func Pin(cpu int) (restore func(), err error) {
	if cpu < 0 {
		return nil, fmt.Errorf("pin to cpu %d: negative cpu number", cpu)
	}
	return pin(cpu)
}

// Allowed lists the CPUs this process may run on (the calling thread's
// affinity mask, which cgroup cpusets and taskset narrow), in increasing
// order. Call it from an unpinned goroutine.
func Allowed() ([]int, error) { return allowed() }

// RunPinned runs one worker per entry of cpus, each on a goroutine pinned to
// that CPU. Every worker first runs setup(worker) (allocate and first-touch
// its memory there; setup may be nil), then waits at a barrier; the last to
// arrive releases all, so the bodies start within microseconds of each other
// rather than a scheduler wake-up apart. Workers spin at the barrier, which
// is why cpus must be distinct. RunPinned returns when every worker is done;
// if any worker could not be pinned, no body runs and the error says why.
func RunPinned(cpus []int, setup, body func(worker int)) error {
	seen := map[int]bool{}
	for _, c := range cpus {
		if seen[c] {
			return fmt.Errorf("run pinned workers: cpu %d listed twice", c)
		}
		seen[c] = true
	}
	var (
		arrived, failed atomic.Int32
		release         atomic.Bool
		done            sync.WaitGroup
		errs            = make([]error, len(cpus))
	)
	arrive := func() {
		if int(arrived.Add(1)) == len(cpus) {
			release.Store(true)
		}
		for !release.Load() {
		}
	}
	done.Add(len(cpus))
	for w, cpu := range cpus {
		go func() {
			defer done.Done()
			restore, err := Pin(cpu)
			if err != nil {
				errs[w] = err
				failed.Add(1)
				arrive()
				return
			}
			defer restore()
			if setup != nil {
				setup(w)
			}
			arrive()
			if failed.Load() == 0 {
				body(w)
			}
		}()
	}
	done.Wait()
	return errors.Join(errs...)
}
