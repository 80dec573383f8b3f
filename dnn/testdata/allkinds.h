// allkinds.h: what the capture programs allkinds.c (oneDNN 2.x) and
// allkinds3.c (3.x) share: a status check, the engine and stream, and
// executing a primitive once with memory in the layouts it chose.
#include <stdio.h>
#include <stdlib.h>
#include <oneapi/dnnl/dnnl.h>

#define CHECK(f)                                                        \
	do {                                                            \
		dnnl_status_t s_ = (f);                                 \
		if (s_ != dnnl_success) {                               \
			fprintf(stderr, "%s:%d: %s: status %d\n",       \
			    __FILE__, __LINE__, #f, (int)s_);           \
			exit(2);                                        \
		}                                                       \
	} while (0)

// md_ref is what dnnl_primitive_desc_query_md returns: a pointer to a
// struct in 2.x, an opaque handle in 3.x.
#if DNNL_VERSION_MAJOR >= 3
typedef const_dnnl_memory_desc_t md_ref;
#else
typedef const dnnl_memory_desc_t *md_ref;
#endif

static dnnl_engine_t eng;
static dnnl_stream_t strm;

// reps is how many times execute executes a primitive.
static int reps = 1;

// execute creates the primitive of pd, allocates every argument at the
// layout the primitive chose, and executes it reps times.
static void execute(dnnl_primitive_desc_t pd, const int *args, int nargs) {
	dnnl_primitive_t prim;
	CHECK(dnnl_primitive_create(&prim, pd));
	dnnl_exec_arg_t ea[8];
	for (int i = 0; i < nargs; i++) {
		md_ref md = dnnl_primitive_desc_query_md(pd, dnnl_query_exec_arg_md, args[i]);
		ea[i].arg = args[i];
		CHECK(dnnl_memory_create(&ea[i].memory, md, eng, DNNL_MEMORY_ALLOCATE));
	}
	for (int r = 0; r < reps; r++)
		CHECK(dnnl_primitive_execute(prim, strm, nargs, ea));
	CHECK(dnnl_stream_wait(strm));
	for (int i = 0; i < nargs; i++)
		dnnl_memory_destroy(ea[i].memory);
	dnnl_primitive_destroy(prim);
	dnnl_primitive_desc_destroy(pd);
}

// pool and gelu run one pooling and one eltwise primitive on 4D
// activations; each program defines them with its API's calls.
static void pool(dnnl_alg_kind_t alg, dnnl_format_tag_t tag);
static void gelu(dnnl_alg_kind_t alg, dnnl_format_tag_t tag);

// pools_and_gelus runs the pooling and GELU problems of both programs:
// NCHW and blocked, seed 004's 3 channels padded to 8 included.
static void pools_and_gelus(void) {
	pool(dnnl_pooling_max, dnnl_nchw);
	pool(dnnl_pooling_avg_include_padding, dnnl_nchw);
	pool(dnnl_pooling_avg_exclude_padding, dnnl_nChw16c);
	gelu(dnnl_eltwise_gelu_erf, dnnl_nchw);
	gelu(dnnl_eltwise_gelu_tanh, dnnl_nchw);
	gelu(dnnl_eltwise_gelu_erf, dnnl_nChw8c);
}
