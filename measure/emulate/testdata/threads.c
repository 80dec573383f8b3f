/* threads: T threads each run N ymm FMAs (8 fp64 FLOPs each) at once. */
#include <pthread.h>
#include <stdlib.h>

static long n;

static void *work(void *arg)
{
	(void)arg;
	for (long i = 0; i < n; i++)
		__asm__ volatile("vfmadd231pd %%ymm1, %%ymm2, %%ymm0" ::: "xmm0");
	return NULL;
}

int main(int argc, char **argv)
{
	int t = atoi(argv[1]);
	n = atol(argv[2]);
	pthread_t th[64];
	for (int i = 0; i < t && i < 64; i++)
		pthread_create(&th[i], NULL, work, NULL);
	for (int i = 0; i < t && i < 64; i++)
		pthread_join(th[i], NULL);
	return 0;
}
