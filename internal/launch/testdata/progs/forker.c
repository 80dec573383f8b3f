/* forker N: a forked child touches N fresh pages while the parent waits,
 * so the page faults counted for the parent's command grow by about N only
 * when children are counted. */
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
	long n = argc > 1 ? atol(argv[1]) : 0;
	long pg = sysconf(_SC_PAGESIZE);
	pid_t pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		if (n > 0) {
			char *p = mmap(0, n * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (p == MAP_FAILED)
				_exit(1);
			madvise(p, n * pg, MADV_NOHUGEPAGE);
			for (long i = 0; i < n; i++)
				p[i * pg] = 1;
		}
		_exit(0);
	}
	int st;
	if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st))
		return 1;
	return WEXITSTATUS(st);
}
