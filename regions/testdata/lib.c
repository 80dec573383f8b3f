// A library the target loads with dlopen after it started.
#include <time.h>

__attribute__((noinline)) void lib_spin_us(long n) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	double end = ts.tv_sec + ts.tv_nsec * 1e-9 + n * 1e-6;
	for (;;) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		if (ts.tv_sec + ts.tv_nsec * 1e-9 >= end)
			break;
	}
}
