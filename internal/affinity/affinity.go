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
// that CPU: every worker runs setup(worker) (allocate and first-touch its
// memory there; setup may be nil), then, once all setups are done, all run
// body(worker) together. If any worker cannot be pinned, no body runs and
// the error says why. Each call pins afresh (about 0.1 ms): time the
// section inside body, and take repeated samples on a Gang instead.
func RunPinned(cpus []int, setup, body func(worker int)) error {
	if err := distinct(cpus); err != nil {
		return err
	}
	var (
		start  barrier
		failed atomic.Int32
		done   sync.WaitGroup
		errs   = make([]error, len(cpus))
	)
	done.Add(len(cpus))
	for w, cpu := range cpus {
		go func() {
			defer done.Done()
			restore, err := Pin(cpu)
			if err != nil {
				errs[w] = err
				failed.Add(1)
				start.wait(len(cpus))
				return
			}
			defer restore()
			if setup != nil {
				setup(w)
			}
			start.wait(len(cpus))
			if failed.Load() == 0 {
				body(w)
			}
		}()
	}
	done.Wait()
	return errors.Join(errs...)
}

func distinct(cpus []int) error {
	seen := map[int]bool{}
	for _, c := range cpus {
		if seen[c] {
			return fmt.Errorf("pin workers: cpu %d listed twice", c)
		}
		seen[c] = true
	}
	return nil
}

// barrier is RunPinned's start barrier.
type barrier struct {
	arrived atomic.Int32
	release atomic.Bool
}

// wait is the start barrier: the last worker to arrive releases all, so
// the bodies start within microseconds of each other rather than a
// scheduler wake-up apart.
func (r *barrier) wait(workers int) {
	if int(r.arrived.Add(1)) == workers {
		r.release.Store(true)
	}
	for !r.release.Load() {
	}
}
