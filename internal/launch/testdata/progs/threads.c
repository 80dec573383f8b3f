/* threads T MS: T threads each burn MS milliseconds of their own CPU time,
 * so the process's task-clock is about T*MS however busy the machine is. */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

static long ms;

static double cpu_ms(void) {
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void *burn(void *arg) {
	(void)arg;
	double start = cpu_ms();
	volatile unsigned long x = 0;
	while (cpu_ms() - start < ms)
		for (int i = 0; i < 10000; i++)
			x += i;
	return 0;
}

int main(int argc, char **argv) {
	int t = argc > 1 ? atoi(argv[1]) : 1;
	ms = argc > 2 ? atol(argv[2]) : 100;
	pthread_t th[64];
	if (t > 64)
		t = 64;
	for (int i = 0; i < t; i++)
		pthread_create(&th[i], 0, burn, 0);
	for (int i = 0; i < t; i++)
		pthread_join(th[i], 0);
	return 0;
}
