/*
 * The parameter structs of CUPTI's range profiler (cupti_profiler_target.h,
 * cupti_target.h) and of the NVPW host library (nvperf_host.h,
 * nvperf_cuda_host.h) that profiler.c passes, declared from CUDA 11.8's
 * public headers so that the library builds with plain gcc. Each struct
 * has the fields of the headers' struct in their order and under their
 * names; where several of the headers' structs share a layout, one type
 * stands for them all (the first field after pPriv then has a neutral
 * name). TestProfilerLayoutIsCUPTIs checks every offset, size and
 * STRUCT_SIZE against those headers.
 */
#ifndef RPROF_CUPTI_PROFILER_H
#define RPROF_CUPTI_PROFILER_H

#include <stddef.h>
#include <stdint.h>

/* What each parameter struct's structSize must be: up to the end of its
 * last field (CUPTI_PROFILER_STRUCT_SIZE, NVPA_STRUCT_SIZE). */
#define RP_SIZE(T, last) (offsetof(T, last) + sizeof(((T *)0)->last))
#define RP_PARAMS(T, last) ((T){.structSize = RP_SIZE(T, last)})

/* CUpti_Profiler_{Initialize,DeInitialize}_Params, NVPW_InitializeHost_Params */
typedef struct {
	size_t structSize;
	void *pPriv;
} rp_plain;

/* CUpti_Device_GetChipName_Params */
typedef struct {
	size_t structSize;
	void *pPriv;
	size_t deviceIndex;
	const char *pChipName;
} rp_chip_name;

/* CUpti_Profiler_CounterDataImageOptions */
typedef struct {
	size_t structSize;
	void *pPriv;
	const uint8_t *pCounterDataPrefix;
	size_t counterDataPrefixSize;
	uint32_t maxNumRanges;
	uint32_t maxNumRangeTreeNodes;
	uint32_t maxRangeNameLength;
} rp_image_options;

/* CUpti_Profiler_CounterDataImage_CalculateSize_Params */
typedef struct {
	size_t structSize;
	void *pPriv;
	size_t sizeofCounterDataImageOptions;
	const rp_image_options *pOptions;
	size_t counterDataImageSize;
} rp_image_size;

/* CUpti_Profiler_CounterDataImage_Initialize_Params */
typedef struct {
	size_t structSize;
	void *pPriv;
	size_t sizeofCounterDataImageOptions;
	const rp_image_options *pOptions;
	size_t counterDataImageSize;
	uint8_t *pCounterDataImage;
} rp_image_init;

/* CUpti_Profiler_CounterDataImage_CalculateScratchBufferSize_Params,
 * CUpti_Profiler_CounterDataImage_InitializeScratchBuffer_Params (the
 * first's last field is counterDataScratchBufferSize) */
typedef struct {
	size_t structSize;
	void *pPriv;
	size_t counterDataImageSize;
	uint8_t *pCounterDataImage;
	size_t counterDataScratchBufferSize;
	uint8_t *pCounterDataScratchBuffer;
} rp_scratch;

/* CUpti_ProfilerRange, CUpti_ProfilerReplayMode */
#define RP_AUTO_RANGE 1
#define RP_KERNEL_REPLAY 2

/* CUpti_Profiler_BeginSession_Params */
typedef struct {
	size_t structSize;
	void *pPriv;
	void *ctx;
	size_t counterDataImageSize;
	uint8_t *pCounterDataImage;
	size_t counterDataScratchBufferSize;
	uint8_t *pCounterDataScratchBuffer;
	uint8_t bDumpCounterDataInFile;
	const char *pCounterDataFilePath;
	int range;
	int replayMode;
	size_t maxRangesPerPass;
	size_t maxLaunchesPerPass;
} rp_begin_session;

/* CUpti_Profiler_SetConfig_Params */
typedef struct {
	size_t structSize;
	void *pPriv;
	void *ctx;
	const uint8_t *pConfig;
	size_t configSize;
	uint16_t minNestingLevel;
	uint16_t numNestingLevels;
	size_t passIndex;
	uint16_t targetNestingLevel;
} rp_set_config;

/* CUpti_Profiler_{EnableProfiling,DisableProfiling,UnsetConfig,EndSession}_Params */
typedef struct {
	size_t structSize;
	void *pPriv;
	void *ctx;
} rp_ctx;

/* CUpti_Profiler_FlushCounterData_Params */
typedef struct {
	size_t structSize;
	void *pPriv;
	void *ctx;
	size_t numRangesDropped;
	size_t numTraceBytesDropped;
} rp_flush;

/* NVPA_ActivityKind */
#define RP_ACTIVITY_KIND_PROFILER 1

/* NVPW_CUDA_MetricsContext_Create_Params */
typedef struct {
	size_t structSize;
	void *pPriv;
	const char *pChipName;
	void *pMetricsContext;
} rp_metrics_create;

/* NVPW_MetricsContext_Destroy_Params, NVPW_MetricsContext_GetMetricProperties_End_Params,
 * NVPW_RawMetricsConfig_{Destroy,EndPassGroup}_Params, NVPW_CounterDataBuilder_Destroy_Params */
typedef struct {
	size_t structSize;
	void *pPriv;
	void *object;
} rp_object;

/* NVPW_MetricsContext_GetMetricProperties_Begin_Params */
typedef struct {
	size_t structSize;
	void *pPriv;
	void *pMetricsContext;
	const char *pMetricName;
	const char *pDescription;
	const char *pDimUnits;
	const char **ppRawMetricDependencies;
	double gpuBurstRate;
	double gpuSustainedRate;
	const char **ppOptionalRawMetricDependencies;
} rp_metric_properties;

/* NVPW_CUDA_RawMetricsConfig_Create_Params */
typedef struct {
	size_t structSize;
	void *pPriv;
	int activityKind;
	const char *pChipName;
	void *pRawMetricsConfig;
} rp_config_create;

/* NVPW_RawMetricsConfig_BeginPassGroup_Params */
typedef struct {
	size_t structSize;
	void *pPriv;
	void *pRawMetricsConfig;
	size_t maxPassCount;
} rp_pass_group;

/* NVPA_RawMetricRequest */
typedef struct {
	size_t structSize;
	void *pPriv;
	const char *pMetricName;
	uint8_t isolated;
	uint8_t keepInstances;
} rp_raw_request;

/* NVPW_RawMetricsConfig_AddMetrics_Params, NVPW_CounterDataBuilder_AddMetrics_Params */
typedef struct {
	size_t structSize;
	void *pPriv;
	void *object;
	const rp_raw_request *pRawMetricRequests;
	size_t numMetricRequests;
} rp_add_metrics;

/* NVPW_RawMetricsConfig_GenerateConfigImage_Params */
typedef struct {
	size_t structSize;
	void *pPriv;
	void *pRawMetricsConfig;
	uint8_t mergeAllPassGroups;
} rp_generate;

/* NVPW_RawMetricsConfig_GetConfigImage_Params, NVPW_CounterDataBuilder_GetCounterDataPrefix_Params */
typedef struct {
	size_t structSize;
	void *pPriv;
	void *object;
	size_t bytesAllocated;
	uint8_t *pBuffer;
	size_t bytesCopied;
} rp_image;

/* NVPW_CUDA_CounterDataBuilder_Create_Params */
typedef struct {
	size_t structSize;
	void *pPriv;
	const char *pChipName;
	const uint8_t *pCounterAvailabilityImage;
	void *pCounterDataBuilder;
} rp_builder_create;

/* NVPW_CounterData_GetNumRanges_Params */
typedef struct {
	size_t structSize;
	void *pPriv;
	const uint8_t *pCounterDataImage;
	size_t numRanges;
} rp_num_ranges;

/* NVPW_Profiler_CounterData_GetRangeDescriptions_Params */
typedef struct {
	size_t structSize;
	void *pPriv;
	const uint8_t *pCounterDataImage;
	size_t rangeIndex;
	size_t numDescriptions;
	const char **ppDescriptions;
} rp_range_names;

/* NVPW_MetricsContext_SetCounterData_Params */
typedef struct {
	size_t structSize;
	void *pPriv;
	void *pMetricsContext;
	const uint8_t *pCounterDataImage;
	size_t rangeIndex;
	uint8_t isolated;
} rp_set_counter_data;

/* NVPW_MetricsContext_EvaluateToGpuValues_Params */
typedef struct {
	size_t structSize;
	void *pPriv;
	void *pMetricsContext;
	size_t numMetrics;
	const char *const *ppMetricNames;
	double *pMetricValues;
} rp_evaluate;

/* cupti_callbacks.h: the resource domain and its context callbacks. */
#define RP_CB_DOMAIN_RESOURCE 3
#define RP_CBID_CONTEXT_CREATED 1
#define RP_CBID_CONTEXT_DESTROY_STARTING 2

/* What inject.c shares with profiler.c. */
void line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
const char *result_string(int r);
/* profiler_start opens the NVPW host library and subscribes to context
 * creation, from InitializeInjection; profiler_finish ends every session
 * still open and writes its ranges, at exit. */
void profiler_start(void *cupti);
void profiler_finish(void);

#endif
