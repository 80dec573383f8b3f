package kernels

// Clock is a kernel whose duration is a known number of core cycles: Run
// performs iters*CyclesPerIter dependent one-cycle integer adds, so
// CyclesPerIter*iters/seconds is the clock the core ran at. Where cpufreq
// is missing (most VMs) it is the only way to know the frequency a
// benchmark saw. ok is false where no such kernel exists.
type Clock struct {
	CyclesPerIter float64
	// Run returns the chain's result (iters*CyclesPerIter), which a caller
	// may check to prove the work was done.
	Run func(iters int64) int64
}
