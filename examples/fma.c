/* fma ITERS: an FMA-bound loop: 8 independent chains of fused
 * multiply-adds on 4-wide vectors (the compiler vectorises them with
 * the Makefile's -O3 -march=x86-64-v3, AVX2 and FMA, which QEMU can
 * emulate), so the FMA pipes, not latency or memory, bind it.
 * W = 2*8*4*ITERS FLOP; Q is about 0. */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
	long iters = argc > 1 ? atol(argv[1]) : 100000000;
	double acc[8][4], x = 1.0000001, y = 0.9999999;
	for (int j = 0; j < 8; j++)
		for (int k = 0; k < 4; k++)
			acc[j][k] = j + k;
	for (long i = 0; i < iters; i++)
		for (int j = 0; j < 8; j++)
			for (int k = 0; k < 4; k++)
				acc[j][k] = acc[j][k] * x + y;
	double sum = 0;
	for (int j = 0; j < 8; j++)
		for (int k = 0; k < 4; k++)
			sum += acc[j][k];
	fprintf(stderr, "fma: --work %.6g (sum %g)\n", 2.0 * 8 * 4 * iters, sum);
	return 0;
}
