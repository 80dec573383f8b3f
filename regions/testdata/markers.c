// A LIKWID marker program: regions "init" once and "compute" three times
// on each of two threads. Built by the tests with -DLIKWID_PERFMON against
// Debian's likwid and run without likwid-perfctr.
#include <likwid-marker.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>

static void spin_ms(int ms) {
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	do
		clock_gettime(CLOCK_MONOTONIC, &b);
	while ((b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000 < ms);
}

static void *work(void *arg) {
	(void)arg;
	for (int i = 0; i < 3; i++) {
		LIKWID_MARKER_START("compute");
		spin_ms(2);
		LIKWID_MARKER_STOP("compute");
	}
	return NULL;
}

int main(void) {
	LIKWID_MARKER_INIT;
	LIKWID_MARKER_START("init");
	spin_ms(1);
	LIKWID_MARKER_STOP("init");
	pthread_t th[2];
	for (int i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, work, NULL);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	LIKWID_MARKER_CLOSE;
	puts("own markers done");
	return 0;
}
