/*
 * A fake libcupti.so for tests: the few functions rprof's injection library
 * calls, replaying kernel records that the environment describes, in the
 * layout of CUPTI 11.8's CUpti_ActivityKernel8 (declared here field by
 * field, in cupti_activity.h's order, independently of inject.c's offsets).
 *
 *   FAKE_CUPTI_VERSION  the API version cuptiGetVersion gives (default 18)
 *   FAKE_CUPTI_ENABLE   the CUptiResult cuptiActivityEnable returns (default 0)
 *   FAKE_CUPTI_KERNELS  launches, ';'-separated: DEVICE,START,END,NAME
 *   FAKE_CUPTI_DROPPED  records reported dropped (default 0)
 *
 * and the range profiler's side in CUPTI (its parameters in the injection
 * library's profiler.h, which is checked against CUPTI's headers): a
 * context is created when the program calls fakeContext, and the ranges
 * are those fakenvperf.c hands back.
 *
 *   FAKE_PROFILER_FAIL  CALL=CODE: that profiler call (of either library)
 *                       fails with CODE
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "profiler.h"

typedef struct __attribute__((packed, aligned(8))) {
	uint32_t kind;
	uint8_t cacheConfig, sharedMemoryConfig;
	uint16_t registersPerThread;
	uint32_t partitionedGlobalCacheRequested, partitionedGlobalCacheExecuted;
	uint64_t start, end, completed;
	uint32_t deviceId, contextId, streamId;
	int32_t gridX, gridY, gridZ, blockX, blockY, blockZ;
	int32_t staticSharedMemory, dynamicSharedMemory;
	uint32_t localMemoryPerThread, localMemoryTotal, correlationId;
	int64_t gridId;
	const char *name;
	void *reserved0;
	uint64_t queued, submitted;
	uint8_t launchType, isSharedMemoryCarveoutRequested, sharedMemoryCarveoutRequested, padding;
	uint32_t sharedMemoryExecuted;
	uint64_t graphNodeId;
	uint32_t shmemLimitConfig, graphId;
	void *pAccessPolicyWindow;
	uint32_t channelID, channelType;
	uint32_t clusterX, clusterY, clusterZ, clusterSchedulingPolicy;
	uint64_t localMemoryTotal_v2;
} kernel8;
_Static_assert(sizeof(kernel8) == 200, "CUpti_ActivityKernel8 is 200 bytes in CUPTI 11.8");

/* A record of another kind (a memcpy's size in 11.8), which the
 * injection library must step over. */
typedef struct __attribute__((packed, aligned(8))) {
	uint32_t kind;
	uint8_t rest[60];
} other;

typedef void (*requested_fn)(uint8_t **, size_t *, size_t *);
typedef void (*completed_fn)(void *, uint32_t, uint8_t *, size_t, size_t);
static requested_fn requested;
static completed_fn completed;
static int enabled;
static char names[64][256];

static int env_int(const char *name, int def)
{
	const char *v = getenv(name);
	return v != NULL && *v != '\0' ? atoi(v) : def;
}

int cuptiGetVersion(uint32_t *v)
{
	*v = (uint32_t)env_int("FAKE_CUPTI_VERSION", 18);
	return 0;
}

int cuptiGetResultString(int r, const char **s)
{
	*s = r == 35 ? "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES" : r == 0 ? "CUPTI_SUCCESS" : "CUPTI_ERROR_UNKNOWN";
	return 0;
}

int cuptiActivityRegisterCallbacks(requested_fn req, completed_fn comp)
{
	requested = req;
	completed = comp;
	return 0;
}

int cuptiActivityEnable(int kind)
{
	int r = env_int("FAKE_CUPTI_ENABLE", 0);
	enabled = r == 0 && kind == 10;
	return r;
}

int cuptiActivityGetNextRecord(uint8_t *buf, size_t valid, void **rec)
{
	size_t at = 0;
	if (*rec != NULL) {
		at = (size_t)((uint8_t *)*rec - buf);
		at += *(uint32_t *)*rec == 10 ? sizeof(kernel8) : sizeof(other);
	}
	if (at >= valid)
		return 12; /* CUPTI_ERROR_MAX_LIMIT_REACHED */
	*rec = buf + at;
	return 0;
}

int cuptiActivityGetNumDroppedRecords(void *ctx, uint32_t stream, size_t *n)
{
	(void)ctx;
	(void)stream;
	*n = (size_t)env_int("FAKE_CUPTI_DROPPED", 0);
	return 0;
}

/* cuptiActivityFlushAll hands the injection library one buffer: an
 * unrelated record, then one kernel record per launch. */
int cuptiActivityFlushAll(uint32_t flag)
{
	(void)flag;
	const char *spec = getenv("FAKE_CUPTI_KERNELS");
	if (!enabled || spec == NULL)
		return 0;
	uint8_t *buf;
	size_t size, max;
	requested(&buf, &size, &max);
	size_t at = 0;
	other o = {.kind = 1};
	memcpy(buf, &o, sizeof o);
	at += sizeof o;
	char *s = strdup(spec), *save = NULL;
	int i = 0;
	for (char *tok = strtok_r(s, ";", &save); tok != NULL && i < 64 && at + sizeof(kernel8) <= size;
	     tok = strtok_r(NULL, ";", &save), i++) {
		kernel8 k = {.kind = 10, .streamId = 7, .contextId = 1, .gridX = 132, .gridY = 1, .gridZ = 1,
			     .blockX = 256, .blockY = 1, .blockZ = 1, .correlationId = (uint32_t)i + 1};
		unsigned long long start, end;
		if (sscanf(tok, "%u,%llu,%llu,%255[^;]", &k.deviceId, &start, &end, names[i]) != 4)
			break;
		k.start = start;
		k.end = end;
		k.name = names[i];
		memcpy(buf + at, &k, sizeof k);
		at += sizeof k;
	}
	free(s);
	completed(NULL, 0, buf, size, at);
	return 0;
}

/* fail is the code FAKE_PROFILER_FAIL gives call (0: none). */
int fakeFail(const char *call)
{
	const char *v = getenv("FAKE_PROFILER_FAIL");
	size_t n = strlen(call);
	if (v == NULL || strncmp(v, call, n) != 0 || v[n] != '=')
		return 0;
	return atoi(v + n + 1);
}

typedef void (*callback_fn)(void *, int, uint32_t, const void *);
static callback_fn callback;
static int callbacks[3];

int cuptiSubscribe(void **sub, callback_fn cb, void *userdata)
{
	(void)userdata;
	callback = cb;
	*sub = &callback;
	return fakeFail("cuptiSubscribe");
}

int cuptiEnableCallback(uint32_t enable, void *sub, int domain, uint32_t cbid)
{
	if (sub != &callback || domain != RP_CB_DOMAIN_RESOURCE || cbid > 2)
		return 1;
	callbacks[cbid] = (int)enable;
	return 0;
}

/* The fake context of device d is the address of ctxs[d]. */
static char ctxs[8];

int cuptiGetDeviceId(void *ctx, uint32_t *dev)
{
	*dev = (uint32_t)((char *)ctx - ctxs);
	return 0;
}

/* fakeContext calls the resource callback as the driver would: cbid 1 a
 * context of device dev created, 2 about to be destroyed. */
void fakeContext(uint32_t cbid, int dev)
{
	void *data[3] = {&ctxs[dev], NULL, NULL}; /* CUpti_ResourceData */
	if (callback != NULL && cbid <= 2 && callbacks[cbid])
		callback(NULL, RP_CB_DOMAIN_RESOURCE, cbid, data);
}

static uint32_t max_ranges;

#define PLAIN(name) \
	int name(void *p) \
	{ \
		(void)p; \
		return fakeFail(#name); \
	}
PLAIN(cuptiProfilerInitialize)
PLAIN(cuptiProfilerSetConfig)
PLAIN(cuptiProfilerEnableProfiling)
PLAIN(cuptiProfilerDisableProfiling)
PLAIN(cuptiProfilerUnsetConfig)

int cuptiDeviceGetChipName(rp_chip_name *p)
{
	p->pChipName = p->deviceIndex == 0 ? "GH100" : "GA100";
	return fakeFail("cuptiDeviceGetChipName");
}

int cuptiProfilerCounterDataImageCalculateSize(rp_image_size *p)
{
	max_ranges = p->pOptions->maxNumRanges;
	p->counterDataImageSize = 64;
	return fakeFail("cuptiProfilerCounterDataImageCalculateSize");
}

/* The image holds its maximum of ranges, which fakenvperf.c reads. */
int cuptiProfilerCounterDataImageInitialize(rp_image_init *p)
{
	memcpy(p->pCounterDataImage, &p->pOptions->maxNumRanges, sizeof(uint32_t));
	return fakeFail("cuptiProfilerCounterDataImageInitialize");
}

int cuptiProfilerCounterDataImageCalculateScratchBufferSize(rp_scratch *p)
{
	p->counterDataScratchBufferSize = 16;
	return fakeFail("cuptiProfilerCounterDataImageCalculateScratchBufferSize");
}

int cuptiProfilerCounterDataImageInitializeScratchBuffer(rp_scratch *p)
{
	return p->pCounterDataScratchBuffer == NULL ? 1 : fakeFail("cuptiProfilerCounterDataImageInitializeScratchBuffer");
}

/* sessions counts the sessions begun and not ended: one left open at
 * exit makes the program exit 9, so that the test sees it. */
static int sessions;

__attribute__((destructor)) static void no_session_left(void)
{
	if (sessions != 0)
		_exit(9);
}

int cuptiProfilerBeginSession(rp_begin_session *p)
{
	if (p->range != RP_AUTO_RANGE || p->replayMode != RP_KERNEL_REPLAY || p->pCounterDataImage == NULL)
		return 1;
	int r = fakeFail("cuptiProfilerBeginSession");
	sessions += r == 0;
	return r;
}

int cuptiProfilerEndSession(void *p)
{
	(void)p;
	sessions--;
	return fakeFail("cuptiProfilerEndSession");
}

/* The ranges past the image's maximum are dropped. */
int cuptiProfilerFlushCounterData(rp_flush *p)
{
	void *nvpw = dlopen(getenv("RPROF_NVPERF_LIB"), RTLD_NOW | RTLD_NOLOAD);
	size_t (*count)(void) = nvpw != NULL ? (size_t (*)(void))dlsym(nvpw, "fakeRanges") : NULL;
	size_t n = count != NULL ? count() : 0;
	p->numRangesDropped = n > max_ranges ? n - max_ranges : 0;
	return fakeFail("cuptiProfilerFlushCounterData");
}
