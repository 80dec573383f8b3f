package kernels

import (
	"math"

	"golang.org/x/sys/cpu"
)

// computeKernel is a generated compute kernel with what tests need to
// recompute its result in Go.
type computeKernel struct {
	Compute
	accs, lanes int
	// step64/step32 is the raw kernel: iters iterations of acc = acc*x + y
	// on the state st = [accs*lanes accumulators, lanes×x, lanes×y].
	step64 func(iters int64, st *float64)
	step32 func(iters int64, st *float32)
	needs  func() string
}

type bandwidthKernel struct {
	Bandwidth
	triad func(a, b, c *float64, n int64, s float64, passes int64)
	// inPlace runs triad with b = a: a[i] = a[i] + s*c[i].
	inPlace bool
	load    func(b *float64, n, passes int64) float64
	update  func(b *float64, n int64, mask float64, passes int64)
	needs   func() string
}

// The accumulators start at distinct values so no two chains are the same
// computation; x < 1 makes every chain converge to y/(1-x) = 1 instead of
// overflowing or going subnormal, whatever iters is.
const (
	stateX = 1 - 1.0/1024
	stateY = 1.0 / 1024
)

func initState[T float32 | float64](st []T, lanes int) {
	nacc := len(st) - 2*lanes
	for j := range nacc {
		st[j] = T(0.5 + 0.5*float64(j)/float64(nacc))
	}
	for j := range lanes {
		st[nacc+j] = stateX
		st[nacc+lanes+j] = stateY
	}
}

func needNone() string { return "" }

func needFMA() string {
	if cpu.X86.HasAVX && cpu.X86.HasFMA {
		return ""
	}
	return "the CPU (or the OS's saved register state) lacks AVX with FMA3"
}

func needAVX() string {
	if cpu.X86.HasAVX {
		return ""
	}
	return "the CPU (or the OS's saved register state) lacks AVX"
}

func needAVX512() string {
	if cpu.X86.HasAVX512F {
		return ""
	}
	return "the CPU (or the OS's saved register state) lacks AVX-512F"
}

// ComputeKernels returns the compute kernels this CPU can run, and the ones
// it cannot with the reason.
func ComputeKernels() (ok []Compute, skipped []Skipped) {
	for _, k := range computeTable {
		if r := k.needs(); r != "" {
			skipped = append(skipped, Skipped{Name: k.Name, Reason: r})
			continue
		}
		ok = append(ok, k.Compute)
	}
	return ok, skipped
}

// BandwidthKernels returns the bandwidth kernels this CPU can run, and the
// ones it cannot with the reason. A CPU without AVX gets the portable Go
// kernels. The widest is not always the fastest: on a Zen 4 EPYC (which
// splits 512-bit operations) the AVX2 kernels beat the AVX-512 ones in DRAM
// and in L1 (docs/roofs.md), so measure every ISA or choose per CPU.
func BandwidthKernels() (ok []Bandwidth, skipped []Skipped) {
	defer func() {
		if len(ok) == 0 {
			ok = goBandwidth
		}
	}()
	for i := range bandwidthTable {
		k := &bandwidthTable[i]
		if r := k.needs(); r != "" {
			skipped = append(skipped, Skipped{Name: k.ISA + " " + k.Name, Reason: r})
			continue
		}
		ok = append(ok, k.withRun())
	}
	return ok, skipped
}

func (k *bandwidthKernel) withRun() Bandwidth {
	b := k.Bandwidth
	switch {
	case k.load != nil:
		// The assembly stores its sums to memory, which the compiler
		// cannot drop, so unlike loadGo it needs no sink.
		b.Run = func(_, b, _ []float64, _ float64, passes int) { k.sum(b, passes) }
	case k.update != nil:
		b.Run = func(_, b, _ []float64, _ float64, passes int) { k.runUpdate(b, passes) }
	case k.inPlace:
		b.Run = func(a, _, c []float64, s float64, passes int) { k.runTriad(a, a, c, s, passes) }
	default:
		b.Run = k.runTriad
	}
	return b
}

// asmPart is where the assembly's part of x lies: after head elements
// before the first 64-byte aligned one (non-temporal stores fault on
// unaligned addresses), mid elements in whole blocks; Go does the rest.
// Slices from Alloc of whole blocks, as the sweep's, are all assembly:
// then one call makes every pass, and a pass at L1 sizes pays no call
// (docs/roofs.md).
func asmPart(x []float64) (head, mid int) {
	head = alignHead(x, align)
	return head, (len(x) - head) &^ (blockElems - 1)
}

// eachPart makes passes passes over x as asmPart splits it: asm(i, n, p)
// runs the assembly over the n elements from i, p passes in one call, and
// goPart(lo, hi) one pass over elements lo to hi in Go.
func eachPart(x []float64, passes int, asm func(i, n, passes int), goPart func(lo, hi int)) {
	head, mid := asmPart(x)
	if head == 0 && mid == len(x) {
		if mid > 0 {
			asm(0, mid, passes)
		}
		return
	}
	for range passes {
		goPart(0, head)
		if mid > 0 {
			asm(head, mid, 1)
		}
		goPart(head+mid, len(x))
	}
}

// runTriad makes passes passes of the triad over a, b and c.
func (k *bandwidthKernel) runTriad(a, b, c []float64, s float64, passes int) {
	eachPart(a[:shortest(a, b, c)], passes,
		func(i, n, p int) { k.triad(&a[i], &b[i], &c[i], int64(n), s, int64(p)) },
		func(lo, hi int) { triadGo(a[lo:hi], b[lo:hi], c[lo:hi], s) })
}

// runUpdate is runTriad for the update kernel.
func (k *bandwidthKernel) runUpdate(b []float64, passes int) {
	mask := math.Copysign(0, -1)
	eachPart(b, passes,
		func(i, n, p int) { k.update(&b[i], int64(n), mask, int64(p)) },
		func(lo, hi int) { updateGo(b[lo:hi]) })
}

// sum is b's sum taken passes times over, added up.
func (k *bandwidthKernel) sum(b []float64, passes int) float64 {
	var sum float64
	eachPart(b, passes,
		func(i, n, p int) { sum += k.load(&b[i], int64(n), int64(p)) },
		func(lo, hi int) { sum += loadGo(b[lo:hi]) })
	return sum
}

// ClockKernel returns the clock-counting kernel.
func ClockKernel() (k Clock, ok bool) {
	return Clock{CyclesPerIter: clockAdds, Run: clockChain}, true
}
