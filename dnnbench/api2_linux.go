package dnnbench

import (
	"errors"
	"fmt"
	"runtime"
	"unsafe"
)

// Sizes of oneDNN 2.x's caller-allocated descriptors (dnnl_types.h of
// 2.6; checked against the installed headers by the tests). No call passes
// a struct by value, so purego needs no struct support.
const (
	memoryDescSize = 696
	convDescSize   = 5976
	ipDescSize     = 5584
	poolDescSize   = 3288 // dnnl_pooling_v2_desc_t
	eltwiseSize    = 1416
	matmulDescSize = 2800
)

// Offsets in the 2.x dnnl_memory_desc_t (checked by the tests).
const (
	mdNdims      = 0
	mdPadded     = 112
	mdFormatKind = 312
	mdStrides    = 320 // format_desc.blocking
	mdInnerNblks = 416
	mdInnerBlks  = 424
	mdInnerIdxs  = 520
)

// tags2 are the 2.x dnnl_format_tag_t values of the layouts the harness
// uses.
var tags2 = map[string]int32{"any": 1, "a": 2, "ab": 3, "abc": 4, "nchw": 5, "nhwc": 20, "nChw16c": 69, "nChw8c": 93}

var algs2 = map[string]int32{
	"pooling_max":                 0x1ff,
	"pooling_avg_include_padding": 0x2ff,
	"pooling_avg_exclude_padding": 0x3ff,
	"eltwise_gelu_erf":            48,
	"eltwise_gelu_tanh":           207,
}

// memoryDesc is a dnnl_memory_desc_t, 8-byte aligned.
type memoryDesc [memoryDescSize / 8]uint64

// api2 binds what is particular to the 2.x C API: memory descriptors and
// operation descriptors are caller-allocated structs, initialised by
// *_desc_init calls and turned into a primitive descriptor by one call.
type api2 struct {
	mdInitByTag func(md *memoryDesc, ndims int32, d *dims, dt int32, tag int32) int32
	convInit    func(cd unsafe.Pointer, prop, alg int32, src, wei, bia, dst *memoryDesc, strides, dilates, padL, padR *dims) int32
	ipInit      func(d unsafe.Pointer, prop int32, src, wei, bia, dst *memoryDesc) int32
	poolInit    func(d unsafe.Pointer, prop, alg int32, src, dst *memoryDesc, strides, kernel, dilation, padL, padR *dims) int32
	eltwiseInit func(d unsafe.Pointer, prop, alg int32, data *memoryDesc, alpha, beta float32) int32
	matmulInit  func(d unsafe.Pointer, src, wei, bia, dst *memoryDesc) int32
	pdCreate    func(pd *uintptr, op unsafe.Pointer, attr, engine, hint uintptr) int32
}

func bind2(lib uintptr, ver Version) (*api2, error) {
	a := &api2{}
	return a, bind(lib, ver, []symbol{
		{&a.mdInitByTag, "dnnl_memory_desc_init_by_tag"},
		{&a.convInit, "dnnl_dilated_convolution_forward_desc_init"},
		{&a.ipInit, "dnnl_inner_product_forward_desc_init"},
		{&a.poolInit, "dnnl_pooling_v2_forward_desc_init"},
		{&a.eltwiseInit, "dnnl_eltwise_forward_desc_init"},
		{&a.matmulInit, "dnnl_matmul_desc_init"},
		{&a.pdCreate, "dnnl_primitive_desc_create"},
	})
}

// md initialises the memory descriptor of t (nil when t is nil: an absent
// bias).
func (a *api2) md(t *tensorSpec) (*memoryDesc, error) {
	if t == nil {
		return nil, nil
	}
	var d dims
	copy(d[:], t.shape)
	md := new(memoryDesc)
	if st := a.mdInitByTag(md, int32(len(t.shape)), &d, dnnlF32, tags2[t.tag]); st != dnnlSuccess {
		return nil, statusError("dnnl_memory_desc_init_by_tag", st)
	}
	return md, nil
}

// newOpBuf allocates a descriptor buffer of size bytes, 8-byte aligned.
func newOpBuf(size int) unsafe.Pointer {
	buf := make([]uint64, size/8)
	return unsafe.Pointer(&buf[0])
}

func (a *api2) primitiveDesc(c *core, p Problem, g geometry) (uintptr, error) {
	src, e1 := a.md(g.src)
	wei, e2 := a.md(g.wei)
	bia, e3 := a.md(g.bia)
	dst, e4 := a.md(g.dst)
	if err := errors.Join(e1, e2, e3, e4); err != nil {
		return 0, err
	}
	var op unsafe.Pointer
	var st int32
	var call string
	switch p.Kind {
	case "convolution":
		op, call = newOpBuf(convDescSize), "dnnl_dilated_convolution_forward_desc_init"
		st = a.convInit(op, dnnlForwardInference, dnnlConvolutionDirect, src, wei, bia, dst, &g.strides, &g.dil, &g.padL, &g.padR)
	case "inner_product":
		op, call = newOpBuf(ipDescSize), "dnnl_inner_product_forward_desc_init"
		st = a.ipInit(op, dnnlForwardInference, src, wei, bia, dst)
	case "matmul":
		op, call = newOpBuf(matmulDescSize), "dnnl_matmul_desc_init"
		st = a.matmulInit(op, src, wei, nil, dst)
	case "pooling":
		op, call = newOpBuf(poolDescSize), "dnnl_pooling_v2_forward_desc_init"
		st = a.poolInit(op, dnnlForwardInference, algs2[p.Alg], src, dst, &g.strides, &g.kernel, &g.dil, &g.padL, &g.padR)
	case "eltwise":
		op, call = newOpBuf(eltwiseSize), "dnnl_eltwise_forward_desc_init"
		st = a.eltwiseInit(op, dnnlForwardInference, algs2[p.Alg], src, 0, 0)
	default:
		return 0, fmt.Errorf("%w: kind %q", ErrProblem, p.Kind)
	}
	if st != dnnlSuccess {
		return 0, statusError(call, st)
	}
	var pd uintptr
	if st := a.pdCreate(&pd, op, 0, c.engine, 0); st != dnnlSuccess {
		return 0, statusError("dnnl_primitive_desc_create", st)
	}
	runtime.KeepAlive(op)
	return pd, nil
}

// blocking reads the struct the library returned (2.x memory descriptors
// are public structs).
func (a *api2) blocking(md unsafe.Pointer) (blocking, bool) {
	if *(*int32)(unsafe.Add(md, mdFormatKind)) != dnnlBlocked {
		return blocking{}, false
	}
	n := int(*(*int32)(unsafe.Add(md, mdNdims)))
	nblks := int(*(*int32)(unsafe.Add(md, mdInnerNblks)))
	return blocking{
		padded:    dimsAt(unsafe.Add(md, mdPadded), n),
		strides:   dimsAt(unsafe.Add(md, mdStrides), n),
		innerBlks: dimsAt(unsafe.Add(md, mdInnerBlks), nblks),
		innerIdxs: dimsAt(unsafe.Add(md, mdInnerIdxs), nblks),
	}, true
}
