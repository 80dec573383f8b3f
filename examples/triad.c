/* triad N REPS: STREAM's TRIAD, a[i] = b[i] + s*c[i], over N doubles,
 * REPS times. Per run: W = 2*N*REPS FLOP; Q = 24*N*REPS bytes of DRAM
 * traffic when the arrays exceed the last-level cache (32*N*REPS where
 * stores allocate their line first). It prints those figures to stderr,
 * ready for rprof run --work and --traffic. */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
	long n = argc > 1 ? atol(argv[1]) : 20000000;
	long reps = argc > 2 ? atol(argv[2]) : 10;
	double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *c = malloc(n * sizeof *c);
	if (!a || !b || !c || n <= 0 || reps <= 0) {
		fprintf(stderr, "usage: triad N REPS (N doubles per array, REPS passes)\n");
		return 2;
	}
	for (long i = 0; i < n; i++)
		a[i] = 0, b[i] = 1, c[i] = 2;
	const double s = 3;
	for (long r = 0; r < reps; r++)
		for (long i = 0; i < n; i++)
			a[i] = b[i] + s * c[i];
	fprintf(stderr, "triad: --work %.6g --traffic %.6g (a[0] = %g)\n", 2.0 * n * reps, 24.0 * n * reps, a[0]);
	return 0;
}
