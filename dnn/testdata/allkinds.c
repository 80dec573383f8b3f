// allkinds runs one small primitive of each kind rprof's dnn package has a
// formula for (and two it has none for), each executed once, so that
// ONEDNN_VERBOSE=1 prints a line per kind. Build: gcc allkinds.c -ldnnl.
// "allkinds small" runs only a tiny convolution (NCHW and NHWC) and GELU
// erf on 3 channels (NCHW and nChw8c), cheap enough under emulation.
// "allkinds loop N" executes one small reorder N times, to time many calls.
// It prints "allkinds: ok" on stdout, between the library's verbose lines,
// and writes one byte that is not valid text, so that a capture can be
// checked to pass the program's own output through unchanged.
#include <string.h>
#include "allkinds.h"

static void md(dnnl_memory_desc_t *d, int n, dnnl_dim_t a, dnnl_dim_t b,
    dnnl_dim_t c, dnnl_dim_t e, dnnl_format_tag_t tag) {
	dnnl_dims_t dims = {a, b, c, e};
	CHECK(dnnl_memory_desc_init_by_tag(d, n, dims, dnnl_f32, tag));
}

static void create(dnnl_primitive_desc_t *pd, const void *desc,
    const_dnnl_primitive_attr_t attr) {
	CHECK(dnnl_primitive_desc_create(pd, desc, attr, eng, NULL));
}

static const int srcWeiBiaDst[] = {DNNL_ARG_SRC, DNNL_ARG_WEIGHTS,
    DNNL_ARG_BIAS, DNNL_ARG_DST, DNNL_ARG_SCRATCHPAD};

// conv runs a 3x3 convolution, padding 1, of mb images of ch channels of
// hw x hw pixels.
static void conv(dnnl_format_tag_t tag, int groups, const_dnnl_primitive_attr_t attr,
    int mb, int ch, int hw) {
	dnnl_memory_desc_t src, wei, bia, dst;
	md(&src, 4, mb, ch, hw, hw, tag);
	md(&dst, 4, mb, ch, hw, hw, tag);
	if (groups > 1) {
		dnnl_dims_t w = {groups, ch / groups, ch / groups, 3, 3};
		CHECK(dnnl_memory_desc_init_by_tag(&wei, 5, w, dnnl_f32, dnnl_format_tag_any));
	} else {
		md(&wei, 4, ch, ch, 3, 3, dnnl_format_tag_any);
	}
	md(&bia, 1, ch, 0, 0, 0, dnnl_x);
	dnnl_convolution_desc_t cd;
	dnnl_dims_t strides = {1, 1}, pad = {1, 1};
	CHECK(dnnl_convolution_forward_desc_init(&cd, dnnl_forward_inference,
	    dnnl_convolution_direct, &src, &wei, &bia, &dst, strides, pad, pad));
	dnnl_primitive_desc_t pd;
	create(&pd, &cd, attr);
	execute(pd, srcWeiBiaDst, 4);
}

static void pool(dnnl_alg_kind_t alg, dnnl_format_tag_t tag) {
	dnnl_memory_desc_t src, dst;
	md(&src, 4, 2, 16, 28, 28, tag);
	md(&dst, 4, 2, 16, 14, 14, tag);
	dnnl_pooling_v2_desc_t d;
	dnnl_dims_t strides = {2, 2}, kernel = {3, 3}, dil = {0, 0},
		    padl = {1, 1}, padr = {0, 0};
	CHECK(dnnl_pooling_v2_forward_desc_init(&d, dnnl_forward_inference, alg,
	    &src, &dst, strides, kernel, dil, padl, padr));
	dnnl_primitive_desc_t pd;
	create(&pd, &d, NULL);
	static const int args[] = {DNNL_ARG_SRC, DNNL_ARG_DST};
	execute(pd, args, 2);
}

static void gelu(dnnl_alg_kind_t alg, dnnl_format_tag_t tag) {
	dnnl_memory_desc_t data;
	md(&data, 4, 2, 3, 14, 14, tag);
	dnnl_eltwise_desc_t d;
	CHECK(dnnl_eltwise_forward_desc_init(&d, dnnl_forward_inference, alg, &data, 0, 0));
	dnnl_primitive_desc_t pd;
	create(&pd, &d, NULL);
	static const int args[] = {DNNL_ARG_SRC, DNNL_ARG_DST};
	execute(pd, args, 2);
}

static void done(void) {
	printf("allkinds: ok\n");
	fputc(0xff, stdout);
	printf("partial line without newline");
	fflush(stdout);
	dnnl_stream_destroy(strm);
	dnnl_engine_destroy(eng);
}

int main(int argc, char **argv) {
	CHECK(dnnl_engine_create(&eng, dnnl_cpu, 0));
	CHECK(dnnl_stream_create(&strm, eng, dnnl_stream_default_flags));

	if (argc > 1 && strcmp(argv[1], "small") == 0) {
		conv(dnnl_nchw, 1, NULL, 1, 8, 8);
		conv(dnnl_nhwc, 1, NULL, 1, 8, 8);
		gelu(dnnl_eltwise_gelu_erf, dnnl_nchw);
		gelu(dnnl_eltwise_gelu_erf, dnnl_nChw8c);
		done();
		return 0;
	}
	if (argc > 2 && strcmp(argv[1], "loop") == 0) {
		reps = atoi(argv[2]);
		dnnl_memory_desc_t from, to;
		md(&from, 4, 2, 16, 4, 4, dnnl_nchw);
		md(&to, 4, 2, 16, 4, 4, dnnl_nhwc);
		dnnl_primitive_desc_t pd;
		CHECK(dnnl_reorder_primitive_desc_create(&pd, &from, eng, &to, eng, NULL));
		static const int args[] = {DNNL_ARG_FROM, DNNL_ARG_TO};
		execute(pd, args, 2);
		done();
		return 0;
	}
	conv(dnnl_nchw, 1, NULL, 2, 64, 28);
	conv(dnnl_nhwc, 1, NULL, 2, 64, 28);
	conv(dnnl_nChw16c, 1, NULL, 2, 64, 28);
	{ // grouped, with a sum and GELU post-op
		dnnl_post_ops_t po;
		dnnl_primitive_attr_t attr;
		CHECK(dnnl_post_ops_create(&po));
		CHECK(dnnl_post_ops_append_sum(po, 1.0f));
		CHECK(dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_gelu_erf, 0, 0));
		CHECK(dnnl_primitive_attr_create(&attr));
		CHECK(dnnl_primitive_attr_set_post_ops(attr, po));
		conv(dnnl_nChw16c, 2, attr, 2, 64, 28);
		dnnl_primitive_attr_destroy(attr);
		dnnl_post_ops_destroy(po);
	}
	{ // inner product
		dnnl_memory_desc_t src, wei, bia, dst;
		md(&src, 2, 32, 512, 0, 0, dnnl_nc);
		md(&wei, 2, 256, 512, 0, 0, dnnl_format_tag_any);
		md(&bia, 1, 256, 0, 0, 0, dnnl_x);
		md(&dst, 2, 32, 256, 0, 0, dnnl_nc);
		dnnl_inner_product_desc_t d;
		CHECK(dnnl_inner_product_forward_desc_init(&d, dnnl_forward_inference, &src, &wei, &bia, &dst));
		dnnl_primitive_desc_t pd;
		create(&pd, &d, NULL);
		execute(pd, srcWeiBiaDst, 4);
	}
	{ // matmul
		dnnl_memory_desc_t src, wei, dst;
		md(&src, 2, 64, 128, 0, 0, dnnl_ab);
		md(&wei, 2, 128, 96, 0, 0, dnnl_ab);
		md(&dst, 2, 64, 96, 0, 0, dnnl_ab);
		dnnl_matmul_desc_t d;
		CHECK(dnnl_matmul_desc_init(&d, &src, &wei, NULL, &dst));
		dnnl_primitive_desc_t pd;
		create(&pd, &d, NULL);
		static const int args[] = {DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST};
		execute(pd, args, 3);
	}
	pools_and_gelus();
	{ // batch normalization with global statistics and scale and shift
		dnnl_memory_desc_t data;
		md(&data, 4, 2, 32, 14, 14, dnnl_nChw16c);
		dnnl_batch_normalization_desc_t d;
		CHECK(dnnl_batch_normalization_forward_desc_init(&d, dnnl_forward_inference,
		    &data, 1e-5f, dnnl_use_global_stats | dnnl_use_scaleshift));
		dnnl_primitive_desc_t pd;
		create(&pd, &d, NULL);
		static const int args[] = {DNNL_ARG_SRC, DNNL_ARG_DST, DNNL_ARG_MEAN,
		    DNNL_ARG_VARIANCE, DNNL_ARG_SCALE_SHIFT};
		execute(pd, args, 5);
	}
	{ // layer normalization over the last axis
		dnnl_memory_desc_t data;
		dnnl_dims_t dims = {4, 16, 256};
		CHECK(dnnl_memory_desc_init_by_tag(&data, 3, dims, dnnl_f32, dnnl_abc));
		dnnl_layer_normalization_desc_t d;
		CHECK(dnnl_layer_normalization_forward_desc_init(&d, dnnl_forward_inference,
		    &data, NULL, 1e-5f, 0));
		dnnl_primitive_desc_t pd;
		create(&pd, &d, NULL);
		static const int args[] = {DNNL_ARG_SRC, DNNL_ARG_DST, DNNL_ARG_MEAN,
		    DNNL_ARG_VARIANCE};
		execute(pd, args, 4);
	}
	{ // softmax over the last axis
		dnnl_memory_desc_t data;
		md(&data, 2, 64, 1000, 0, 0, dnnl_ab);
		dnnl_softmax_v2_desc_t d;
		CHECK(dnnl_softmax_v2_forward_desc_init(&d, dnnl_forward_inference,
		    dnnl_softmax_accurate, &data, &data, 1));
		dnnl_primitive_desc_t pd;
		create(&pd, &d, NULL);
		static const int args[] = {DNNL_ARG_SRC, DNNL_ARG_DST};
		execute(pd, args, 2);
	}
	{ // reorder NCHW to nChw16c
		dnnl_memory_desc_t from, to;
		md(&from, 4, 2, 24, 14, 14, dnnl_nchw);
		md(&to, 4, 2, 24, 14, 14, dnnl_nChw16c);
		dnnl_primitive_desc_t pd;
		CHECK(dnnl_reorder_primitive_desc_create(&pd, &from, eng, &to, eng, NULL));
		static const int args[] = {DNNL_ARG_FROM, DNNL_ARG_TO};
		execute(pd, args, 2);
	}
	{ // kinds without a formula: binary add and LRN
		dnnl_memory_desc_t a;
		md(&a, 4, 2, 16, 14, 14, dnnl_nchw);
		dnnl_binary_desc_t b;
		CHECK(dnnl_binary_desc_init(&b, dnnl_binary_add, &a, &a, &a));
		dnnl_primitive_desc_t pd;
		create(&pd, &b, NULL);
		static const int args[] = {DNNL_ARG_SRC_0, DNNL_ARG_SRC_1, DNNL_ARG_DST};
		execute(pd, args, 3);
		dnnl_lrn_desc_t l;
		CHECK(dnnl_lrn_forward_desc_init(&l, dnnl_forward_inference,
		    dnnl_lrn_across_channels, &a, 5, 1e-4f, 0.75f, 1.0f));
		create(&pd, &l, NULL);
		static const int largs[] = {DNNL_ARG_SRC, DNNL_ARG_DST};
		execute(pd, largs, 2);
	}
	done();
	return 0;
}
