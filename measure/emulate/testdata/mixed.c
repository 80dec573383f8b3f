/* mixed: a program of several kinds of work, for the slowdown benchmark:
 * integer sorting, libm calls, a stencil over an array larger than L2, and
 * string formatting. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000;
	long *keys = malloc(n * sizeof(long));
	double *u = malloc(n * sizeof(double)), *v = malloc(n * sizeof(double));
	unsigned long s = 88172645463325252ul;
	for (long i = 0; i < n; i++) {
		s ^= s << 13, s ^= s >> 7, s ^= s << 17;
		keys[i] = (long)(s % 1000003);
		u[i] = sin(0.001 * i) + sqrt((double)i);
	}
	qsort(keys, n, sizeof(long), cmp);
	for (int it = 0; it < 10; it++) {
		for (long i = 1; i < n - 1; i++)
			v[i] = 0.25 * u[i - 1] + 0.5 * u[i] + 0.25 * u[i + 1];
		double *t = u;
		u = v, v = t;
	}
	char buf[64];
	size_t len = 0;
	for (long i = 0; i < n; i += 97)
		len += (size_t)snprintf(buf, sizeof(buf), "%ld:%.3f", keys[i], u[i]);
	printf("%zu %g\n", len, u[n / 2]);
	return 0;
}
