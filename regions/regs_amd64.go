package regions

// Offsets in the kernel's struct pt_regs on x86-64 (arch/x86/include/
// asm/ptrace.h): sp after r15..ss's first 19 slots, di (the first
// argument) after 14.
const (
	regsKnown = true
	regsSP    = 152
	regsArg0  = 112
	// retPop is what a return moves the stack pointer by: ret pops the
	// return address the call pushed.
	retPop = 8
)
