package dnnbench

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/rprof/rprof/dnn"
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

// Enumerators of the 2.x C API (dnnl_types.h; checked by the tests).
const (
	dnnlSuccess           = 0
	dnnlCPU               = 1
	dnnlF32               = 3
	dnnlForwardInference  = 96
	dnnlConvolutionDirect = 1
	dnnlStreamDefault     = 1
	dnnlQueryImplInfoStr  = 8
	dnnlQueryExecArgMD    = 255
	dnnlFormatAny         = 1
	dnnlTagA              = 2
	dnnlTagAB             = 3
	dnnlTagABC            = 4
	argSrc                = 1
	argDst                = 17
	argWeights            = 33
	argBias               = 41
	argWorkspace          = 64
	runtimeOMP            = 2
)

// tagValues are the dnnl_format_tag_t of the 4D activation layouts.
var tagValues = map[string]int32{"nchw": 5, "nhwc": 20, "nChw16c": 69, "nChw8c": 93}

var algValues = map[string]int32{
	"pooling_max":                 0x1ff,
	"pooling_avg_include_padding": 0x2ff,
	"pooling_avg_exclude_padding": 0x3ff,
	"eltwise_gelu_erf":            48,
	"eltwise_gelu_tanh":           207,
}

// memoryDesc is a dnnl_memory_desc_t, 8-byte aligned.
type memoryDesc [memoryDescSize / 8]uint64

type dims [12]int64 // dnnl_dims_t

type execArg struct { // dnnl_exec_arg_t
	arg int32
	_   int32
	mem uintptr
}

// api2 binds the 2.x C API.
type api2 struct {
	ver    Version
	engine uintptr
	stream uintptr

	mdInitByTag      func(md *memoryDesc, ndims int32, d *dims, dt int32, tag int32) int32
	convInit         func(cd unsafe.Pointer, prop, alg int32, src, wei, bia, dst *memoryDesc, strides, dilates, padL, padR *dims) int32
	ipInit           func(d unsafe.Pointer, prop int32, src, wei, bia, dst *memoryDesc) int32
	poolInit         func(d unsafe.Pointer, prop, alg int32, src, dst *memoryDesc, strides, kernel, dilation, padL, padR *dims) int32
	eltwiseInit      func(d unsafe.Pointer, prop, alg int32, data *memoryDesc, alpha, beta float32) int32
	matmulInit       func(d unsafe.Pointer, src, wei, bia, dst *memoryDesc) int32
	pdCreate         func(pd *uintptr, op unsafe.Pointer, attr, engine, hint uintptr) int32
	pdQueryMD        func(pd uintptr, what, index int32) uintptr
	pdQuery          func(pd uintptr, what, index int32, result unsafe.Pointer) int32
	pdDestroy        func(pd uintptr) int32
	primCreate       func(p *uintptr, pd uintptr) int32
	primDestroy      func(p uintptr) int32
	memCreate        func(m *uintptr, md uintptr, engine uintptr, handle uintptr) int32
	memHandle        func(m uintptr, h *unsafe.Pointer) int32
	memDestroy       func(m uintptr) int32
	mdSize           func(md uintptr) uint64
	execute          func(p, stream uintptr, nargs int32, args unsafe.Pointer) int32
	streamWait       func(s uintptr) int32
	streamDestroy    func(s uintptr) int32
	engineDestroy    func(e uintptr) int32
	ompSetNumThreads func(n int32)
	ompGetMaxThreads func() int32
}

// Open loads libdnnl.so.2 and checks its version.
func Open() (*Library, error) {
	lib, err := purego.Dlopen("libdnnl.so.2", purego.RTLD_NOW|purego.RTLD_GLOBAL)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoLibrary, err)
	}
	var version func() unsafe.Pointer
	purego.RegisterLibFunc(&version, lib, "dnnl_version")
	ver := readVersion(version())
	if ver.Major != 2 {
		return nil, &VersionError{Version: ver}
	}
	a := &api2{ver: ver}
	for _, b := range []struct {
		fn   any
		name string
	}{
		{&a.mdInitByTag, "dnnl_memory_desc_init_by_tag"},
		{&a.convInit, "dnnl_dilated_convolution_forward_desc_init"},
		{&a.ipInit, "dnnl_inner_product_forward_desc_init"},
		{&a.poolInit, "dnnl_pooling_v2_forward_desc_init"},
		{&a.eltwiseInit, "dnnl_eltwise_forward_desc_init"},
		{&a.matmulInit, "dnnl_matmul_desc_init"},
		{&a.pdCreate, "dnnl_primitive_desc_create"},
		{&a.pdQueryMD, "dnnl_primitive_desc_query_md"},
		{&a.pdQuery, "dnnl_primitive_desc_query"},
		{&a.pdDestroy, "dnnl_primitive_desc_destroy"},
		{&a.primCreate, "dnnl_primitive_create"},
		{&a.primDestroy, "dnnl_primitive_destroy"},
		{&a.memCreate, "dnnl_memory_create"},
		{&a.memHandle, "dnnl_memory_get_data_handle"},
		{&a.memDestroy, "dnnl_memory_destroy"},
		{&a.mdSize, "dnnl_memory_desc_get_size"},
		{&a.execute, "dnnl_primitive_execute"},
		{&a.streamWait, "dnnl_stream_wait"},
		{&a.streamDestroy, "dnnl_stream_destroy"},
		{&a.engineDestroy, "dnnl_engine_destroy"},
	} {
		if _, err := purego.Dlsym(lib, b.name); err != nil {
			return nil, fmt.Errorf("oneDNN %s: %s missing: %w", ver, b.name, err)
		}
		purego.RegisterLibFunc(b.fn, lib, b.name)
	}
	if ver.CPURuntime == "OpenMP" {
		// The library's OpenMP runtime, already loaded with it.
		if omp, err := purego.Dlopen("libgomp.so.1", purego.RTLD_NOW|purego.RTLD_GLOBAL); err == nil {
			purego.RegisterLibFunc(&a.ompSetNumThreads, omp, "omp_set_num_threads")
			purego.RegisterLibFunc(&a.ompGetMaxThreads, omp, "omp_get_max_threads")
		}
	}
	var engineCreate func(e *uintptr, kind int32, index uint64) int32
	var streamCreate func(s *uintptr, e uintptr, flags uint32) int32
	purego.RegisterLibFunc(&engineCreate, lib, "dnnl_engine_create")
	purego.RegisterLibFunc(&streamCreate, lib, "dnnl_stream_create")
	if st := engineCreate(&a.engine, dnnlCPU, 0); st != dnnlSuccess {
		return nil, statusError("dnnl_engine_create", st)
	}
	if st := streamCreate(&a.stream, a.engine, dnnlStreamDefault); st != dnnlSuccess {
		a.engineDestroy(a.engine)
		return nil, statusError("dnnl_stream_create", st)
	}
	return &Library{api: a}, nil
}

// readVersion reads the dnnl_version_t at p: three ints, the hash string
// at offset 16, the CPU runtime at 24.
func readVersion(base unsafe.Pointer) Version {
	v := Version{
		Major: int(*(*int32)(base)),
		Minor: int(*(*int32)(unsafe.Add(base, 4))),
		Patch: int(*(*int32)(unsafe.Add(base, 8))),
		Hash:  cString(*(*unsafe.Pointer)(unsafe.Add(base, 16))),
	}
	switch *(*uint32)(unsafe.Add(base, 24)) {
	case 1:
		v.CPURuntime = "sequential"
	case runtimeOMP:
		v.CPURuntime = "OpenMP"
	case 4:
		v.CPURuntime = "TBB"
	case 8:
		v.CPURuntime = "threadpool"
	}
	return v
}

func cString(p unsafe.Pointer) string {
	if p == nil {
		return ""
	}
	var b []byte
	for i := 0; ; i++ {
		c := *(*byte)(unsafe.Add(p, i))
		if c == 0 {
			return string(b)
		}
		b = append(b, c)
	}
}

// StatusError is a oneDNN call's failure status.
type StatusError struct {
	Call   string
	Status int32
}

var statusNames = map[int32]string{1: "out of memory", 2: "invalid arguments", 3: "unimplemented", 4: "iterator ends", 5: "runtime error", 6: "not required"}

func (e *StatusError) Error() string {
	return fmt.Sprintf("%s: %s (status %d)", e.Call, statusNames[e.Status], e.Status)
}

func statusError(call string, st int32) error { return &StatusError{Call: call, Status: st} }

func (a *api2) version() Version { return a.ver }

func (a *api2) setThreads(n int) error {
	if a.ompSetNumThreads == nil {
		return fmt.Errorf("--threads: oneDNN %s uses the %s runtime; only OpenMP's thread count can be set here (set it in the runtime's own way)", a.ver, a.ver.CPURuntime)
	}
	a.ompSetNumThreads(int32(n))
	return nil
}

func (a *api2) maxThreads() int {
	if a.ompGetMaxThreads == nil {
		return 0
	}
	return int(a.ompGetMaxThreads())
}

func (a *api2) close() {
	a.streamDestroy(a.stream)
	a.engineDestroy(a.engine)
}

func (a *api2) md(shape []int64, tag int32) (*memoryDesc, error) {
	var d dims
	copy(d[:], shape)
	md := new(memoryDesc)
	if st := a.mdInitByTag(md, int32(len(shape)), &d, dnnlF32, tag); st != dnnlSuccess {
		return nil, statusError("dnnl_memory_desc_init_by_tag", st)
	}
	return md, nil
}

// shape2d is a 2D-spatial problem: batch, channels, spatial sizes and
// window of each axis.
type shape2d struct {
	mb, ic, oc, g    int64
	i, o, k, s, d, p [2]int64
}

func parse2d(desc string, needOC bool) (shape2d, error) {
	d, err := dnn.ParseDescriptor(desc)
	if err != nil {
		return shape2d{}, err
	}
	if !d.Has("mb", "ic", "ih", "oh", "kh") || needOC && !d.Has("oc") {
		return shape2d{}, fmt.Errorf("%w: %q: the harness runs 2D problems with mb, ic, ih, oh, kh (and oc)", ErrProblem, desc)
	}
	if d.Has("id") || d.Has("od") {
		return shape2d{}, fmt.Errorf("%w: %q: 3D problems are not supported by the harness", ErrProblem, desc)
	}
	s := shape2d{mb: int64(d["mb"]), ic: int64(d["ic"]), oc: int64(d.Get("oc", 0)), g: int64(d.Get("g", 1))}
	for j, ax := range []string{"h", "w"} {
		get := func(pre string, def float64) int64 {
			if v, ok := d[pre+ax]; ok {
				return int64(v)
			}
			return int64(d.Get(pre+"h", def)) // square shorthand
		}
		s.i[j], s.o[j], s.k[j] = get("i", 1), get("o", 1), get("k", 1)
		s.s[j], s.d[j], s.p[j] = get("s", 1), get("d", 0), get("p", 0)
	}
	return s, nil
}

// padR is the right padding that makes the output size o.
func (s shape2d) padR(j int) int64 {
	return (s.o[j]-1)*s.s[j] + (s.k[j]-1)*(s.d[j]+1) + 1 - s.i[j] - s.p[j]
}

func (s shape2d) windows() (strides, dil, padL, padR, kernel dims) {
	for j := range 2 {
		strides[j], dil[j], padL[j], padR[j], kernel[j] = s.s[j], s.d[j], s.p[j], s.padR(j), s.k[j]
	}
	return
}

// prim2 is a created primitive with its memory.
type prim2 struct {
	a    *api2
	pd   uintptr
	prim uintptr
	args []execArg
	impl string
}

// opDesc is an initialised 2.x operation descriptor: the caller-allocated
// buffer (kept by op until the primitive descriptor is created), the
// status of its init call and the arguments its primitive takes.
type opDesc struct {
	op     unsafe.Pointer
	status int32
	call   string
	argIDs []int
}

// newOpBuf allocates a descriptor buffer of size bytes, 8-byte aligned.
func newOpBuf(size int) unsafe.Pointer {
	buf := make([]uint64, size/8)
	return unsafe.Pointer(&buf[0])
}

// opBuilders initialise the operation descriptor of each primitive kind;
// create does the steps common to all kinds.
var opBuilders = map[string]func(a *api2, p Problem) (opDesc, error){
	"convolution":   (*api2).convOp,
	"inner_product": (*api2).innerProductOp,
	"matmul":        (*api2).matmulOp,
	"pooling":       (*api2).poolingOp,
	"eltwise":       (*api2).eltwiseOp,
}

func (a *api2) convOp(p Problem) (opDesc, error) {
	s, err := parse2d(p.Descriptor, true)
	if err != nil {
		return opDesc{}, err
	}
	var wshape []int64
	if s.g > 1 {
		wshape = []int64{s.g, s.oc / s.g, s.ic / s.g, s.k[0], s.k[1]}
	} else {
		wshape = []int64{s.oc, s.ic, s.k[0], s.k[1]}
	}
	src, e1 := a.md([]int64{s.mb, s.ic, s.i[0], s.i[1]}, tagValues[p.SrcLayout()])
	wei, e2 := a.md(wshape, dnnlFormatAny)
	bia, e3 := a.md([]int64{s.oc}, dnnlTagA)
	dst, e4 := a.md([]int64{s.mb, s.oc, s.o[0], s.o[1]}, tagValues[p.Layout])
	if err := errors.Join(e1, e2, e3, e4); err != nil {
		return opDesc{}, err
	}
	strides, dil, padL, padR, _ := s.windows()
	op := newOpBuf(convDescSize)
	return opDesc{
		op:     op,
		status: a.convInit(op, dnnlForwardInference, dnnlConvolutionDirect, src, wei, bia, dst, &strides, &dil, &padL, &padR),
		call:   "dnnl_dilated_convolution_forward_desc_init",
		argIDs: []int{argSrc, argWeights, argBias, argDst},
	}, nil
}

func (a *api2) innerProductOp(p Problem) (opDesc, error) {
	d, err := dnn.ParseDescriptor(p.Descriptor)
	if err != nil {
		return opDesc{}, err
	}
	if !d.Has("mb", "ic", "oc") || d.Has("ih") || d.Has("iw") || d.Has("id") {
		return opDesc{}, fmt.Errorf("%w: %q: the harness runs 2D inner products (mb, ic, oc)", ErrProblem, p.Descriptor)
	}
	mb, ic, oc := int64(d["mb"]), int64(d["ic"]), int64(d["oc"])
	src, e1 := a.md([]int64{mb, ic}, dnnlTagAB)
	wei, e2 := a.md([]int64{oc, ic}, dnnlFormatAny)
	bia, e3 := a.md([]int64{oc}, dnnlTagA)
	dst, e4 := a.md([]int64{mb, oc}, dnnlTagAB)
	if err := errors.Join(e1, e2, e3, e4); err != nil {
		return opDesc{}, err
	}
	op := newOpBuf(ipDescSize)
	return opDesc{
		op:     op,
		status: a.ipInit(op, dnnlForwardInference, src, wei, bia, dst),
		call:   "dnnl_inner_product_forward_desc_init",
		argIDs: []int{argSrc, argWeights, argBias, argDst},
	}, nil
}

func (a *api2) matmulOp(p Problem) (opDesc, error) {
	parts, err := dnn.Dims(p.Descriptor)
	if err != nil {
		return opDesc{}, err
	}
	n := len(parts[0])
	if len(parts) < 2 || (n != 2 && n != 3) || len(parts[1]) != n || parts[0][n-1] != parts[1][n-2] {
		return opDesc{}, fmt.Errorf("%w: %q: want MxK:KxN or BxMxK:BxKxN", ErrProblem, p.Descriptor)
	}
	t := int32(dnnlTagAB)
	if n == 3 {
		t = dnnlTagABC
	}
	dshape := append(append([]int64(nil), parts[0][:n-1]...), parts[1][n-1])
	src, e1 := a.md(parts[0], t)
	wei, e2 := a.md(parts[1], t)
	dst, e3 := a.md(dshape, t)
	if err := errors.Join(e1, e2, e3); err != nil {
		return opDesc{}, err
	}
	op := newOpBuf(matmulDescSize)
	return opDesc{
		op:     op,
		status: a.matmulInit(op, src, wei, nil, dst),
		call:   "dnnl_matmul_desc_init",
		argIDs: []int{argSrc, argWeights, argDst},
	}, nil
}

func (a *api2) poolingOp(p Problem) (opDesc, error) {
	s, err := parse2d(p.Descriptor, false)
	if err != nil {
		return opDesc{}, err
	}
	tag := tagValues[p.Layout]
	src, e1 := a.md([]int64{s.mb, s.ic, s.i[0], s.i[1]}, tag)
	dst, e2 := a.md([]int64{s.mb, s.ic, s.o[0], s.o[1]}, tag)
	if err := errors.Join(e1, e2); err != nil {
		return opDesc{}, err
	}
	strides, dil, padL, padR, kernel := s.windows()
	op := newOpBuf(poolDescSize)
	return opDesc{
		op:     op,
		status: a.poolInit(op, dnnlForwardInference, algValues[p.Alg], src, dst, &strides, &kernel, &dil, &padL, &padR),
		call:   "dnnl_pooling_v2_forward_desc_init",
		argIDs: []int{argSrc, argDst, argWorkspace},
	}, nil
}

func (a *api2) eltwiseOp(p Problem) (opDesc, error) {
	parts, err := dnn.Dims(p.Descriptor)
	if err != nil {
		return opDesc{}, err
	}
	if len(parts) != 1 || len(parts[0]) != 4 {
		return opDesc{}, fmt.Errorf("%w: %q: the harness runs 4D eltwise problems (NxCxHxW)", ErrProblem, p.Descriptor)
	}
	data, err := a.md(parts[0], tagValues[p.Layout])
	if err != nil {
		return opDesc{}, err
	}
	op := newOpBuf(eltwiseSize)
	return opDesc{
		op:     op,
		status: a.eltwiseInit(op, dnnlForwardInference, algValues[p.Alg], data, 0, 0),
		call:   "dnnl_eltwise_forward_desc_init",
		argIDs: []int{argSrc, argDst},
	}, nil
}

func (a *api2) create(p Problem) (primitive, error) {
	build, ok := opBuilders[p.Kind]
	if !ok {
		return nil, fmt.Errorf("%w: kind %q", ErrProblem, p.Kind)
	}
	d, err := build(a, p)
	if err != nil {
		return nil, err
	}
	if d.status != dnnlSuccess {
		return nil, fmt.Errorf("%s: %w", p, statusError(d.call, d.status))
	}
	pr := &prim2{a: a}
	if st := a.pdCreate(&pr.pd, d.op, 0, a.engine, 0); st != dnnlSuccess {
		return nil, fmt.Errorf("%s: %w", p, statusError("dnnl_primitive_desc_create", st))
	}
	runtime.KeepAlive(d.op)
	var impl unsafe.Pointer
	if a.pdQuery(pr.pd, dnnlQueryImplInfoStr, 0, unsafe.Pointer(&impl)) == dnnlSuccess {
		pr.impl = cString(impl)
	}
	if st := a.primCreate(&pr.prim, pr.pd); st != dnnlSuccess {
		pr.close()
		return nil, fmt.Errorf("%s: %w", p, statusError("dnnl_primitive_create", st))
	}
	for _, id := range d.argIDs {
		md := a.pdQueryMD(pr.pd, dnnlQueryExecArgMD, int32(id))
		if md == 0 || a.mdSize(md) == 0 {
			continue // an argument this primitive does not take (a max pool's inference workspace)
		}
		var m uintptr
		if st := a.memCreate(&m, md, a.engine, ^uintptr(0)); st != dnnlSuccess { // DNNL_MEMORY_ALLOCATE
			pr.close()
			return nil, fmt.Errorf("%s: %w", p, statusError("dnnl_memory_create", st))
		}
		pr.args = append(pr.args, execArg{arg: int32(id), mem: m})
		fill(a, m, md)
	}
	return pr, nil
}

// fill writes small normal numbers into a memory: the library allocates it
// uninitialised, and denormals or NaNs would change the kernels' speed.
func fill(a *api2, m, md uintptr) {
	var h unsafe.Pointer
	if a.memHandle(m, &h) != dnnlSuccess || h == nil {
		return
	}
	n := int(a.mdSize(md) / 4)
	data := unsafe.Slice((*float32)(h), n)
	for i := range data {
		data[i] = float32(math.Sin(float64(i%1021))) * 0.5
	}
}

func (p *prim2) implementation() string { return p.impl }

func (p *prim2) execute() error {
	if st := p.a.execute(p.prim, p.a.stream, int32(len(p.args)), unsafe.Pointer(&p.args[0])); st != dnnlSuccess {
		return statusError("dnnl_primitive_execute", st)
	}
	return nil
}

func (p *prim2) wait() error {
	if st := p.a.streamWait(p.a.stream); st != dnnlSuccess {
		return statusError("dnnl_stream_wait", st)
	}
	return nil
}

func (p *prim2) close() {
	for _, arg := range p.args {
		p.a.memDestroy(arg.mem)
	}
	if p.prim != 0 {
		p.a.primDestroy(p.prim)
	}
	if p.pd != 0 {
		p.a.pdDestroy(p.pd)
	}
}
