/* busy: N processes at once, each spinning until it has used MS
 * milliseconds of CPU time; the first waits for the others. rprof's
 * thread-scope tests run it as a program of known parallelism. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void spin(long ms)
{
	struct timespec t;
	volatile double x = 1;
	do {
		for (int i = 0; i < 100000; i++)
			x = x * 1.0000001 + 1e-9;
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	} while (t.tv_sec * 1000L + t.tv_nsec / 1000000 < ms);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 2;
	long ms = argc > 2 ? atol(argv[2]) : 300;
	for (int i = 1; i < n; i++) {
		pid_t pid = fork();
		if (pid < 0)
			return 1;
		if (pid == 0) {
			spin(ms);
			return 0;
		}
	}
	spin(ms);
	int status, code = 0;
	while (wait(&status) > 0)
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			code = 1;
	return code;
}
