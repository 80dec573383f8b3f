/* target: the test program of rprof's emulation tests (compiled by the
 * tests with gcc). Modes:
 *   fma N STATUS       N ymm FMAs (8 fp64 FLOPs each), copy stdin to
 *                      stdout, exit STATUS
 *   avx512             one AVX-512 add (SIGILL under QEMU 7.2)
 *   fork-exec N PROG   N FMAs, then fork; the child execs PROG fma N 0
 *                      (counted when followed); the parent waits
 *   sh N               system("PROG fma N 0") through /bin/sh
 *   touch FILE N       create FILE, then N FMAs (a long run under emulation)
 */
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
	return 2;
}
