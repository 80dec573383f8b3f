/* dgemm N REPS: C = A*B for N x N doubles through the CBLAS interface of
 * the BLAS it is linked with (OpenBLAS, BLIS, MKL). W = 2*N^3*REPS FLOP. */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
	int n = argc > 1 ? atoi(argv[1]) : 2000;
	int reps = argc > 2 ? atoi(argv[2]) : 5;
	double *a = malloc((size_t)n * n * sizeof *a), *b = malloc((size_t)n * n * sizeof *b),
	       *c = malloc((size_t)n * n * sizeof *c);
	if (!a || !b || !c || n <= 0 || reps <= 0) {
		fprintf(stderr, "usage: dgemm N REPS\n");
		return 2;
	}
	for (long i = 0; i < (long)n * n; i++)
		a[i] = 1.0 / (i % 7 + 1), b[i] = 1.0 / (i % 5 + 1), c[i] = 0;
	for (int r = 0; r < reps; r++)
		cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1, a, n, b, n, 0, c, n);
	fprintf(stderr, "dgemm: --work %.6g (c[0] = %g)\n", 2.0 * n * n * (double)n * reps, c[0]);
	return 0;
}
