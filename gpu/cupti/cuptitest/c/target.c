/* A stand-in for a CUDA program: it does what the CUDA driver does at
 * cuInit (loads the library CUDA_INJECTION64_PATH names and calls its
 * InitializeInjection) and exits; argv[1] "crash" exits without atexit
 * handlers, as a killed process would, and "fork" forks a child that
 * exits (running the inherited atexit handlers) before the parent does. */
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
