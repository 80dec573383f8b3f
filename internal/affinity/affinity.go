// Package affinity pins goroutines to CPUs, so that benchmark workers run on
// the cores they measure and touch their memory from there first.
package affinity

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"
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
// the error says why. Each call pins afresh (about 0.1 ms); for repeated
// timed sections keep a Team.
func RunPinned(cpus []int, setup, body func(worker int)) error {
	if err := distinct(cpus); err != nil {
		return err
	}
	var (
		start  run
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

// Team is a set of goroutines pinned one per CPU that stay pinned across
// runs, so repeated timed sections pay for pinning once. A Run still costs
// tens of microseconds outside the timed section (the runtime wakes each
// pinned thread); time inside the body.
type Team struct {
	work []chan *run
	done sync.WaitGroup // workers exiting, for Close
}

// run is one Team.Run (or RunPinned): its body and its start barrier.
type run struct {
	body     func(worker int)
	arrived  atomic.Int32
	release  atomic.Bool
	finished sync.WaitGroup
}

// NewTeam starts and pins one worker per entry of cpus, which must be
// distinct (workers spin at the start barrier). If a worker cannot be
// pinned, the others are stopped and the error says why.
func NewTeam(cpus []int) (*Team, error) {
	if err := distinct(cpus); err != nil {
		return nil, err
	}
	t := &Team{work: make([]chan *run, len(cpus))}
	errs := make([]error, len(cpus))
	var pinned sync.WaitGroup
	pinned.Add(len(cpus))
	t.done.Add(len(cpus))
	for w, cpu := range cpus {
		// Buffered, so Run hands out work without waiting for each
		// worker to wake.
		t.work[w] = make(chan *run, 1)
		go func() {
			defer t.done.Done()
			restore, err := Pin(cpu)
			errs[w] = err
			pinned.Done()
			if err != nil {
				return
			}
			defer restore()
			for r := range t.work[w] {
				r.wait(len(cpus))
				r.body(w)
				r.finished.Done()
			}
		}()
	}
	pinned.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Close()
		return nil, err
	}
	return t, nil
}

// wait is the start barrier: the last worker to arrive releases all, so
// the bodies start within microseconds of each other rather than a
// scheduler wake-up apart.
func (r *run) wait(workers int) {
	if int(r.arrived.Add(1)) == workers {
		r.release.Store(true)
	}
	for !r.release.Load() {
	}
}

// Run runs body(worker) on every worker, all starting together, and
// returns when all have returned. Time the section inside body. Runs must
// not overlap, and a closed Team cannot run.
func (t *Team) Run(body func(worker int)) {
	r := &run{body: body}
	r.finished.Add(len(t.work))
	for _, ch := range t.work {
		ch <- r
	}
	r.finished.Wait()
}

// Timed runs body like Run and returns the span from the first worker's
// start to the last worker's end: the wall time of the parallel section,
// without the cost of waking the workers.
func (t *Team) Timed(body func(worker int)) time.Duration {
	starts := make([]time.Time, len(t.work))
	ends := make([]time.Time, len(t.work))
	t.Run(func(w int) {
		starts[w] = time.Now()
		body(w)
		ends[w] = time.Now()
	})
	if len(starts) == 0 {
		return 0
	}
	first := slices.MinFunc(starts, time.Time.Compare)
	last := slices.MaxFunc(ends, time.Time.Compare)
	return last.Sub(first)
}

// Close stops the workers and restores their threads' CPU masks.
func (t *Team) Close() {
	for _, ch := range t.work {
		close(ch)
	}
	t.done.Wait()
}
