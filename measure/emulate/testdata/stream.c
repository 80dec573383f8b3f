/* stream: TRIAD a[i] = b[i] + s*c[i] over n doubles, passes times, in its
 * own function so that the tests can find it by name; the arrays are
 * initialised in main first. */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) void triad(double *a, const double *b, const double *c, long n, int passes)
{
	for (int p = 0; p < passes; p++)
		for (long i = 0; i < n; i++)
			a[i] = b[i] + 3.0 * c[i];
}

int main(int argc, char **argv)
{
	long n = atol(argv[1]);
	int passes = atoi(argv[2]);
	double *a = aligned_alloc(64, n * 8), *b = aligned_alloc(64, n * 8), *c = aligned_alloc(64, n * 8);
	for (long i = 0; i < n; i++) {
		a[i] = 0;
		b[i] = i;
		c[i] = 2 * i;
	}
	triad(a, b, c, n, passes);
	printf("%g\n", a[n / 2]);
	return 0;
}
