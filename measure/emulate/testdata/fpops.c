/* fpops: runs one floating-point instruction form N times (argv[1] names
 * it, argv[2] is N); the loop itself does no FP work, so the count is
 * exactly N x the form's FLOPs. rprof's emulation tests compile it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double mem[8] __attribute__((aligned(32))) = {1, 2, 3, 4, 5, 6, 7, 8};

/* across_page(n) runs n iterations of a loop whose second vmulps starts
 * 3 bytes before a page boundary: QEMU ends the loop's block before it and
 * starts the next block with it. */
void across_page(long n);
__asm__(".text\n"
        ".balign 4096\n"
        ".skip 4088\n"
        "across_page:\n"
        "1:\tnop\n"
        "\tvmulps %ymm1, %ymm0, %ymm0\n" /* 4089 to 4092 */
        "\tvmulps %ymm1, %ymm0, %ymm0\n" /* 4093 to 4096: across */
        "\tdec %rdi\n"
        "\tjnz 1b\n"
        "\tvzeroupper\n"
        "\tret\n");

#define LOOP(insn) for (long i = 0; i < n; i++) __asm__ volatile(insn ::"r"(mem) : "xmm0", "xmm1", "xmm2", "memory")

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	const char *f = argv[1];
	long n = atol(argv[2]);
	/* x87 forms need a sane stack: two values on it */
	if (strncmp(f, "x87", 3) == 0)
		__asm__ volatile("fld1\n\tfld1");
#define CASE(name, insn) else if (strcmp(f, name) == 0) LOOP(insn);
	if (0) {
	}
	CASE("addsd", "addsd %%xmm1, %%xmm0")
	CASE("addss", "addss %%xmm1, %%xmm0")
	CASE("addpd", "addpd %%xmm1, %%xmm0")
	CASE("addps", "addps %%xmm1, %%xmm0")
	CASE("mulpd-mem", "mulpd (%0), %%xmm0")
	CASE("subps", "subps %%xmm1, %%xmm0")
	CASE("divsd", "divsd %%xmm1, %%xmm0")
	CASE("sqrtpd", "sqrtpd %%xmm1, %%xmm0")
	CASE("minps", "minps %%xmm1, %%xmm0")
	CASE("maxsd", "maxsd %%xmm1, %%xmm0")
	CASE("haddpd", "haddpd %%xmm1, %%xmm0")
	CASE("hsubps", "hsubps %%xmm1, %%xmm0")
	CASE("addsubpd", "addsubpd %%xmm1, %%xmm0")
	CASE("addsubps", "addsubps %%xmm1, %%xmm0")
	CASE("dpps", "dpps $0xff, %%xmm1, %%xmm0")
	CASE("dppd", "dppd $0x33, %%xmm1, %%xmm0")
	CASE("vaddsd", "vaddsd %%xmm1, %%xmm2, %%xmm0")
	CASE("vaddpd-ymm", "vaddpd %%ymm1, %%ymm2, %%ymm0")
	CASE("vmulps-ymm", "vmulps %%ymm1, %%ymm2, %%ymm0")
	CASE("vdivps-xmm", "vdivps %%xmm1, %%xmm2, %%xmm0")
	CASE("vsqrtps-ymm", "vsqrtps %%ymm1, %%ymm0")
	CASE("vmaxpd-ymm-mem", "vmaxpd (%0), %%ymm2, %%ymm0")
	CASE("vhaddps-ymm", "vhaddps %%ymm1, %%ymm2, %%ymm0")
	CASE("vaddsubpd-ymm", "vaddsubpd %%ymm1, %%ymm2, %%ymm0")
	CASE("vdpps-ymm", "vdpps $0xff, %%ymm1, %%ymm2, %%ymm0")
	CASE("vfmadd231sd", "vfmadd231sd %%xmm1, %%xmm2, %%xmm0")
	CASE("vfmadd231ss", "vfmadd231ss %%xmm1, %%xmm2, %%xmm0")
	CASE("vfmadd231pd-xmm", "vfmadd231pd %%xmm1, %%xmm2, %%xmm0")
	CASE("vfmadd132ps-ymm", "vfmadd132ps %%ymm1, %%ymm2, %%ymm0")
	CASE("vfnmsub213pd-ymm-mem", "vfnmsub213pd (%0), %%ymm2, %%ymm0")
	CASE("vfmaddsub231ps-xmm", "vfmaddsub231ps %%xmm1, %%xmm2, %%xmm0")
	CASE("vfmsubadd132pd-ymm", "vfmsubadd132pd %%ymm1, %%ymm2, %%ymm0")
	CASE("vfnmadd231ss", "vfnmadd231ss %%xmm1, %%xmm2, %%xmm0")
	CASE("x87-fadd", "fadd %%st(1), %%st")
	CASE("x87-fmul", "fmul %%st(1), %%st")
	CASE("x87-fdivl-mem", "fdivl (%0)")
	CASE("x87-fsqrt", "fsqrt")
	CASE("x87-fiaddl-mem", "fiaddl (%0)")
	else if (strcmp(f, "vmulps-ymm-across-page") == 0) across_page(n);
	/* no counted work */
	CASE("cmppd", "cmppd $1, %%xmm1, %%xmm0")
	CASE("cvtsd2ss", "cvtsd2ss %%xmm1, %%xmm0")
	CASE("rcpps", "rcpps %%xmm1, %%xmm0")
	CASE("vroundpd-ymm", "vroundpd $1, %%ymm1, %%ymm0")
	CASE("andpd", "andpd %%xmm1, %%xmm0")
	CASE("vmovapd-ymm", "vmovapd %%ymm1, %%ymm0")
	CASE("x87-fcom", "fcom %%st(1)")
	CASE("x87-fchs", "fchs")
	else {
		fprintf(stderr, "unknown form %s\n", f);
		return 2;
	}
	return 0;
}
