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
	triad func(a, b, c *float64, n int64, s float64)
	// inPlace runs triad with b = a: a[i] = a[i] + s*c[i].
	inPlace bool
	load    func(b *float64, n int64) float64
	update  func(b *float64, n int64, mask float64)
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
	if k.load != nil {
		// The assembly stores its sums to memory, which the compiler
		// cannot drop, so unlike loadGo it needs no sink.
		b.Run = func(_, b, _ []float64, _ float64, passes int) {
			for range passes {
				k.sum(b)
			}
		}
		return b
	}
	if k.update != nil {
		b.Run = func(_, b, _ []float64, _ float64, passes int) {
			for range passes {
				k.runUpdate(b)
			}
		}
		return b
	}
	if k.inPlace {
		b.Run = func(a, _, c []float64, s float64, passes int) { k.runTriad(a, a, c, s, passes) }
		return b
	}
	b.Run = k.runTriad
	return b
}

// runTriad gives the assembly the 64-byte aligned middle of a (non-temporal
// stores fault on unaligned addresses) in whole blocks, and does the rest in
// Go, passes times over.
func (k *bandwidthKernel) runTriad(a, b, c []float64, s float64, passes int) {
	n := shortest(a, b, c)
	head := min(alignHead(a, align), n)
	mid := (n - head) &^ (blockElems - 1)
	end := head + mid
	for range passes {
		if head > 0 {
			triadGo(a[:head], b[:head], c[:head], s)
		}
		if mid > 0 {
			k.triad(&a[head], &b[head], &c[head], int64(mid), s)
		}
		if end < n {
			triadGo(a[end:n], b[end:n], c[end:n], s)
		}
	}
}

// runUpdate is runTriad for the update kernel: the assembly gets b's
// aligned middle, Go the rest.
func (k *bandwidthKernel) runUpdate(b []float64) {
	head := alignHead(b, align)
	mid := (len(b) - head) &^ (blockElems - 1)
	updateGo(b[:head])
	if mid > 0 {
		k.update(&b[head], int64(mid), math.Copysign(0, -1))
	}
	updateGo(b[head+mid:])
}

func (k *bandwidthKernel) sum(b []float64) float64 {
	head := alignHead(b, align)
	mid := (len(b) - head) &^ (blockElems - 1)
	if head == 0 && mid == len(b) && mid > 0 {
		// Slices from Alloc: no Go loops, which at L1 sizes cost a few
		// percent of the call.
		return k.load(&b[0], int64(mid))
	}
	sum := loadGo(b[:head]) + loadGo(b[head+mid:])
	if mid > 0 {
		sum += k.load(&b[head], int64(mid))
	}
	return sum
}

// ClockKernel returns the clock-counting kernel.
func ClockKernel() (k Clock, ok bool) {
	return Clock{CyclesPerIter: clockAdds, Run: clockChain}, true
}
