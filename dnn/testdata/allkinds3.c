// allkinds3 is allkinds.c for oneDNN 3.x's C API: the same primitives, made
// with the dnnl_*_primitive_desc_create functions that replaced 2.x's
// operation descriptors, each executed once so that ONEDNN_VERBOSE=1
// prints a line per kind. Build: gcc allkinds3.c -ldnnl (against 3.x).
#include "allkinds.h"

static dnnl_memory_desc_t md(int n, dnnl_dim_t a, dnnl_dim_t b, dnnl_dim_t c,
    dnnl_dim_t e, dnnl_format_tag_t tag) {
	dnnl_dims_t dims = {a, b, c, e};
	dnnl_memory_desc_t d;
	CHECK(dnnl_memory_desc_create_with_tag(&d, n, dims, dnnl_f32, tag));
	return d;
}

static const int srcWeiBiaDst[] = {DNNL_ARG_SRC, DNNL_ARG_WEIGHTS,
    DNNL_ARG_BIAS, DNNL_ARG_DST};

static void conv(dnnl_format_tag_t tag, int groups, const_dnnl_primitive_attr_t attr) {
	dnnl_memory_desc_t src = md(4, 2, 64, 28, 28, tag), dst = md(4, 2, 64, 28, 28, tag);
	dnnl_memory_desc_t wei, bia = md(1, 64, 0, 0, 0, dnnl_x);
	if (groups > 1) {
		dnnl_dims_t w = {groups, 64 / groups, 64 / groups, 3, 3};
		CHECK(dnnl_memory_desc_create_with_tag(&wei, 5, w, dnnl_f32, dnnl_format_tag_any));
	} else {
		wei = md(4, 64, 64, 3, 3, dnnl_format_tag_any);
	}
	dnnl_dims_t strides = {1, 1}, dil = {0, 0}, pad = {1, 1};
	dnnl_primitive_desc_t pd;
	CHECK(dnnl_convolution_forward_primitive_desc_create(&pd, eng, dnnl_forward_inference,
	    dnnl_convolution_direct, src, wei, bia, dst, strides, dil, pad, pad, attr));
	execute(pd, srcWeiBiaDst, 4);
}

static void pool(dnnl_alg_kind_t alg, dnnl_format_tag_t tag) {
	dnnl_memory_desc_t src = md(4, 2, 16, 28, 28, tag), dst = md(4, 2, 16, 14, 14, tag);
	dnnl_dims_t strides = {2, 2}, kernel = {3, 3}, dil = {0, 0},
		    padl = {1, 1}, padr = {0, 0};
	dnnl_primitive_desc_t pd;
	CHECK(dnnl_pooling_forward_primitive_desc_create(&pd, eng, dnnl_forward_inference,
	    alg, src, dst, strides, kernel, dil, padl, padr, NULL));
	static const int args[] = {DNNL_ARG_SRC, DNNL_ARG_DST};
	execute(pd, args, 2);
}

static void gelu(dnnl_alg_kind_t alg, dnnl_format_tag_t tag) {
	dnnl_memory_desc_t data = md(4, 2, 3, 14, 14, tag);
	dnnl_primitive_desc_t pd;
	CHECK(dnnl_eltwise_forward_primitive_desc_create(&pd, eng, dnnl_forward_inference,
	    alg, data, data, 0, 0, NULL));
	static const int args[] = {DNNL_ARG_SRC, DNNL_ARG_DST};
	execute(pd, args, 2);
}

int main(void) {
	CHECK(dnnl_engine_create(&eng, dnnl_cpu, 0));
	CHECK(dnnl_stream_create(&strm, eng, dnnl_stream_default_flags));
	dnnl_primitive_desc_t pd;

	conv(dnnl_nchw, 1, NULL);
	conv(dnnl_nhwc, 1, NULL);
	conv(dnnl_nChw16c, 1, NULL);
	{ // grouped, with a sum and GELU post-op
		dnnl_post_ops_t po;
		dnnl_primitive_attr_t attr;
		CHECK(dnnl_post_ops_create(&po));
		CHECK(dnnl_post_ops_append_sum(po, 1.0f, 0, dnnl_data_type_undef));
		CHECK(dnnl_post_ops_append_eltwise(po, dnnl_eltwise_gelu_erf, 0, 0));
		CHECK(dnnl_primitive_attr_create(&attr));
		CHECK(dnnl_primitive_attr_set_post_ops(attr, po));
		conv(dnnl_nChw16c, 2, attr);
		dnnl_primitive_attr_destroy(attr);
		dnnl_post_ops_destroy(po);
	}
	{ // inner product
		dnnl_memory_desc_t src = md(2, 32, 512, 0, 0, dnnl_nc), wei = md(2, 256, 512, 0, 0, dnnl_format_tag_any),
				   bia = md(1, 256, 0, 0, 0, dnnl_x), dst = md(2, 32, 256, 0, 0, dnnl_nc);
		CHECK(dnnl_inner_product_forward_primitive_desc_create(&pd, eng, dnnl_forward_inference,
		    src, wei, bia, dst, NULL));
		execute(pd, srcWeiBiaDst, 4);
	}
	{ // matmul
		dnnl_memory_desc_t src = md(2, 64, 128, 0, 0, dnnl_ab), wei = md(2, 128, 96, 0, 0, dnnl_ab),
				   dst = md(2, 64, 96, 0, 0, dnnl_ab);
		CHECK(dnnl_matmul_primitive_desc_create(&pd, eng, src, wei, NULL, dst, NULL));
		static const int args[] = {DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST};
		execute(pd, args, 3);
	}
	pools_and_gelus();
	{ // batch normalization with global statistics, scale and shift
		dnnl_memory_desc_t data = md(4, 2, 32, 14, 14, dnnl_nChw16c);
		CHECK(dnnl_batch_normalization_forward_primitive_desc_create(&pd, eng,
		    dnnl_forward_inference, data, data, 1e-5f,
		    dnnl_use_global_stats | dnnl_use_scale | dnnl_use_shift, NULL));
		static const int args[] = {DNNL_ARG_SRC, DNNL_ARG_DST, DNNL_ARG_MEAN,
		    DNNL_ARG_VARIANCE, DNNL_ARG_SCALE, DNNL_ARG_SHIFT};
		execute(pd, args, 6);
	}
	{ // layer normalization over the last axis
		dnnl_dims_t dims = {4, 16, 256};
		dnnl_memory_desc_t data;
		CHECK(dnnl_memory_desc_create_with_tag(&data, 3, dims, dnnl_f32, dnnl_abc));
		CHECK(dnnl_layer_normalization_forward_primitive_desc_create(&pd, eng,
		    dnnl_forward_inference, data, data, NULL, 1e-5f, 0, NULL));
		static const int args[] = {DNNL_ARG_SRC, DNNL_ARG_DST, DNNL_ARG_MEAN,
		    DNNL_ARG_VARIANCE};
		execute(pd, args, 4);
	}
	{ // softmax over the last axis
		dnnl_memory_desc_t data = md(2, 64, 1000, 0, 0, dnnl_ab);
		CHECK(dnnl_softmax_forward_primitive_desc_create(&pd, eng, dnnl_forward_inference,
		    dnnl_softmax_accurate, data, data, 1, NULL));
		static const int args[] = {DNNL_ARG_SRC, DNNL_ARG_DST};
		execute(pd, args, 2);
	}
	{ // reorder NCHW to nChw16c
		dnnl_memory_desc_t from = md(4, 2, 24, 14, 14, dnnl_nchw), to = md(4, 2, 24, 14, 14, dnnl_nChw16c);
		CHECK(dnnl_reorder_primitive_desc_create(&pd, from, eng, to, eng, NULL));
		static const int args[] = {DNNL_ARG_FROM, DNNL_ARG_TO};
		execute(pd, args, 2);
	}
	{ // kinds without a formula: binary add and LRN
		dnnl_memory_desc_t a = md(4, 2, 16, 14, 14, dnnl_nchw);
		CHECK(dnnl_binary_primitive_desc_create(&pd, eng, dnnl_binary_add, a, a, a, NULL));
		static const int args[] = {DNNL_ARG_SRC_0, DNNL_ARG_SRC_1, DNNL_ARG_DST};
		execute(pd, args, 3);
		CHECK(dnnl_lrn_forward_primitive_desc_create(&pd, eng, dnnl_forward_inference,
		    dnnl_lrn_across_channels, a, a, 5, 1e-4f, 0.75f, 1.0f, NULL));
		static const int largs[] = {DNNL_ARG_SRC, DNNL_ARG_DST};
		execute(pd, largs, 2);
	}
	printf("allkinds3: ok\n");
	dnnl_stream_destroy(strm);
	dnnl_engine_destroy(eng);
	return 0;
}
