/*
 * CUPTI's range profiler in rprof's injection library: for every CUDA
 * context, a session of automatic ranges (one range a kernel launch) with
 * kernel replay, counting the metrics RPROF_CUPTI_METRICS names; at the
 * context's teardown or the process's exit each range's values are
 * evaluated by the NVPW host library (RPROF_NVPERF_LIB, else
 * libnvperf_host.so) and written as a "range" line (../records.go). What
 * fails is written as one "profiler-off" line and the profiler stays off
 * in this process; the activity API (inject.c) goes on regardless.
 *
 * This follows CUDA 11.x's profiler API (NVPW_CUDA_MetricsContext_Create
 * and its evaluation); the structs are in profiler.h.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profiler.h"

/* The ranges a session holds: launches past it are dropped by CUPTI and
 * reported (ranges-dropped), so their kernels keep times only. */
#define MAX_RANGES 4096
#define MAX_RANGE_NAME 512
#define MAX_CONTEXTS 64
#define MAX_METRICS 32
#define MAX_RAW 256

/* The calls made, in the order of calls[]. */
enum {
	C_INITIALIZE, C_CHIP_NAME, C_IMAGE_SIZE, C_IMAGE_INIT, C_SCRATCH_SIZE, C_SCRATCH_INIT, C_BEGIN_SESSION,
	C_SET_CONFIG, C_ENABLE, C_DISABLE, C_FLUSH, C_UNSET_CONFIG, C_END_SESSION,
	N_INITIALIZE_HOST, N_METRICS_CREATE, N_METRICS_DESTROY, N_PROPERTIES_BEGIN, N_PROPERTIES_END,
	N_CONFIG_CREATE, N_CONFIG_DESTROY, N_BEGIN_PASS_GROUP, N_CONFIG_ADD, N_END_PASS_GROUP, N_GENERATE,
	N_CONFIG_IMAGE, N_BUILDER_CREATE, N_BUILDER_DESTROY, N_BUILDER_ADD, N_PREFIX, N_NUM_RANGES, N_RANGE_NAMES,
	N_SET_COUNTER_DATA, N_EVALUATE, N_CALLS
};

#define FIRST_NVPW N_INITIALIZE_HOST

static const char *const calls[N_CALLS] = {
	"cuptiProfilerInitialize", "cuptiDeviceGetChipName", "cuptiProfilerCounterDataImageCalculateSize",
	"cuptiProfilerCounterDataImageInitialize", "cuptiProfilerCounterDataImageCalculateScratchBufferSize",
	"cuptiProfilerCounterDataImageInitializeScratchBuffer", "cuptiProfilerBeginSession", "cuptiProfilerSetConfig",
	"cuptiProfilerEnableProfiling", "cuptiProfilerDisableProfiling", "cuptiProfilerFlushCounterData",
	"cuptiProfilerUnsetConfig", "cuptiProfilerEndSession",
	"NVPW_InitializeHost", "NVPW_CUDA_MetricsContext_Create", "NVPW_MetricsContext_Destroy",
	"NVPW_MetricsContext_GetMetricProperties_Begin", "NVPW_MetricsContext_GetMetricProperties_End",
	"NVPW_CUDA_RawMetricsConfig_Create", "NVPW_RawMetricsConfig_Destroy", "NVPW_RawMetricsConfig_BeginPassGroup",
	"NVPW_RawMetricsConfig_AddMetrics", "NVPW_RawMetricsConfig_EndPassGroup",
	"NVPW_RawMetricsConfig_GenerateConfigImage", "NVPW_RawMetricsConfig_GetConfigImage",
	"NVPW_CUDA_CounterDataBuilder_Create", "NVPW_CounterDataBuilder_Destroy", "NVPW_CounterDataBuilder_AddMetrics",
	"NVPW_CounterDataBuilder_GetCounterDataPrefix", "NVPW_CounterData_GetNumRanges",
	"NVPW_Profiler_CounterData_GetRangeDescriptions", "NVPW_MetricsContext_SetCounterData",
	"NVPW_MetricsContext_EvaluateToGpuValues",
};

/* NVPA_Status's names (nvperf_common.h). */
static const char *const nvpa_status[] = {
	"NVPA_STATUS_SUCCESS", "NVPA_STATUS_ERROR", "NVPA_STATUS_INTERNAL_ERROR", "NVPA_STATUS_NOT_INITIALIZED",
	"NVPA_STATUS_NOT_LOADED", "NVPA_STATUS_FUNCTION_NOT_FOUND", "NVPA_STATUS_NOT_SUPPORTED",
	"NVPA_STATUS_NOT_IMPLEMENTED", "NVPA_STATUS_INVALID_ARGUMENT", "NVPA_STATUS_INVALID_METRIC_ID",
	"NVPA_STATUS_DRIVER_NOT_LOADED", "NVPA_STATUS_OUT_OF_MEMORY", "NVPA_STATUS_INVALID_THREAD_STATE",
	"NVPA_STATUS_FAILED_CONTEXT_ALLOC", "NVPA_STATUS_UNSUPPORTED_GPU", "NVPA_STATUS_INSUFFICIENT_DRIVER_VERSION",
	"NVPA_STATUS_OBJECT_NOT_REGISTERED", "NVPA_STATUS_INSUFFICIENT_PRIVILEGE", "NVPA_STATUS_INVALID_CONTEXT_STATE",
	"NVPA_STATUS_INVALID_OBJECT_STATE", "NVPA_STATUS_RESOURCE_UNAVAILABLE", "NVPA_STATUS_DRIVER_LOADED_TOO_LATE",
	"NVPA_STATUS_INSUFFICIENT_SPACE", "NVPA_STATUS_OBJECT_MISMATCH", "NVPA_STATUS_VIRTUALIZED_DEVICE_NOT_SUPPORTED",
	"NVPA_STATUS_PROFILING_NOT_ALLOWED",
};

typedef void (*callback_fn)(void *userdata, int domain, uint32_t cbid, const void *data);

static int (*fn[N_CALLS])(void *);
static int (*get_device_id)(void *ctx, uint32_t *dev);
static int (*subscribe)(void **subscriber, callback_fn cb, void *userdata);
static int (*enable_callback)(uint32_t enable, void *subscriber, int domain, uint32_t cbid);

/* A session: one context's counter data. */
struct session {
	void *ctx;
	uint32_t device;
	void *metrics; /* the NVPW metrics context that evaluates its ranges */
	uint8_t *config, *prefix, *image, *scratch;
	size_t image_size, scratch_size;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct session sessions[MAX_CONTEXTS];
static int off;         /* a call failed: no new session */
static int initialized; /* cuptiProfilerInitialize and NVPW_InitializeHost succeeded */
static const char *metrics[MAX_METRICS];
static size_t n_metrics;

/* stop writes why the profiler is off in this process; mu is held. */
static void stop(const char *call, int code, const char *name)
{
	if (!off)
		line("profiler-off\t%s\t%d\t%.*s\n", call, code, (int)strcspn(name, "\t\n"), name);
	off = 1;
}

/* ok makes call c with params p; on failure the profiler stops. */
static int ok(int c, void *p)
{
	int r = fn[c](p);
	if (r == 0)
		return 1;
	const char *name = c < FIRST_NVPW ? result_string(r)
		: r > 0 && r < (int)(sizeof nvpa_status / sizeof nvpa_status[0]) ? nvpa_status[r] : "NVPA_STATUS_UNKNOWN";
	stop(calls[c], r, name);
	return 0;
}

static void free_requests(rp_raw_request *req, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free((void *)req[i].pMetricName);
}

/* raw_requests are the raw counters the metrics depend on, each asked
 * for once; their names are copies (NVPW's are valid until _End). */
static size_t raw_requests(void *mctx, rp_raw_request *req)
{
	size_t n = 0;
	for (size_t i = 0; i < n_metrics; i++) {
		rp_metric_properties p = RP_PARAMS(rp_metric_properties, ppOptionalRawMetricDependencies);
		p.pMetricsContext = mctx;
		p.pMetricName = metrics[i];
		if (!ok(N_PROPERTIES_BEGIN, &p)) {
			free_requests(req, n);
			return 0;
		}
		for (const char **d = p.ppRawMetricDependencies; d != NULL && *d != NULL && n < MAX_RAW; d++) {
			size_t j = 0;
			while (j < n && strcmp(req[j].pMetricName, *d) != 0)
				j++;
			if (j == n)
				req[n++] = (rp_raw_request){.structSize = RP_SIZE(rp_raw_request, keepInstances),
							    .pMetricName = strdup(*d), .isolated = 1, .keepInstances = 1};
		}
		rp_object end = RP_PARAMS(rp_object, object);
		end.object = mctx;
		if (!ok(N_PROPERTIES_END, &end)) {
			free_requests(req, n);
			return 0;
		}
	}
	return n;
}

/* image_of copies out an NVPW image (the config or the counter data
 * prefix): its size first, then its bytes. */
static uint8_t *image_of(int c, void *object, size_t *size)
{
	rp_image p = RP_PARAMS(rp_image, bytesCopied);
	p.object = object;
	if (!ok(c, &p))
		return NULL;
	p.bytesAllocated = p.bytesCopied;
	p.pBuffer = malloc(p.bytesAllocated);
	if (p.pBuffer == NULL || !ok(c, &p)) {
		free(p.pBuffer);
		return NULL;
	}
	*size = p.bytesCopied;
	return p.pBuffer;
}

/* config_image makes the configuration that counts the raw counters. */
static uint8_t *config_image(const char *chip, const rp_raw_request *req, size_t n, size_t *size)
{
	rp_config_create cr = RP_PARAMS(rp_config_create, pRawMetricsConfig);
	cr.activityKind = RP_ACTIVITY_KIND_PROFILER;
	cr.pChipName = chip;
	if (!ok(N_CONFIG_CREATE, &cr))
		return NULL;
	void *cfg = cr.pRawMetricsConfig;
	rp_pass_group begin = RP_PARAMS(rp_pass_group, maxPassCount);
	begin.pRawMetricsConfig = cfg;
	rp_add_metrics add = RP_PARAMS(rp_add_metrics, numMetricRequests);
	add.object = cfg;
	add.pRawMetricRequests = req;
	add.numMetricRequests = n;
	rp_object end = RP_PARAMS(rp_object, object);
	end.object = cfg;
	rp_generate gen = RP_PARAMS(rp_generate, mergeAllPassGroups);
	gen.pRawMetricsConfig = cfg;
	uint8_t *img = NULL;
	if (ok(N_BEGIN_PASS_GROUP, &begin) && ok(N_CONFIG_ADD, &add) && ok(N_END_PASS_GROUP, &end) && ok(N_GENERATE, &gen))
		img = image_of(N_CONFIG_IMAGE, cfg, size);
	rp_object destroy = RP_PARAMS(rp_object, object);
	destroy.object = cfg;
	fn[N_CONFIG_DESTROY](&destroy);
	return img;
}

/* counter_data_prefix makes the prefix of the counter data image. */
static uint8_t *counter_data_prefix(const char *chip, const rp_raw_request *req, size_t n, size_t *size)
{
	rp_builder_create cr = RP_PARAMS(rp_builder_create, pCounterDataBuilder);
	cr.pChipName = chip;
	if (!ok(N_BUILDER_CREATE, &cr))
		return NULL;
	rp_add_metrics add = RP_PARAMS(rp_add_metrics, numMetricRequests);
	add.object = cr.pCounterDataBuilder;
	add.pRawMetricRequests = req;
	add.numMetricRequests = n;
	uint8_t *img = NULL;
	if (ok(N_BUILDER_ADD, &add))
		img = image_of(N_PREFIX, cr.pCounterDataBuilder, size);
	rp_object destroy = RP_PARAMS(rp_object, object);
	destroy.object = cr.pCounterDataBuilder;
	fn[N_BUILDER_DESTROY](&destroy);
	return img;
}

/* counter_data makes s's counter data image and scratch buffer. */
static int counter_data(struct session *s, size_t prefix_size)
{
	rp_image_options o = RP_PARAMS(rp_image_options, maxRangeNameLength);
	o.pCounterDataPrefix = s->prefix;
	o.counterDataPrefixSize = prefix_size;
	o.maxNumRanges = MAX_RANGES;
	o.maxNumRangeTreeNodes = MAX_RANGES;
	o.maxRangeNameLength = MAX_RANGE_NAME;
	rp_image_size sz = RP_PARAMS(rp_image_size, counterDataImageSize);
	sz.sizeofCounterDataImageOptions = RP_SIZE(rp_image_options, maxRangeNameLength);
	sz.pOptions = &o;
	if (!ok(C_IMAGE_SIZE, &sz) || (s->image = malloc(sz.counterDataImageSize)) == NULL)
		return 0;
	s->image_size = sz.counterDataImageSize;
	rp_image_init init = RP_PARAMS(rp_image_init, pCounterDataImage);
	init.sizeofCounterDataImageOptions = sz.sizeofCounterDataImageOptions;
	init.pOptions = &o;
	init.counterDataImageSize = s->image_size;
	init.pCounterDataImage = s->image;
	rp_scratch ss = RP_PARAMS(rp_scratch, counterDataScratchBufferSize);
	ss.counterDataImageSize = s->image_size;
	ss.pCounterDataImage = s->image;
	if (!ok(C_IMAGE_INIT, &init) || !ok(C_SCRATCH_SIZE, &ss))
		return 0;
	rp_scratch si = RP_PARAMS(rp_scratch, pCounterDataScratchBuffer);
	si.counterDataImageSize = s->image_size;
	si.pCounterDataImage = s->image;
	si.counterDataScratchBufferSize = ss.counterDataScratchBufferSize;
	s->scratch_size = ss.counterDataScratchBufferSize;
	si.pCounterDataScratchBuffer = s->scratch = malloc(s->scratch_size);
	return s->scratch != NULL && ok(C_SCRATCH_INIT, &si);
}

/* begin starts s's session on its context (auto ranges, kernel replay),
 * counting what config configures. */
static int begin(struct session *s, size_t config_size)
{
	rp_begin_session b = RP_PARAMS(rp_begin_session, maxLaunchesPerPass);
	b.ctx = s->ctx;
	b.counterDataImageSize = s->image_size;
	b.pCounterDataImage = s->image;
	b.counterDataScratchBufferSize = s->scratch_size;
	b.pCounterDataScratchBuffer = s->scratch;
	b.range = RP_AUTO_RANGE;
	b.replayMode = RP_KERNEL_REPLAY;
	b.maxRangesPerPass = MAX_RANGES;
	b.maxLaunchesPerPass = MAX_RANGES;
	rp_set_config c = RP_PARAMS(rp_set_config, targetNestingLevel);
	c.ctx = s->ctx;
	c.pConfig = s->config;
	c.configSize = config_size;
	c.minNestingLevel = c.numNestingLevels = c.targetNestingLevel = 1;
	rp_ctx e = RP_PARAMS(rp_ctx, ctx);
	e.ctx = s->ctx;
	if (!ok(C_BEGIN_SESSION, &b))
		return 0;
	if (ok(C_SET_CONFIG, &c) && ok(C_ENABLE, &e))
		return 1;
	/* The session is released: it must not stay open on the context. */
	fn[C_END_SESSION](&e);
	return 0;
}

static void release(struct session *s)
{
	if (s->metrics != NULL) {
		rp_object d = RP_PARAMS(rp_object, object);
		d.object = s->metrics;
		fn[N_METRICS_DESTROY](&d);
	}
	free(s->config);
	free(s->prefix);
	free(s->image);
	free(s->scratch);
	*s = (struct session){0};
}

/* open_session sets up and begins a session on ctx; mu is held. */
static void open_session(struct session *s, void *ctx)
{
	s->ctx = ctx;
	int r = get_device_id(ctx, &s->device);
	if (r != 0) {
		stop("cuptiGetDeviceId", r, result_string(r));
		return;
	}
	rp_chip_name chip = RP_PARAMS(rp_chip_name, pChipName);
	chip.deviceIndex = s->device;
	rp_metrics_create mc = RP_PARAMS(rp_metrics_create, pMetricsContext);
	if (!ok(C_CHIP_NAME, &chip))
		return;
	mc.pChipName = chip.pChipName;
	if (!ok(N_METRICS_CREATE, &mc))
		return;
	s->metrics = mc.pMetricsContext;
	rp_raw_request req[MAX_RAW];
	size_t n = raw_requests(s->metrics, req), config_size = 0, prefix_size = 0;
	if (n > 0 && (s->config = config_image(chip.pChipName, req, n, &config_size)) != NULL &&
	    (s->prefix = counter_data_prefix(chip.pChipName, req, n, &prefix_size)) != NULL && counter_data(s, prefix_size) &&
	    begin(s, config_size))
		line("profiling\n");
	free_requests(req, n);
	if (n == 0 && !off)
		stop(calls[N_PROPERTIES_BEGIN], 0, "no raw counters");
}

/* write_range evaluates range i of s and writes it; 0 when a call failed. */
static int write_range(struct session *s, size_t i)
{
	rp_range_names rn = RP_PARAMS(rp_range_names, ppDescriptions);
	rn.pCounterDataImage = s->image;
	rn.rangeIndex = i;
	if (!ok(N_RANGE_NAMES, &rn))
		return 0;
	const char **names = calloc(rn.numDescriptions + 1, sizeof *names);
	if (names == NULL)
		return 0;
	rn.ppDescriptions = names;
	rp_set_counter_data sc = RP_PARAMS(rp_set_counter_data, isolated);
	sc.pMetricsContext = s->metrics;
	sc.pCounterDataImage = s->image;
	sc.rangeIndex = i;
	sc.isolated = 1;
	double v[MAX_METRICS];
	rp_evaluate ev = RP_PARAMS(rp_evaluate, pMetricValues);
	ev.pMetricsContext = s->metrics;
	ev.numMetrics = n_metrics;
	ev.ppMetricNames = metrics;
	ev.pMetricValues = v;
	if (!ok(N_RANGE_NAMES, &rn) || !ok(N_SET_COUNTER_DATA, &sc) || !ok(N_EVALUATE, &ev)) {
		free(names);
		return 0;
	}
	/* With automatic ranges a range has one name, its kernel's. */
	const char *name = rn.numDescriptions > 0 && names[0] != NULL ? names[0] : "";
	char values[MAX_METRICS * 96];
	size_t at = 0;
	/* A NaN is written "nan" whatever its sign, which rprof reads as
	 * a value missing; printf would write "-nan" for some. */
	for (size_t m = 0; m < n_metrics && at < sizeof values; m++)
		at += (size_t)(isnan(v[m]) ? snprintf(values + at, sizeof values - at, "%s%s=nan", m > 0 ? "," : "", metrics[m])
					   : snprintf(values + at, sizeof values - at, "%s%s=%.17g", m > 0 ? "," : "", metrics[m], v[m]));
	line("range\t%u\t%s\t%.*s\n", s->device, values, (int)strcspn(name, "\t\n"), name);
	free(names);
	return 1;
}

/* close_session ends s's session and writes its ranges; mu is held. */
static void close_session(struct session *s)
{
	rp_ctx c = RP_PARAMS(rp_ctx, ctx);
	c.ctx = s->ctx;
	rp_flush f = RP_PARAMS(rp_flush, numTraceBytesDropped);
	f.ctx = s->ctx;
	rp_num_ranges nr = RP_PARAMS(rp_num_ranges, numRanges);
	nr.pCounterDataImage = s->image;
	if (ok(C_DISABLE, &c) && ok(C_FLUSH, &f) && ok(C_UNSET_CONFIG, &c) && ok(C_END_SESSION, &c) && ok(N_NUM_RANGES, &nr)) {
		if (f.numRangesDropped > 0)
			line("ranges-dropped\t%u\t%zu\n", s->device, f.numRangesDropped);
		for (size_t i = 0; i < nr.numRanges && write_range(s, i); i++)
			;
	}
	release(s);
}

static struct session *find(void *ctx)
{
	for (int i = 0; i < MAX_CONTEXTS; i++)
		if (sessions[i].ctx == ctx)
			return &sessions[i];
	return NULL;
}

/* context is CUPTI's resource callback: a session per context created,
 * ended before the context is destroyed. */
static void context(void *userdata, int domain, uint32_t cbid, const void *data)
{
	(void)userdata;
	if (domain != RP_CB_DOMAIN_RESOURCE || data == NULL)
		return;
	void *ctx; /* CUpti_ResourceData's first field */
	memcpy(&ctx, data, sizeof ctx);
	pthread_mutex_lock(&mu);
	struct session *s = find(ctx);
	if (cbid == RP_CBID_CONTEXT_CREATED && s == NULL && !off) {
		if ((s = find(NULL)) == NULL)
			stop("cuptiProfilerBeginSession", 0, "more than 64 CUDA contexts");
		else if (initialized || (initialized = ok(C_INITIALIZE, &RP_PARAMS(rp_plain, pPriv)) &&
							 ok(N_INITIALIZE_HOST, &RP_PARAMS(rp_plain, pPriv))))
			open_session(s, ctx);
		if (s != NULL && off)
			release(s);
	} else if (cbid == RP_CBID_CONTEXT_DESTROY_STARTING && s != NULL && ctx != NULL) {
		close_session(s);
	}
	pthread_mutex_unlock(&mu);
}

/* bind_all resolves the profiler's functions; the first missing one's
 * name, or NULL. */
static const char *bind_all(void *cupti, void *nvpw)
{
	for (int c = 0; c < N_CALLS; c++) {
		/* NVPW's counter data functions (nvperf_target.h) may be in
		 * the target library CUPTI loads rather than the host one. */
		void *f = dlsym(c < FIRST_NVPW ? cupti : nvpw, calls[c]);
		if (f == NULL && c >= FIRST_NVPW)
			f = dlsym(cupti, calls[c]);
		if (f == NULL)
			return calls[c];
		memcpy(&fn[c], &f, sizeof f);
	}
	const struct {
		const char *name;
		void *slot;
	} more[] = {{"cuptiGetDeviceId", &get_device_id}, {"cuptiSubscribe", &subscribe}, {"cuptiEnableCallback", &enable_callback}};
	for (size_t i = 0; i < sizeof more / sizeof more[0]; i++) {
		void *f = dlsym(cupti, more[i].name);
		if (f == NULL)
			return more[i].name;
		memcpy(more[i].slot, &f, sizeof f);
	}
	return NULL;
}

/* parse_metrics splits RPROF_CUPTI_METRICS; 0 when it names none. */
static size_t parse_metrics(void)
{
	const char *v = getenv("RPROF_CUPTI_METRICS");
	if (v == NULL || *v == '\0')
		return 0;
	char *list = strdup(v), *save = NULL;
	for (char *m = strtok_r(list, ",", &save); m != NULL && n_metrics < MAX_METRICS; m = strtok_r(NULL, ",", &save))
		metrics[n_metrics++] = m;
	return n_metrics;
}

void profiler_start(void *cupti)
{
	if (parse_metrics() == 0)
		return;
	const char *path = getenv("RPROF_NVPERF_LIB");
	if (path == NULL || *path == '\0')
		path = "libnvperf_host.so";
	pthread_mutex_lock(&mu);
	void *nvpw = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	const char *missing = nvpw != NULL ? bind_all(cupti, nvpw) : NULL;
	void *sub = NULL;
	int r;
	if (nvpw == NULL)
		stop("dlopen", -1, dlerror());
	else if (missing != NULL)
		stop("dlsym", -1, missing);
	else if ((r = subscribe(&sub, context, NULL)) != 0)
		stop("cuptiSubscribe", r, result_string(r));
	else if ((r = enable_callback(1, sub, RP_CB_DOMAIN_RESOURCE, RP_CBID_CONTEXT_CREATED)) != 0 ||
		 (r = enable_callback(1, sub, RP_CB_DOMAIN_RESOURCE, RP_CBID_CONTEXT_DESTROY_STARTING)) != 0)
		stop("cuptiEnableCallback", r, result_string(r));
	pthread_mutex_unlock(&mu);
}

void profiler_finish(void)
{
	pthread_mutex_lock(&mu);
	for (int i = 0; i < MAX_CONTEXTS; i++)
		if (sessions[i].ctx != NULL)
			close_session(&sessions[i]);
	pthread_mutex_unlock(&mu);
}
