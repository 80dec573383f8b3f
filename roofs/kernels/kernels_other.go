//go:build !amd64

package kernels

import "runtime"

// ComputeKernels returns no kernels off amd64: peak FLOP/s needs SIMD
// assembly, and a Go loop would report the compiler, not the machine.
func ComputeKernels() (ok []Compute, skipped []Skipped) {
	return nil, []Skipped{{Name: "compute", Reason: "no SIMD kernels for GOARCH=" + runtime.GOARCH}}
}

// BandwidthKernels returns the portable Go kernels off amd64; they still
// saturate DRAM on most machines but may fall short inside the caches.
func BandwidthKernels() (ok []Bandwidth, skipped []Skipped) {
	return goBandwidth, []Skipped{{Name: "triad-nt", Reason: "no non-temporal store kernel for GOARCH=" + runtime.GOARCH}}
}

// ClockKernel has no kernel off amd64: a Go loop's cycles per iteration are
// the compiler's choice.
func ClockKernel() (k Clock, ok bool) { return Clock{}, false }
