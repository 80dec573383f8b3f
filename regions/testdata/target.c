// A probe target with functions of known call counts and durations. Each
// mode prints what the target measured itself: "own NAME CALLS SECONDS
// MEDIAN" (the total and the median of the calls' own timings, in
// seconds, where the mode times its calls).
// Built by the tests: gcc -O1 -pthread target.c -ldl [-no-pie | -pie].
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static int cmp(const void *a, const void *b) {
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

// median sorts d[0..n) and returns its middle value.
static double median(double *d, long n) {
	qsort(d, n, sizeof *d, cmp);
	return n ? d[n / 2] : 0;
}

static double now(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

// spin_us busy-waits n microseconds.
__attribute__((noinline)) void spin_us(long n) {
	double end = now() + n * 1e-6;
	while (now() < end)
		;
}

// touch_pages maps n fresh pages and writes one byte to each: n page
// faults.
__attribute__((noinline)) long touch_pages(long n) {
	long sz = sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, n * sz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -1;
	for (long i = 0; i < n; i++)
		p[i * sz] = 1;
	munmap(p, n * sz);
	return n;
}

__attribute__((noinline)) void inner(void) { spin_us(1000); }

// outer spends 1 ms itself and 2 ms in inner.
__attribute__((noinline)) void outer(void) {
	spin_us(1000);
	inner();
	inner();
}

// recurse nests depth calls, 500 us of work in each.
__attribute__((noinline)) void recurse(int depth) {
	spin_us(500);
	if (depth > 1)
		recurse(depth - 1);
	__asm__ volatile("" ::: "memory");
}

static jmp_buf env;

__attribute__((noinline)) void jumpee(void) {
	spin_us(100);
	longjmp(env, 1);
}

__attribute__((noinline)) void empty(void) { __asm__ volatile(""); }

__attribute__((noinline)) void leave(void) {
	fflush(stdout);
	_exit(0);
}

static void *worker(void *arg) {
	long calls = (long)arg;
	for (long i = 0; i < calls; i++)
		spin_us(2000);
	return NULL;
}

int main(int argc, char **argv) {
	const char *mode = argc > 1 ? argv[1] : "spin";
	long n = argc > 2 ? atol(argv[2]) : 5;
	long us = argc > 3 ? atol(argv[3]) : 10000;
	double t0, sum = 0;
	double *d = calloc(n > 0 ? n : 1, sizeof *d);
	if (!strcmp(mode, "spin")) {
		for (long i = 0; i < n; i++) {
			t0 = now();
			spin_us(us);
			d[i] = now() - t0;
			sum += d[i];
		}
		printf("own spin_us %ld %.9f %.9f\n", n, sum, median(d, n));
	} else if (!strcmp(mode, "empty")) {
		for (long i = 0; i < n; i++) {
			t0 = now();
			empty();
			d[i] = now() - t0;
			sum += d[i];
		}
		printf("own empty %ld %.9f %.9f\n", n, sum, median(d, n));
	} else if (!strcmp(mode, "pages")) {
		for (long i = 0; i < n; i++)
			touch_pages(us);
		printf("own touch_pages %ld %ld\n", n, us);
	} else if (!strcmp(mode, "nest")) {
		for (long i = 0; i < n; i++)
			outer();
		recurse(4);
		printf("own outer %ld\n", n);
	} else if (!strcmp(mode, "threads")) {
		pthread_t th[8];
		long t = us > 8 ? 8 : us;
		for (long i = 0; i < t; i++)
			pthread_create(&th[i], NULL, worker, (void *)n);
		for (long i = 0; i < t; i++)
			pthread_join(th[i], NULL);
		printf("own spin_us %ld\n", n * t);
	} else if (!strcmp(mode, "longjmp")) {
		for (long i = 0; i < n; i++)
			if (!setjmp(env))
				jumpee();
		spin_us(100);
		printf("own jumpee %ld\n", n);
	} else if (!strcmp(mode, "exit")) {
		spin_us(100);
		leave();
	} else if (!strcmp(mode, "dlopen")) {
		// argv[4]: the library; its function lib_spin_us is called n times.
		usleep(20000);
		void *h = dlopen(argv[4], RTLD_NOW);
		if (!h) {
			fprintf(stderr, "%s\n", dlerror());
			return 2;
		}
		void (*f)(long) = (void (*)(long))dlsym(h, "lib_spin_us");
		for (long i = 0; i < n; i++)
			f(us);
		printf("own lib_spin_us %ld\n", n);
	}
	return 0;
}
