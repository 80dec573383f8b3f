package regions

// Implemented in calibrate_amd64.s.
func calibNop5()
func calibPush()
func calibEndbr()
func calibStep()
func calibAddrs() (nop5, push, endbr, step uintptr)

// calibTargets are the empty functions Calibrate probes, by kind.
func calibTargets() []calibTarget {
	nop5, push, endbr, step := calibAddrs()
	return []calibTarget{
		{KindNop5, nop5, calibNop5},
		{KindPush, push, calibPush},
		{KindEndbr, endbr, calibEndbr},
		{KindStep, step, calibStep},
	}
}
