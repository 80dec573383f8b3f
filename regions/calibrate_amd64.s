#include "textflag.h"

// Empty functions whose first instruction is of each kind the kernel
// treats differently when it places a uprobe there (see calibrate.go).

// func calibNop5()
TEXT ·calibNop5(SB), NOSPLIT|NOFRAME, $0-0
	// nopl 0x0(%rax,%rax,1): the five-byte NOP newer kernels optimise.
	BYTE $0x0f; BYTE $0x1f; BYTE $0x44; BYTE $0x00; BYTE $0x00
	RET

// func calibPush()
TEXT ·calibPush(SB), NOSPLIT|NOFRAME, $0-0
	// push %rbp: emulated by the kernel.
	PUSHQ BP
	POPQ BP
	RET

// func calibEndbr()
TEXT ·calibEndbr(SB), NOSPLIT|NOFRAME, $0-0
	// endbr64: the first instruction of functions built with
	// -fcf-protection (Debian's and Ubuntu's gcc default).
	BYTE $0xf3; BYTE $0x0f; BYTE $0x1e; BYTE $0xfa
	RET

// func calibStep()
TEXT ·calibStep(SB), NOSPLIT|NOFRAME, $0-0
	// mov %rdi,%rax: executed out of line, single-stepped.
	BYTE $0x48; BYTE $0x89; BYTE $0xf8
	RET

// func calibAddrs() (nop5, push, endbr, step uintptr)
TEXT ·calibAddrs(SB), NOSPLIT, $0-32
	LEAQ ·calibNop5(SB), AX
	MOVQ AX, nop5+0(FP)
	LEAQ ·calibPush(SB), AX
	MOVQ AX, push+8(FP)
	LEAQ ·calibEndbr(SB), AX
	MOVQ AX, endbr+16(FP)
	LEAQ ·calibStep(SB), AX
	MOVQ AX, step+24(FP)
	RET
