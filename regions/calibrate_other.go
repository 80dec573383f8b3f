//go:build !amd64

package regions

// No calibration functions outside amd64: Calibrate refuses.
func calibTargets() []calibTarget { return nil }
