/*
 * rprof's CUPTI injection library. The CUDA driver loads the shared object
 * that CUDA_INJECTION64_PATH names into the process at cuInit and calls its
 * InitializeInjection; this one opens CUPTI, records every kernel's
 * activity record (CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) and writes them,
 * one line each, to RPROF_CUPTI_DIR/PID, which rprof reads once the target
 * has ended (format in ../records.go). It never stops the target: what
 * fails is written as a line and the target runs on unprofiled.
 *
 * CUPTI is opened with dlopen (RPROF_CUPTI_LIB, else libcupti.so in the
 * loader's path), and the few types and prototypes used are declared here,
 * from NVIDIA's public cupti headers, so that the library builds with plain
 * gcc and no CUDA toolkit (build.sh). Where RPROF_CUPTI_METRICS names
 * metrics, CUPTI's range profiler counts them too (profiler.c).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

/* cupti_result.h */
typedef int CUptiResult;
#define CUPTI_SUCCESS 0
#define CUPTI_ERROR_MAX_LIMIT_REACHED 12
/* cupti_activity.h */
#define CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL 10
#define CUPTI_ACTIVITY_FLAG_FLUSH_FORCED 1
#define ACTIVITY_RECORD_ALIGNMENT 8

#include "layout.h"
#include "profiler.h"

/* CUPTI API version 10 (CUDA 9.0) is the first whose kernel records have
 * this prefix (CUpti_ActivityKernel4). */
#define MIN_VERSION 10
/* The newest version whose headers the prefix was checked against (18:
 * CUDA 11.8); newer ones are read alike and marked unverified. */
#define CHECKED_VERSION 18

#define BUFFER_BYTES (8u << 20)

typedef void (*buffer_requested_fn)(uint8_t **buffer, size_t *size, size_t *max_records);
typedef void (*buffer_completed_fn)(void *ctx, uint32_t stream, uint8_t *buffer, size_t size, size_t valid);

static struct {
	CUptiResult (*get_version)(uint32_t *);
	CUptiResult (*get_result_string)(CUptiResult, const char **);
	CUptiResult (*register_callbacks)(buffer_requested_fn, buffer_completed_fn);
	CUptiResult (*enable)(int);
	CUptiResult (*flush_all)(uint32_t);
	CUptiResult (*next_record)(uint8_t *, size_t, void **);
	CUptiResult (*dropped)(void *, uint32_t, size_t *);
} cupti;

static pthread_mutex_t out_mu = PTHREAD_MUTEX_INITIALIZER;
static FILE *out;
/* owner is the process that opened out: a child forked after cuInit
 * inherits out and the atexit handler, and must write nothing (its CUDA is
 * unusable anyway, and its exit is not the owner's). */
static pid_t owner;

const char *result_string(CUptiResult r)
{
	const char *s = NULL;
	if (cupti.get_result_string == NULL || cupti.get_result_string(r, &s) != CUPTI_SUCCESS || s == NULL)
		return "unknown";
	return s;
}

/* line writes one record line under the lock, in the owner only. */
void line(const char *fmt, ...)
{
	if (getpid() != owner)
		return;
	va_list ap;
	pthread_mutex_lock(&out_mu);
	va_start(ap, fmt);
	vfprintf(out, fmt, ap);
	va_end(ap);
	fflush(out);
	pthread_mutex_unlock(&out_mu);
}

/* failed says that a CUPTI call failed: the target runs on unprofiled. */
static void failed(const char *call, CUptiResult r)
{
	line("error\t%s\t%d\t%s\n", call, r, result_string(r));
}

static void buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	*buffer = aligned_alloc(ACTIVITY_RECORD_ALIGNMENT, BUFFER_BYTES);
	*size = *buffer != NULL ? BUFFER_BYTES : 0;
	*max_records = 0;
}

static uint32_t u32(const uint8_t *r, int off)
{
	uint32_t v;
	memcpy(&v, r + off, sizeof v);
	return v;
}

static uint64_t u64(const uint8_t *r, int off)
{
	uint64_t v;
	memcpy(&v, r + off, sizeof v);
	return v;
}

/* write_kernel writes one kernel record; out_mu is held. */
static void write_kernel(const uint8_t *r)
{
	const char *name;
	memcpy(&name, r + OFF_NAME, sizeof name);
	/* Names are mangled C++ or C identifiers; the line format holds no tab
	 * or newline, so a name with one is cut there. */
	int n = name != NULL ? (int)strcspn(name, "\t\n") : 0;
	fprintf(out, "kernel\t%u\t%u\t%u\t%llu\t%llu\t%d,%d,%d\t%d,%d,%d\t%u\t%.*s\n", u32(r, OFF_DEVICE), u32(r, OFF_CONTEXT),
	     u32(r, OFF_STREAM), (unsigned long long)u64(r, OFF_START), (unsigned long long)u64(r, OFF_END),
	     (int32_t)u32(r, OFF_GRID), (int32_t)u32(r, OFF_GRID + 4), (int32_t)u32(r, OFF_GRID + 8),
	     (int32_t)u32(r, OFF_BLOCK), (int32_t)u32(r, OFF_BLOCK + 4), (int32_t)u32(r, OFF_BLOCK + 8),
	     u32(r, OFF_CORRELATION), n, name != NULL ? name : "");
}

/* buffer_completed writes a buffer's kernel records in one batch: one
 * write per buffer, not per kernel. */
static void buffer_completed(void *ctx, uint32_t stream, uint8_t *buffer, size_t size, size_t valid)
{
	(void)size;
	if (getpid() != owner) {
		free(buffer);
		return;
	}
	void *rec = NULL;
	CUptiResult r;
	pthread_mutex_lock(&out_mu);
	while ((r = cupti.next_record(buffer, valid, &rec)) == CUPTI_SUCCESS)
		if (u32(rec, OFF_KIND) == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
			write_kernel(rec);
	fflush(out);
	pthread_mutex_unlock(&out_mu);
	if (r != CUPTI_ERROR_MAX_LIMIT_REACHED)
		failed("cuptiActivityGetNextRecord", r);
	size_t dropped = 0;
	if (cupti.dropped(ctx, stream, &dropped) == CUPTI_SUCCESS && dropped > 0)
		line("dropped\t%zu\n", dropped);
	free(buffer);
}

/* finish flushes CUPTI's buffers at the target's exit and marks the file
 * complete: a file without "end" is of a process that did not exit. */
static void finish(void)
{
	if (getpid() != owner)
		return;
	profiler_finish();
	CUptiResult r = cupti.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	if (r != CUPTI_SUCCESS)
		failed("cuptiActivityFlushAll", r);
	line("end\n");
}

/* open_out creates RPROF_CUPTI_DIR/PID, the one file this process writes. */
static FILE *open_out(void)
{
	const char *dir = getenv("RPROF_CUPTI_DIR");
	if (dir == NULL || *dir == '\0')
		return NULL;
	char path[4096];
	if (snprintf(path, sizeof path, "%s/%d", dir, (int)getpid()) >= (int)sizeof path)
		return NULL;
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return NULL;
	return fdopen(fd, "w");
}

/* bind resolves CUPTI's functions; the name of the first missing one, or NULL. */
static const char *bind(void *lib)
{
	const struct {
		const char *name;
		void *slot; /* the function pointer to set */
	} syms[] = {
		{"cuptiGetVersion", &cupti.get_version},
		{"cuptiGetResultString", &cupti.get_result_string},
		{"cuptiActivityRegisterCallbacks", &cupti.register_callbacks},
		{"cuptiActivityEnable", &cupti.enable},
		{"cuptiActivityFlushAll", &cupti.flush_all},
		{"cuptiActivityGetNextRecord", &cupti.next_record},
		{"cuptiActivityGetNumDroppedRecords", &cupti.dropped},
	};
	for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++) {
		void *f = dlsym(lib, syms[i].name);
		if (f == NULL)
			return syms[i].name;
		memcpy(syms[i].slot, &f, sizeof f);
	}
	return NULL;
}

EXPORT int InitializeInjection(void)
{
	static int done;
	if (__atomic_exchange_n(&done, 1, __ATOMIC_SEQ_CST))
		return 1;
	out = open_out();
	if (out == NULL)
		return 1;
	owner = getpid();
	line("rprof-cupti\t1\t%d\n", (int)getpid());
	const char *path = getenv("RPROF_CUPTI_LIB");
	if (path == NULL || *path == '\0')
		path = "libcupti.so";
	void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (lib == NULL) {
		line("unavailable\tno-library\t%s\n", dlerror());
		return 1;
	}
	const char *missing = bind(lib);
	if (missing != NULL) {
		line("unavailable\tno-symbol\t%s lacks %s\n", path, missing);
		return 1;
	}
	uint32_t version = 0;
	CUptiResult r = cupti.get_version(&version);
	if (r != CUPTI_SUCCESS) {
		failed("cuptiGetVersion", r);
		return 1;
	}
	line("cupti\t%u\t%s\n", version, path);
	if (version < MIN_VERSION) {
		line("unavailable\ttoo-old\tCUPTI API version %u: rprof reads kernel records of version %d (CUDA 9.0) and later\n",
		     version, MIN_VERSION);
		return 1;
	}
	if (version > CHECKED_VERSION)
		line("unverified-layout\t%u\t%d\n", version, CHECKED_VERSION);
	if ((r = cupti.register_callbacks(buffer_requested, buffer_completed)) != CUPTI_SUCCESS) {
		failed("cuptiActivityRegisterCallbacks", r);
		return 1;
	}
	if ((r = cupti.enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)) != CUPTI_SUCCESS) {
		failed("cuptiActivityEnable", r);
		return 1;
	}
	atexit(finish);
	line("recording\tkernels\n");
	profiler_start(lib);
	return 1;
}
