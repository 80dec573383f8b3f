package dnnbench

import (
	"fmt"
	"unsafe"
)

// Enumerators of the 3.x C API that differ from 2.x or are new in it
// (dnnl_types.h of 3.7; checked against those headers by the tests).
var tags3 = map[string]int32{"any": 1, "a": 2, "ab": 3, "abc": 4, "nchw": 5, "nhwc": 22, "nChw16c": 78, "nChw8c": 102}

var algs3 = map[string]int32{
	"pooling_max":                 0x1ff,
	"pooling_avg_include_padding": 0x2ff,
	"pooling_avg_exclude_padding": 0x3ff,
	"eltwise_gelu_erf":            49,
	"eltwise_gelu_tanh":           43,
}

// Memory descriptor queries (dnnl_query_t) of 3.x, whose memory
// descriptors are opaque.
const (
	queryStrides    = 14
	queryNdims      = 256
	queryPadded     = 260
	queryFormatKind = 262
	queryInnerNblks = 263
	queryInnerBlks  = 264
	queryInnerIdxs  = 265
)

// api3 binds what is particular to the 3.x C API: memory descriptors are
// opaque handles the library allocates, and each primitive kind has its
// own dnnl_*_primitive_desc_create call taking them. Every call passes
// handles, pointers, integers or floats: none passes a struct by value,
// so purego needs no struct support here either.
type api3 struct {
	mdCreate  func(md *uintptr, ndims int32, d *dims, dt int32, tag int32) int32
	mdDestroy func(md uintptr) int32
	mdQuery   func(md unsafe.Pointer, what int32, result unsafe.Pointer) int32
	conv      func(pd *uintptr, engine uintptr, prop, alg int32, src, wei, bia, dst uintptr, strides, dilates, padL, padR *dims, attr uintptr) int32
	ip        func(pd *uintptr, engine uintptr, prop int32, src, wei, bia, dst, attr uintptr) int32
	matmul    func(pd *uintptr, engine uintptr, src, wei, bia, dst, attr uintptr) int32
	pool      func(pd *uintptr, engine uintptr, prop, alg int32, src, dst uintptr, strides, kernel, dilation, padL, padR *dims, attr uintptr) int32
	eltwise   func(pd *uintptr, engine uintptr, prop, alg int32, src, dst uintptr, alpha, beta float32, attr uintptr) int32
}

func bind3(lib uintptr, ver Version) (*api3, error) {
	a := &api3{}
	return a, bind(lib, ver, []symbol{
		{&a.mdCreate, "dnnl_memory_desc_create_with_tag"},
		{&a.mdDestroy, "dnnl_memory_desc_destroy"},
		{&a.mdQuery, "dnnl_memory_desc_query"},
		{&a.conv, "dnnl_convolution_forward_primitive_desc_create"},
		{&a.ip, "dnnl_inner_product_forward_primitive_desc_create"},
		{&a.matmul, "dnnl_matmul_primitive_desc_create"},
		{&a.pool, "dnnl_pooling_forward_primitive_desc_create"},
		{&a.eltwise, "dnnl_eltwise_forward_primitive_desc_create"},
	})
}

// mds creates the memory descriptors of a problem's tensors (0 for an
// absent one), to be released with release.
func (a *api3) mds(ts ...*tensorSpec) ([]uintptr, error) {
	out := make([]uintptr, len(ts))
	for i, t := range ts {
		if t == nil {
			continue
		}
		var d dims
		copy(d[:], t.shape)
		if st := a.mdCreate(&out[i], int32(len(t.shape)), &d, dnnlF32, tags3[t.tag]); st != dnnlSuccess {
			a.release(out)
			return nil, statusError("dnnl_memory_desc_create_with_tag", st)
		}
	}
	return out, nil
}

func (a *api3) release(mds []uintptr) {
	for _, md := range mds {
		if md != 0 {
			a.mdDestroy(md)
		}
	}
}

func (a *api3) primitiveDesc(c *core, p Problem, g geometry) (uintptr, error) {
	mds, err := a.mds(g.src, g.wei, g.bia, g.dst)
	if err != nil {
		return 0, err
	}
	// The primitive descriptor keeps copies.
	defer a.release(mds)
	src, wei, bia, dst := mds[0], mds[1], mds[2], mds[3]
	var pd uintptr
	var st int32
	var call string
	switch p.Kind {
	case "convolution":
		call = "dnnl_convolution_forward_primitive_desc_create"
		st = a.conv(&pd, c.engine, dnnlForwardInference, dnnlConvolutionDirect, src, wei, bia, dst, &g.strides, &g.dil, &g.padL, &g.padR, 0)
	case "inner_product":
		call = "dnnl_inner_product_forward_primitive_desc_create"
		st = a.ip(&pd, c.engine, dnnlForwardInference, src, wei, bia, dst, 0)
	case "matmul":
		call = "dnnl_matmul_primitive_desc_create"
		st = a.matmul(&pd, c.engine, src, wei, bia, dst, 0)
	case "pooling":
		call = "dnnl_pooling_forward_primitive_desc_create"
		st = a.pool(&pd, c.engine, dnnlForwardInference, algs3[p.Alg], src, dst, &g.strides, &g.kernel, &g.dil, &g.padL, &g.padR, 0)
	case "eltwise":
		call = "dnnl_eltwise_forward_primitive_desc_create"
		st = a.eltwise(&pd, c.engine, dnnlForwardInference, algs3[p.Alg], src, dst, 0, 0, 0)
	default:
		return 0, fmt.Errorf("%w: kind %q", ErrProblem, p.Kind)
	}
	if st != dnnlSuccess {
		return 0, statusError(call, st)
	}
	return pd, nil
}

// blocking queries the opaque memory descriptor.
func (a *api3) blocking(md unsafe.Pointer) (blocking, bool) {
	var kind, n, nblks int32
	if a.mdQuery(md, queryFormatKind, unsafe.Pointer(&kind)) != dnnlSuccess || kind != dnnlBlocked ||
		a.mdQuery(md, queryNdims, unsafe.Pointer(&n)) != dnnlSuccess ||
		a.mdQuery(md, queryInnerNblks, unsafe.Pointer(&nblks)) != dnnlSuccess {
		return blocking{}, false
	}
	// The dimension queries return a pointer to the library's dnnl_dims_t.
	get := func(what int32, count int32) ([]int64, bool) {
		var p unsafe.Pointer
		if a.mdQuery(md, what, unsafe.Pointer(&p)) != dnnlSuccess || p == nil {
			return nil, false
		}
		return dimsAt(p, int(count)), true
	}
	padded, ok1 := get(queryPadded, n)
	strides, ok2 := get(queryStrides, n)
	blks, ok3 := get(queryInnerBlks, nblks)
	idxs, ok4 := get(queryInnerIdxs, nblks)
	return blocking{padded: padded, strides: strides, innerBlks: blks, innerIdxs: idxs}, ok1 && ok2 && ok3 && ok4
}
