package regions

import "github.com/rprof/rprof/pmu"

// Options configure Attach.
type Options struct {
	// Counters are read on the current CPU at every probe (at most
	// MaxCounters), from per-CPU counters opened on CPUs (nil: this
	// kernel's online CPUs, never a captured tree's: the counters are
	// opened on them).
	Counters []pmu.Event
	CPUs     []int
	// Costs holds each function probe's per-call cost (nil: none
	// subtracted); MarkerCost is that of LIKWID marker regions.
	Costs      []Cost
	MarkerCost Cost
	// KeepCalls keeps every completed call of the function regions in
	// Result.Calls, for callers that attribute calls one by one.
	KeepCalls bool
	// RingBytes is the ring buffer's size (a power of two; default 16 MiB,
	// about 80k calls in flight with two counters).
	RingBytes int
}
