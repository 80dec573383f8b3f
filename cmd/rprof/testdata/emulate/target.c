/* target: the test program of rprof's emulation tests (compiled by the
 * tests with gcc). Modes:
 *   fma N STATUS       N ymm FMAs (8 fp64 FLOPs each), copy stdin to
 *                      stdout, exit STATUS
 *   avx512             one AVX-512 add (SIGILL under QEMU 7.2)
 *   fork-exec N PROG   N FMAs, then fork; the child execs PROG fma N 0
 *                      (counted when followed); the parent waits
 *   sh N               system("PROG fma N 0") through /bin/sh
 *   touch FILE N       create FILE, then N FMAs (a long run under emulation)
 *   sweeps T KB S      T threads (the main one and T-1 others, as OpenMP
 *                      does) sum KB KiB of doubles S times, taking 1 KiB
 *                      chunks from a shared counter per sweep (dynamic
 *                      scheduling: which thread reads which chunk varies
 *                      between runs when T > 1); KB*128*S fp64 adds, + T
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void fmas(long n)
{
	for (long i = 0; i < n; i++)
		__asm__ volatile("vfmadd231pd %%ymm1, %%ymm2, %%ymm0" ::: "xmm0");
}

enum { chunk = 128, max_sweeps = 64 };
static double *data;
static long nchunks, next[max_sweeps];
static int nsweeps;
static pthread_barrier_t barrier;

static void *sweep(void *sum)
{
	double s = 0;
	for (int k = 0; k < nsweeps; k++) {
		long c;
		while ((c = __atomic_fetch_add(&next[k], 1, __ATOMIC_RELAXED)) < nchunks)
			for (long i = c * chunk; i < (c + 1) * chunk; i++)
				s += data[i];
		pthread_barrier_wait(&barrier);
	}
	*(double *)sum = s;
	return NULL;
}

static int sweeps(int t, long kb, int s)
{
	pthread_t th[16];
	double sums[16], total = 0;
	if (t < 1 || t > 16 || s < 1 || s > max_sweeps)
		return 2;
	nchunks = kb * 1024 / (chunk * sizeof(double));
	nsweeps = s;
	data = malloc(nchunks * chunk * sizeof(double));
	for (long i = 0; i < nchunks * chunk; i++)
		data[i] = (double)(i & 7);
	pthread_barrier_init(&barrier, NULL, t);
	/* One thread runs on the main one alone, as OpenMP does. */
	for (int i = 1; i < t; i++)
		pthread_create(&th[i], NULL, sweep, &sums[i]);
	sweep(&sums[0]);
	for (int i = 1; i < t; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < t; i++)
		total += sums[i];
	printf("%g\n", total);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 4 && strcmp(argv[1], "fma") == 0) {
		char buf[4096];
		size_t n;
		fmas(atol(argv[2]));
		while ((n = fread(buf, 1, sizeof(buf), stdin)) > 0)
			fwrite(buf, 1, n, stdout);
		return atoi(argv[3]);
	}
	if (argc >= 2 && strcmp(argv[1], "avx512") == 0) {
		__asm__ volatile("vaddpd %%zmm1, %%zmm2, %%zmm0" ::: "xmm0");
		return 0;
	}
	if (argc >= 3 && strcmp(argv[1], "fork-exec") == 0) {
		fmas(atol(argv[2]));
		pid_t pid = fork();
		if (pid == 0) {
			execl(argv[0], argv[0], "fma", argv[2], "0", (char *)NULL);
			_exit(127);
		}
		int st;
		waitpid(pid, &st, 0);
		return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
	}
	if (argc >= 3 && strcmp(argv[1], "sh") == 0) {
		char cmd[4200];
		snprintf(cmd, sizeof(cmd), "%s fma %s 0 </dev/null", argv[0], argv[2]);
		return system(cmd) == 0 ? 0 : 1;
	}
	if (argc >= 4 && strcmp(argv[1], "touch") == 0) {
		FILE *f = fopen(argv[2], "w");
		if (f)
			fclose(f);
		fmas(atol(argv[3]));
		return 0;
	}
	if (argc >= 5 && strcmp(argv[1], "sweeps") == 0)
		return sweeps(atoi(argv[2]), atol(argv[3]), atoi(argv[4]));
	return 2;
}
