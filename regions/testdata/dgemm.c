// Calls OpenBLAS's cblas_dgemm n times on 256x256 matrices.
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
	int calls = argc > 1 ? atoi(argv[1]) : 3, n = 256;
	double *a = calloc(n * n, sizeof *a), *b = calloc(n * n, sizeof *b), *c = calloc(n * n, sizeof *c);
	for (int i = 0; i < n * n; i++)
		a[i] = b[i] = 1.0 / (1 + i % 7);
	for (int i = 0; i < calls; i++)
		cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, a, n, b, n, 0.0, c, n);
	printf("own cblas_dgemm %d %g\n", calls, c[0]);
	return 0;
}
