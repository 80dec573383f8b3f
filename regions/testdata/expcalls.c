// Calls libm's exp N times, through the PLT: a program linked now binds to
// the default version, exp@@GLIBC_2.29 on x86-64 glibc.
// Built by the tests: gcc -O1 expcalls.c -lm.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
	long n = argc > 1 ? atol(argv[1]) : 1;
	volatile double x = 0.5;
	double s = 0;
	for (long i = 0; i < n; i++)
		s += exp(x + i * 1e-9);
	printf("%g\n", s);
	return 0;
}
