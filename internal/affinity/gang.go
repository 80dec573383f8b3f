package affinity

import (
	"slices"
	"sync/atomic"
	"time"
)

// Gang is a set of workers, one pinned to each of its CPUs, that stay
// pinned and busy from the first Run to the last. Between runs the workers
// other than the lead spin instead of sleeping: back-to-back samples keep
// the core streaming as a program does, where pinning afresh for each
// sample (RunPinned) or pausing between samples read a third lower or
// more (docs/roofs.md, "Samples run back to back").
type Gang struct {
	workers int
	round   atomic.Uint64 // the lead adds one to start a run
	done    atomic.Int32  // workers other than the lead done with this run
	quit    atomic.Bool
	body    func(worker int)
	starts  []time.Time
	ends    []time.Time
	busy    []time.Duration
}

// RunGang pins one worker per entry of cpus; worker 0, the lead, calls
// lead(g) and the others run g's bodies until lead returns. It returns
// lead's error; if any worker cannot be pinned, lead is not called and
// the error says why.
func RunGang(cpus []int, lead func(g *Gang) error) error {
	g := &Gang{workers: len(cpus), starts: make([]time.Time, len(cpus)), ends: make([]time.Time, len(cpus)), busy: make([]time.Duration, len(cpus))}
	var leadErr error
	err := RunPinned(cpus, nil, func(w int) {
		if w == 0 {
			defer g.quit.Store(true)
			leadErr = lead(g)
			return
		}
		g.follow(w)
	})
	if err != nil {
		return err
	}
	return leadErr
}

// Run runs body(worker) once on every worker, started together, and
// returns the wall time from the first start to the last end. Call it
// from the lead only.
func (g *Gang) Run(body func(worker int)) time.Duration {
	g.body = body
	g.done.Store(0)
	g.round.Add(1)
	g.starts[0] = time.Now()
	body(0)
	g.ends[0] = time.Now()
	for int(g.done.Load()) < g.workers-1 {
	}
	first, last := g.starts[0], g.ends[0]
	for w := range g.workers {
		g.busy[w] += g.ends[w].Sub(g.starts[w])
	}
	for w := 1; w < g.workers; w++ {
		if g.starts[w].Before(first) {
			first = g.starts[w]
		}
		if g.ends[w].After(last) {
			last = g.ends[w]
		}
	}
	return last.Sub(first)
}

// Busy is each worker's time in its bodies, summed over every run so
// far. Call it from the lead only.
func (g *Gang) Busy() []time.Duration { return slices.Clone(g.busy) }

// follow is a worker other than the lead: it spins until the next run or
// the lead's return.
func (g *Gang) follow(w int) {
	var seen uint64
	for {
		r := g.round.Load()
		for r == seen {
			if g.quit.Load() {
				return
			}
			r = g.round.Load()
		}
		seen = r
		g.starts[w] = time.Now()
		g.body(w)
		g.ends[w] = time.Now()
		g.done.Add(1)
	}
}
