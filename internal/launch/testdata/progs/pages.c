/* pages N: touches N fresh anonymous pages once each, so that the
 * page-faults counter grows by about N. */
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char **argv) {
	long n = argc > 1 ? atol(argv[1]) : 0;
	long pg = sysconf(_SC_PAGESIZE);
	if (n <= 0)
		return 0;
	char *p = mmap(0, n * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 1;
	/* One fault per page: no transparent huge pages. */
	madvise(p, n * pg, MADV_NOHUGEPAGE);
	for (long i = 0; i < n; i++)
		p[i * pg] = 1;
	return 0;
}
