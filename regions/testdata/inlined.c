// A static function the compiler inlines into both its callers, leaving
// no code of its own: debug information alone records it.
// Built by the tests: gcc -O2 -g inlined.c.
#include <stdio.h>
#include <stdlib.h>

static double kernel(double *a, long n) {
	double s = 0;
	for (long i = 0; i < n; i++)
		s += a[i] * a[i];
	return s;
}

__attribute__((noinline)) double twice(double *a, long n) { return 2 * kernel(a, n); }

int main(int argc, char **argv) {
	long n = argc > 1 ? atol(argv[1]) : 1000;
	double *a = calloc(n, sizeof *a);
	printf("%g %g\n", kernel(a, n), twice(a, n));
	return 0;
}
