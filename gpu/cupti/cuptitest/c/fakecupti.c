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
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
