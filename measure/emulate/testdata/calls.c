// calls.c is a shared library function of known work (built with -DLIB
// -shared -fPIC) and a program that calls it (built with -lcalls): three
// calls one after the other, of 1000, 2000 and 3000 iterations, then one
// call in each of two threads that meet inside it, so that they overlap,
// then a forked child that execs /bin/true: a process image that has the
// library mapped and makes no call.
#include <pthread.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

double work(int n, pthread_barrier_t *meet);

#ifdef LIB
// work does n multiply-adds in a dependent chain (2n FLOPs; build with
// -ffp-contract=off so that they stay two instructions), after waiting at
// meet, when given, for the other threads.
double work(int n, pthread_barrier_t *meet)
{
	double s = 0, a = 1.000001;
	if (meet)
		pthread_barrier_wait(meet);
	for (int i = 0; i < n; i++)
		s = s * a + 1.0;
	return s;
}
#else
static pthread_barrier_t meet;

static void *thread(void *arg)
{
	(void)arg;
	work(1000, &meet);
	return NULL;
}

int main(void)
{
	pthread_t t;
	double s = work(1000, NULL) + work(2000, NULL) + work(3000, NULL);
	pthread_barrier_init(&meet, NULL, 2);
	pthread_create(&t, NULL, thread, NULL);
	work(1000, &meet);
	pthread_join(t, NULL);
	if (fork() == 0) {
		execl("/bin/true", "true", (char *)NULL);
		_exit(1);
	}
	wait(NULL);
	printf("%g\n", s);
	return 0;
}
#endif
