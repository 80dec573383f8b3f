/* A stand-in for a CUDA program: it does what the CUDA driver does at
 * cuInit (loads the library CUDA_INJECTION64_PATH names and calls its
 * InitializeInjection) and exits; argv[1] "crash" exits without atexit
 * handlers, as a killed process would, and "fork" forks a child that
 * exits (running the inherited atexit handlers) before the parent does;
 * "context" creates a CUDA context on device 0 (the fake CUPTI calls the
 * resource callback), "destroy" creates it and destroys it before exit. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	const char *path = getenv("CUDA_INJECTION64_PATH");
	if (path == NULL)
		return 3;
	void *lib = dlopen(path, RTLD_NOW);
	if (lib == NULL) {
		fprintf(stderr, "%s\n", dlerror());
		return 4;
	}
	int (*init)(void) = (int (*)(void))dlsym(lib, "InitializeInjection");
	if (init == NULL || init() != 1)
		return 5;
	if (argc > 1 && (strcmp(argv[1], "context") == 0 || strcmp(argv[1], "destroy") == 0)) {
		void *cupti = dlopen(getenv("RPROF_CUPTI_LIB"), RTLD_NOW | RTLD_NOLOAD);
		void (*context)(unsigned, int) = cupti != NULL ? (void (*)(unsigned, int))dlsym(cupti, "fakeContext") : NULL;
		if (context == NULL)
			return 7;
		context(1, 0);
		if (strcmp(argv[1], "destroy") == 0)
			context(2, 0);
	}
	if (argc > 1 && strcmp(argv[1], "crash") == 0)
		_exit(0);
	if (argc > 1 && strcmp(argv[1], "fork") == 0) {
		pid_t child = fork();
		if (child == 0)
			exit(0);
		if (child < 0 || waitpid(child, NULL, 0) != child)
			return 6;
	}
	return 0;
}
