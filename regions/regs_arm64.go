package regions

// Offsets in the kernel's struct user_pt_regs on arm64: regs[31], then sp.
const (
	regsKnown = true
	regsSP    = 248
	regsArg0  = 0
	// retPop is 0: the return address is in the link register, not on the
	// stack.
	retPop = 0
)
