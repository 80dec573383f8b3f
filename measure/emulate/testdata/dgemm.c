/* dgemm: one cblas_dgemm of n x n matrices (C = A B, alpha 1, beta 0), through
 * the vendor BLAS; rprof's emulation tests compile it against OpenBLAS. */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 256;
	double *a = malloc(sizeof(double) * n * n), *b = malloc(sizeof(double) * n * n),
	       *c = malloc(sizeof(double) * n * n);
	for (int i = 0; i < n * n; i++) {
		a[i] = i % 7; /* conversions only: no FP work outside the BLAS */
		b[i] = i % 5;
		c[i] = 1;
	}
	cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, a, n, b, n, 0.0, c, n);
	printf("%g\n", c[n * n / 2]);
	return 0;
}
