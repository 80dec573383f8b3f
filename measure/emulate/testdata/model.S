/*
 * A fixed sequence of memory accesses for the cache model's golden test
 * (TestModelOutputIsTheRecordedOne): no libc and data at a fixed address,
 * so that the accesses, their order and their addresses are the same
 * whatever the compiler, the C library or the loader. It runs a ymm triad
 * over 3 x 2 MiB (twice), a pseudo-random walk of loads and stores of 1 to
 * 32 bytes at unaligned offsets (many cross a line), non-temporal stores
 * over 1 MiB, and the triad again.
 *   gcc -nostdlib -static -no-pie -o model model.S
 */
	.text
	.globl	_start
	.type	_start, @function
_start:
	push	%rbx			/* the first access: the stack */
	pop	%rbx
	mov	$9, %eax		/* mmap(BASE, 16 MiB, RW, PRIVATE|ANON|FIXED, -1, 0) */
	movabs	$0x200000000, %rdi
	mov	$0x1000000, %esi
	mov	$3, %edx
	mov	$0x32, %r10d
	mov	$-1, %r8
	xor	%r9d, %r9d
	syscall
	cmp	$-4096, %rax
	ja	fail
	call	triad
	call	triad
	call	walk
	call	ntstore
	call	triad
	mov	$60, %eax		/* exit(0) */
	xor	%edi, %edi
	syscall
fail:
	mov	$60, %eax
	mov	$1, %edi
	syscall
	.size	_start, .-_start

/* triad: a[i] = b[i] + 3 c[i] over 256 Ki doubles each (a at BASE, b at
 * BASE + 4 MiB, c at BASE + 8 MiB) */
	.type	triad, @function
triad:
	movabs	$0x200000000, %rdi
	lea	0x400000(%rdi), %rsi
	lea	0x800000(%rdi), %rdx
	mov	$3, %eax
	vcvtsi2sd %eax, %xmm1, %xmm1
	vbroadcastsd %xmm1, %ymm1
	xor	%ecx, %ecx
1:	vmovupd	(%rsi,%rcx,8), %ymm0
	vfmadd231pd (%rdx,%rcx,8), %ymm1, %ymm0
	vmovupd	%ymm0, (%rdi,%rcx,8)
	add	$4, %rcx
	cmp	$0x40000, %rcx
	jb	1b
	ret
	.size	triad, .-triad

/* walk: 200,000 steps of a 64-bit LCG; each step loads and stores 1 to
 * 32 bytes around an offset taken from the state's high bits, in the
 * 8 MiB above BASE + 4 MiB */
	.type	walk, @function
walk:
	movabs	$0x200400000, %r8
	movabs	$6364136223846793005, %r9
	movabs	$1442695040888963407, %r10
	mov	$12345, %r11
	mov	$200000, %ecx
1:	imul	%r9, %r11
	add	%r10, %r11
	mov	%r11, %rax
	shr	$41, %rax		/* 23 bits: 0 to 8 MiB - 1 */
	cmp	$0x7fff00, %rax
	jae	2f
	mov	(%r8,%rax), %rdx		/* load 8 */
	mov	%edx, 4(%r8,%rax)		/* store 4 */
	movdqu	13(%r8,%rax), %xmm0		/* load 16 */
	vmovdqu	%ymm0, 40(%r8,%rax)		/* store 32 */
	movzbl	63(%r8,%rax), %edx		/* load 1 */
	mov	%dx, 127(%r8,%rax)		/* store 2 */
	vmovdqu	130(%r8,%rax), %ymm2		/* load 32 */
2:	dec	%ecx
	jnz	1b
	ret
	.size	walk, .-walk

/* ntstore: non-temporal stores of 16 and 8 bytes over the 1 MiB at BASE */
	.type	ntstore, @function
ntstore:
	movabs	$0x200000000, %rdi
	xor	%ecx, %ecx
1:	movntdq	%xmm0, (%rdi,%rcx)
	movnti	%rdx, 16(%rdi,%rcx)
	add	$32, %rcx
	cmp	$0x100000, %rcx
	jb	1b
	sfence
	ret
	.size	ntstore, .-ntstore
	.section .note.GNU-stack,"",@progbits
