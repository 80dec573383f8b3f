/*
 * A fake libnvperf_host.so for tests: the NVPW host functions rprof's
 * injection library calls (parameters in its profiler.h), evaluating the
 * ranges the environment describes.
 *
 *   FAKE_PROFILER_RANGES  ranges, ';'-separated: [N*]NAME:METRIC=VALUE,...
 *                         (N* repeats a range N times); a metric not
 *                         listed evaluates to NaN
 *
 * A metric is evaluated only if the configuration and the counter data
 * prefix both asked for its raw counter (here the metric itself), as
 * NVPW refuses one it was not configured for. FAKE_PROFILER_FAIL (see
 * fakecupti.c) fails a call here too.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "profiler.h"

#define INVALID_METRIC_ID 9

static int fail(const char *call)
{
	void *cupti = dlopen(getenv("RPROF_CUPTI_LIB"), RTLD_NOW | RTLD_NOLOAD);
	int (*f)(const char *) = cupti != NULL ? (int (*)(const char *))dlsym(cupti, "fakeFail") : NULL;
	return f != NULL ? f(call) : 0;
}

static char *ranges[8192];
static size_t n_ranges;

/* fakeRanges parses FAKE_PROFILER_RANGES once and counts its ranges. */
size_t fakeRanges(void)
{
	static int parsed;
	const char *v = getenv("FAKE_PROFILER_RANGES");
	if (parsed++ || v == NULL)
		return n_ranges;
	char *s = strdup(v), *save = NULL;
	for (char *r = strtok_r(s, ";", &save); r != NULL; r = strtok_r(NULL, ";", &save)) {
		char *star = strchr(r, '*');
		int n = star != NULL && star < strchr(r, ':') ? atoi(r) : 1;
		for (int i = 0; i < n && n_ranges < sizeof ranges / sizeof ranges[0]; i++)
			ranges[n_ranges++] = star != NULL && n > 1 ? star + 1 : r;
	}
	return n_ranges;
}

static char configured[2][64][128];

static int add(int which, const rp_add_metrics *p)
{
	for (size_t i = 0; i < p->numMetricRequests && i < 64; i++)
		strncpy(configured[which][i], p->pRawMetricRequests[i].pMetricName, 127);
	return 0;
}

static int is_configured(const char *m)
{
	int both = 0;
	for (int w = 0; w < 2; w++)
		for (int i = 0; i < 64; i++)
			if (strcmp(configured[w][i], m) == 0) {
				both++;
				break;
			}
	return both == 2;
}

#define PLAIN(name) \
	int name(void *p) \
	{ \
		(void)p; \
		return fail(#name); \
	}
PLAIN(NVPW_InitializeHost)
PLAIN(NVPW_MetricsContext_Destroy)
PLAIN(NVPW_MetricsContext_GetMetricProperties_End)
PLAIN(NVPW_RawMetricsConfig_Destroy)
PLAIN(NVPW_RawMetricsConfig_BeginPassGroup)
PLAIN(NVPW_RawMetricsConfig_EndPassGroup)
PLAIN(NVPW_RawMetricsConfig_GenerateConfigImage)
PLAIN(NVPW_CounterDataBuilder_Destroy)

static int object;

int NVPW_CUDA_MetricsContext_Create(rp_metrics_create *p)
{
	p->pMetricsContext = &object;
	return p->pChipName == NULL ? 8 : fail("NVPW_CUDA_MetricsContext_Create");
}

int NVPW_MetricsContext_GetMetricProperties_Begin(rp_metric_properties *p)
{
	static const char *deps[2];
	deps[0] = p->pMetricName;
	p->ppRawMetricDependencies = deps;
	return fail("NVPW_MetricsContext_GetMetricProperties_Begin");
}

int NVPW_CUDA_RawMetricsConfig_Create(rp_config_create *p)
{
	p->pRawMetricsConfig = &object;
	return p->activityKind != RP_ACTIVITY_KIND_PROFILER ? 8 : fail("NVPW_CUDA_RawMetricsConfig_Create");
}

int NVPW_RawMetricsConfig_AddMetrics(rp_add_metrics *p) { return add(0, p) ? 8 : fail("NVPW_RawMetricsConfig_AddMetrics"); }

int NVPW_CounterDataBuilder_AddMetrics(rp_add_metrics *p) { return add(1, p) ? 8 : fail("NVPW_CounterDataBuilder_AddMetrics"); }

/* image is an image of 24 bytes: its size asked first, then its bytes. */
static int image(rp_image *p, const char *call)
{
	if (p->pBuffer != NULL && p->bytesAllocated < 24)
		return 22; /* NVPA_STATUS_INSUFFICIENT_SPACE */
	if (p->pBuffer != NULL)
		memset(p->pBuffer, 0xab, 24);
	p->bytesCopied = 24;
	return fail(call);
}

int NVPW_RawMetricsConfig_GetConfigImage(rp_image *p) { return image(p, "NVPW_RawMetricsConfig_GetConfigImage"); }

int NVPW_CounterDataBuilder_GetCounterDataPrefix(rp_image *p) { return image(p, "NVPW_CounterDataBuilder_GetCounterDataPrefix"); }

int NVPW_CUDA_CounterDataBuilder_Create(rp_builder_create *p)
{
	p->pCounterDataBuilder = &object;
	return fail("NVPW_CUDA_CounterDataBuilder_Create");
}

/* The image's ranges: no more than its maximum (fakecupti.c). */
int NVPW_CounterData_GetNumRanges(rp_num_ranges *p)
{
	uint32_t max;
	memcpy(&max, p->pCounterDataImage, sizeof max);
	p->numRanges = fakeRanges() < max ? fakeRanges() : max;
	return fail("NVPW_CounterData_GetNumRanges");
}

static char names[64];

int NVPW_Profiler_CounterData_GetRangeDescriptions(rp_range_names *p)
{
	if (p->rangeIndex >= fakeRanges())
		return 8;
	p->numDescriptions = 1;
	if (p->ppDescriptions != NULL) {
		size_t n = strcspn(ranges[p->rangeIndex], ":");
		strncpy(names, ranges[p->rangeIndex], n < 63 ? n : 63);
		names[n < 63 ? n : 63] = '\0';
		p->ppDescriptions[0] = names;
	}
	return fail("NVPW_Profiler_CounterData_GetRangeDescriptions");
}

static size_t current;

int NVPW_MetricsContext_SetCounterData(rp_set_counter_data *p)
{
	current = p->rangeIndex;
	return p->isolated != 1 ? 8 : fail("NVPW_MetricsContext_SetCounterData");
}

/* value is METRIC's in the current range's list, NaN where absent. */
static double value(const char *metric)
{
	const char *r = strchr(ranges[current], ':');
	size_t n = strlen(metric);
	for (const char *at = r; at != NULL; at = strchr(at + 1, ','))
		if (strncmp(at + 1, metric, n) == 0 && at[1 + n] == '=')
			return strtod(at + 2 + n, NULL);
	return NAN;
}

int NVPW_MetricsContext_EvaluateToGpuValues(rp_evaluate *p)
{
	for (size_t i = 0; i < p->numMetrics; i++) {
		if (!is_configured(p->ppMetricNames[i]))
			return INVALID_METRIC_ID;
		p->pMetricValues[i] = value(p->ppMetricNames[i]);
	}
	return fail("NVPW_MetricsContext_EvaluateToGpuValues");
}
