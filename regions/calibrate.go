package regions

import (
	"fmt"
	"slices"
	"time"
)

// FirstKind is what a probed function's first instruction makes the
// kernel do at a uprobe there, which decides most of a probe's cost.
type FirstKind string

const (
	// KindNop5: a five-byte NOP, which recent x86 kernels optimise into a
	// call (no trap).
	KindNop5 FirstKind = "nop5"
	// KindPush: push of a register, emulated by the kernel.
	KindPush FirstKind = "push"
	// KindEndbr: endbr64, as functions built with -fcf-protection begin.
	KindEndbr FirstKind = "endbr64"
	// KindStep: anything else, executed out of line and single-stepped.
	KindStep FirstKind = "single-step"
)

// KindOf classifies a function by its first bytes (x86-64 encodings; on
// other architectures everything is KindStep).
func KindOf(first []byte) FirstKind {
	switch {
	case len(first) >= 5 && first[0] == 0x0f && first[1] == 0x1f && first[2] == 0x44 && first[3] == 0 && first[4] == 0:
		return KindNop5
	case len(first) >= 4 && first[0] == 0xf3 && first[1] == 0x0f && first[2] == 0x1e && first[3] == 0xfa:
		return KindEndbr
	case len(first) >= 1 && first[0] >= 0x50 && first[0] <= 0x57,
		len(first) >= 2 && first[0] == 0x41 && first[1] >= 0x50 && first[1] <= 0x57:
		return KindPush
	}
	return KindStep
}

// Calibration is the measured cost of a probed call, by the kind of the
// function's first instruction.
type Calibration struct {
	Costs map[FirstKind]Cost
	// Calls is how many calls of each kind were timed.
	Calls int
}

// For is the cost of probing a function starting with first; the
// single-step cost, the dearest, where its kind was not measured.
func (c Calibration) For(first []byte) Cost {
	if cost, ok := c.Costs[KindOf(first)]; ok {
		return cost
	}
	return c.Costs[KindStep]
}

// String lists the costs per kind.
func (c Calibration) String() string {
	s := ""
	for _, k := range []FirstKind{KindNop5, KindPush, KindEndbr, KindStep} {
		if cost, ok := c.Costs[k]; ok {
			if s != "" {
				s += ", "
			}
			s += fmt.Sprintf("%s %.2f µs (%.2f µs inside)", k, cost.Call.Seconds()*1e6, cost.Inside.Seconds()*1e6)
		}
	}
	return s
}

type calibTarget struct {
	kind FirstKind
	addr uintptr
	fn   func()
}

// timeCalls calls fn n times and returns the median wall time of a call,
// robust to the preemptions a loaded machine adds to some calls.
func timeCalls(fn func(), n int) time.Duration {
	ds := make([]time.Duration, n)
	for i := range ds {
		t0 := time.Now()
		fn()
		ds[i] = time.Since(t0)
	}
	slices.Sort(ds)
	return ds[n/2]
}
