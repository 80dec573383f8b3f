package cupti

import (
	"fmt"
	"strings"
	"testing"
)

// profilerStructs pairs each of profiler.h's structs with the CUPTI 11.8
// or NVPW structs it stands for, field by field (profiler.h's name, then
// the headers'), the last field pair being the one the headers'
// STRUCT_SIZE ends at.
var profilerStructs = []struct {
	mine, theirs, size string
	fields             [][2]string
}{
	{"rp_plain", "CUpti_Profiler_Initialize_Params", "", nil},
	{"rp_plain", "CUpti_Profiler_DeInitialize_Params", "", nil},
	{"rp_plain", "NVPW_InitializeHost_Params", "", nil},
	{"rp_chip_name", "CUpti_Device_GetChipName_Params", "", same("deviceIndex", "pChipName")},
	{"rp_image_options", "CUpti_Profiler_CounterDataImageOptions", "CUpti_Profiler_CounterDataImageOptions_STRUCT_SIZE",
		same("pCounterDataPrefix", "counterDataPrefixSize", "maxNumRanges", "maxNumRangeTreeNodes", "maxRangeNameLength")},
	{"rp_image_size", "CUpti_Profiler_CounterDataImage_CalculateSize_Params", "",
		same("sizeofCounterDataImageOptions", "pOptions", "counterDataImageSize")},
	{"rp_image_init", "CUpti_Profiler_CounterDataImage_Initialize_Params", "",
		same("sizeofCounterDataImageOptions", "pOptions", "counterDataImageSize", "pCounterDataImage")},
	{"rp_scratch", "CUpti_Profiler_CounterDataImage_CalculateScratchBufferSize_Params", "",
		same("counterDataImageSize", "pCounterDataImage", "counterDataScratchBufferSize")},
	{"rp_scratch", "CUpti_Profiler_CounterDataImage_InitializeScratchBuffer_Params", "",
		same("counterDataImageSize", "pCounterDataImage", "counterDataScratchBufferSize", "pCounterDataScratchBuffer")},
	{"rp_begin_session", "CUpti_Profiler_BeginSession_Params", "", same("ctx", "counterDataImageSize", "pCounterDataImage",
		"counterDataScratchBufferSize", "pCounterDataScratchBuffer", "bDumpCounterDataInFile", "pCounterDataFilePath",
		"range", "replayMode", "maxRangesPerPass", "maxLaunchesPerPass")},
	{"rp_set_config", "CUpti_Profiler_SetConfig_Params", "", same("ctx", "pConfig", "configSize", "minNestingLevel",
		"numNestingLevels", "passIndex", "targetNestingLevel")},
	{"rp_ctx", "CUpti_Profiler_EnableProfiling_Params", "", same("ctx")},
	{"rp_ctx", "CUpti_Profiler_DisableProfiling_Params", "", same("ctx")},
	{"rp_ctx", "CUpti_Profiler_UnsetConfig_Params", "", same("ctx")},
	{"rp_ctx", "CUpti_Profiler_EndSession_Params", "", same("ctx")},
	{"rp_flush", "CUpti_Profiler_FlushCounterData_Params", "", same("ctx", "numRangesDropped", "numTraceBytesDropped")},
	{"rp_metrics_create", "NVPW_CUDA_MetricsContext_Create_Params", "", same("pChipName", "pMetricsContext")},
	{"rp_object", "NVPW_MetricsContext_Destroy_Params", "", [][2]string{{"object", "pMetricsContext"}}},
	{"rp_object", "NVPW_MetricsContext_GetMetricProperties_End_Params", "", [][2]string{{"object", "pMetricsContext"}}},
	{"rp_metric_properties", "NVPW_MetricsContext_GetMetricProperties_Begin_Params", "", same("pMetricsContext", "pMetricName",
		"pDescription", "pDimUnits", "ppRawMetricDependencies", "gpuBurstRate", "gpuSustainedRate", "ppOptionalRawMetricDependencies")},
	{"rp_config_create", "NVPW_CUDA_RawMetricsConfig_Create_Params", "", same("activityKind", "pChipName", "pRawMetricsConfig")},
	{"rp_object", "NVPW_RawMetricsConfig_Destroy_Params", "", [][2]string{{"object", "pRawMetricsConfig"}}},
	{"rp_object", "NVPW_RawMetricsConfig_EndPassGroup_Params", "", [][2]string{{"object", "pRawMetricsConfig"}}},
	{"rp_pass_group", "NVPW_RawMetricsConfig_BeginPassGroup_Params", "", same("pRawMetricsConfig", "maxPassCount")},
	{"rp_raw_request", "NVPA_RawMetricRequest", "NVPA_RAW_METRIC_REQUEST_STRUCT_SIZE", same("pMetricName", "isolated", "keepInstances")},
	{"rp_add_metrics", "NVPW_RawMetricsConfig_AddMetrics_Params", "",
		[][2]string{{"object", "pRawMetricsConfig"}, {"pRawMetricRequests", "pRawMetricRequests"}, {"numMetricRequests", "numMetricRequests"}}},
	{"rp_add_metrics", "NVPW_CounterDataBuilder_AddMetrics_Params", "",
		[][2]string{{"object", "pCounterDataBuilder"}, {"pRawMetricRequests", "pRawMetricRequests"}, {"numMetricRequests", "numMetricRequests"}}},
	{"rp_generate", "NVPW_RawMetricsConfig_GenerateConfigImage_Params", "", same("pRawMetricsConfig", "mergeAllPassGroups")},
	{"rp_image", "NVPW_RawMetricsConfig_GetConfigImage_Params", "",
		[][2]string{{"object", "pRawMetricsConfig"}, {"bytesAllocated", "bytesAllocated"}, {"pBuffer", "pBuffer"}, {"bytesCopied", "bytesCopied"}}},
	{"rp_image", "NVPW_CounterDataBuilder_GetCounterDataPrefix_Params", "",
		[][2]string{{"object", "pCounterDataBuilder"}, {"bytesAllocated", "bytesAllocated"}, {"pBuffer", "pBuffer"}, {"bytesCopied", "bytesCopied"}}},
	{"rp_builder_create", "NVPW_CUDA_CounterDataBuilder_Create_Params", "", same("pChipName", "pCounterAvailabilityImage", "pCounterDataBuilder")},
	{"rp_object", "NVPW_CounterDataBuilder_Destroy_Params", "", [][2]string{{"object", "pCounterDataBuilder"}}},
	{"rp_num_ranges", "NVPW_CounterData_GetNumRanges_Params", "", same("pCounterDataImage", "numRanges")},
	{"rp_range_names", "NVPW_Profiler_CounterData_GetRangeDescriptions_Params", "",
		same("pCounterDataImage", "rangeIndex", "numDescriptions", "ppDescriptions")},
	{"rp_set_counter_data", "NVPW_MetricsContext_SetCounterData_Params", "", same("pMetricsContext", "pCounterDataImage", "rangeIndex", "isolated")},
	{"rp_evaluate", "NVPW_MetricsContext_EvaluateToGpuValues_Params", "", same("pMetricsContext", "numMetrics", "ppMetricNames", "pMetricValues")},
}

// same pairs fields named alike in both.
func same(names ...string) [][2]string {
	out := make([][2]string, len(names))
	for i, n := range names {
		out[i] = [2]string{n, n}
	}
	return out
}

// profilerLayoutCheck is C asserting that each profiler.h struct has its
// headers' struct's fields at the same offsets and sizes, ending where
// the headers' STRUCT_SIZE ends, and that profiler.h's constants are the
// headers' enumerators.
func profilerLayoutCheck() string {
	var b strings.Builder
	b.WriteString(`#include <stddef.h>
#include <cupti_profiler_target.h>
#include <cupti_target.h>
#include <cupti_callbacks.h>
#include <nvperf_host.h>
#include <nvperf_cuda_host.h>
#include <nvperf_target.h>
#include "profiler.h"
#define SAME(M, T, a, b) \
	_Static_assert(offsetof(M, a) == offsetof(T, b), #T "." #b); \
	_Static_assert(sizeof(((M *)0)->a) == sizeof(((T *)0)->b), #T "." #b " size");
_Static_assert(RP_AUTO_RANGE == CUPTI_AutoRange, "CUPTI_AutoRange");
_Static_assert(RP_KERNEL_REPLAY == CUPTI_KernelReplay, "CUPTI_KernelReplay");
_Static_assert(RP_ACTIVITY_KIND_PROFILER == NVPA_ACTIVITY_KIND_PROFILER, "NVPA_ACTIVITY_KIND_PROFILER");
_Static_assert(RP_CB_DOMAIN_RESOURCE == CUPTI_CB_DOMAIN_RESOURCE, "CUPTI_CB_DOMAIN_RESOURCE");
_Static_assert(RP_CBID_CONTEXT_CREATED == CUPTI_CBID_RESOURCE_CONTEXT_CREATED, "CUPTI_CBID_RESOURCE_CONTEXT_CREATED");
_Static_assert(RP_CBID_CONTEXT_DESTROY_STARTING == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING, "CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING");
_Static_assert(offsetof(CUpti_ResourceData, context) == 0, "CUpti_ResourceData.context");
`)
	for _, s := range profilerStructs {
		fields := append([][2]string{{"structSize", "structSize"}, {"pPriv", "pPriv"}}, s.fields...)
		for _, f := range fields {
			fmt.Fprintf(&b, "SAME(%s, %s, %s, %s)\n", s.mine, s.theirs, f[0], f[1])
		}
		size := s.size
		if size == "" {
			size = s.theirs + "_STRUCT_SIZE"
		}
		last := fields[len(fields)-1]
		fmt.Fprintf(&b, "_Static_assert(RP_SIZE(%s, %s) == %s, %q);\n", s.mine, last[0], size, size)
	}
	return b.String()
}

// TestProfilerLayoutIsCUPTIs compiles profiler.h's structs against
// CUPTI 11.8's and NVPW's headers: a field out of place, of another size,
// or a struct that ends elsewhere fails to compile.
func TestProfilerLayoutIsCUPTIs(t *testing.T) {
	compileAgainstHeaders(t, profilerLayoutCheck())
}
