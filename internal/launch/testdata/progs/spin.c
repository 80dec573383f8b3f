/* spin M: a fixed CPU-bound loop of M million iterations, so that its wall
 * time shows any slowdown from being counted (the launcher overhead
 * benchmark's target). */
#include <stdlib.h>

int main(int argc, char **argv) {
	long m = argc > 1 ? atol(argv[1]) : 1000;
	volatile unsigned long x = 0;
	for (long j = 0; j < m; j++)
		for (long i = 0; i < 1000000; i++)
			x += i ^ j;
	return x == 42; /* keeps the loop; exits 0 */
}
