//go:build !linux

package kernels

// adviseHugePages does nothing off Linux: there is no madvise for
// transparent huge pages to ask.
func adviseHugePages([]float64) {}
