package dnnbench

import (
	"fmt"
	"math"
	"strings"
	"unsafe"

	"github.com/ebitengine/purego"
)

// Enumerators common to the 2.x and 3.x C APIs (checked by the tests
// against the headers of both).
const (
	dnnlSuccess           = 0
	dnnlCPU               = 1
	dnnlF32               = 3
	dnnlForwardInference  = 96
	dnnlConvolutionDirect = 1
	dnnlStreamDefault     = 1
	dnnlQueryImplInfoStr  = 8
	dnnlQueryExecArgMD    = 255
	dnnlBlocked           = 2 // dnnl_format_kind_t
	runtimeOMP            = 2
)

type execArg struct { // dnnl_exec_arg_t
	arg int32
	_   int32
	mem uintptr
}

// generation is what differs between the C API generations: making a
// primitive descriptor, and reading the layout of a memory descriptor the
// library returned.
type generation interface {
	// primitiveDesc creates the primitive descriptor of p.
	primitiveDesc(c *core, p Problem, g geometry) (uintptr, error)
	// blocking reads a memory descriptor's layout; ok is false when it
	// is not blocked.
	blocking(md unsafe.Pointer) (b blocking, ok bool)
}

// core binds the calls the 2.x and 3.x C APIs share, with the same
// signatures, and implements api with a generation for the rest.
type core struct {
	ver    Version
	gen    generation
	engine uintptr
	stream uintptr

	pdQueryMD        func(pd uintptr, what, index int32) unsafe.Pointer
	pdQuery          func(pd uintptr, what, index int32, result unsafe.Pointer) int32
	pdDestroy        func(pd uintptr) int32
	primCreate       func(p *uintptr, pd uintptr) int32
	primDestroy      func(p uintptr) int32
	memCreate        func(m *uintptr, md unsafe.Pointer, engine uintptr, handle uintptr) int32
	memHandle        func(m uintptr, h *unsafe.Pointer) int32
	memDestroy       func(m uintptr) int32
	mdSize           func(md unsafe.Pointer) uint64
	execute          func(p, stream uintptr, nargs int32, args unsafe.Pointer) int32
	streamWait       func(s uintptr) int32
	streamDestroy    func(s uintptr) int32
	engineDestroy    func(e uintptr) int32
	engineCreate     func(e *uintptr, kind int32, index uint64) int32
	streamCreate     func(s *uintptr, e uintptr, flags uint32) int32
	ompSetNumThreads func(n int32)
	ompGetMaxThreads func() int32
}

// symbol is a C function to bind: a pointer to the Go function variable
// and the symbol's name.
type symbol struct {
	fn   any
	name string
}

// bind registers every symbol of lib, or says which one is missing.
func bind(lib uintptr, ver Version, syms []symbol) error {
	for _, s := range syms {
		if _, err := purego.Dlsym(lib, s.name); err != nil {
			return fmt.Errorf("oneDNN %s: %s missing: %w", ver, s.name, err)
		}
		purego.RegisterLibFunc(s.fn, lib, s.name)
	}
	return nil
}

// Open loads the first of Libraries that loads, reads its dnnl_version()
// and binds the C API of that major version. When none loads, the error
// gives each one's reason (not installed, or a runtime too old for it).
func Open() (*Library, error) {
	var errs []string
	for _, name := range Libraries {
		lib, err := purego.Dlopen(name, purego.RTLD_NOW|purego.RTLD_GLOBAL)
		if err == nil {
			return load(lib, name)
		}
		errs = append(errs, err.Error())
	}
	return nil, fmt.Errorf("%w: %s", ErrNoLibrary, strings.Join(errs, "; "))
}

// OpenFile is Open for the library of a name or path.
func OpenFile(name string) (*Library, error) {
	lib, err := purego.Dlopen(name, purego.RTLD_NOW|purego.RTLD_GLOBAL)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoLibrary, err)
	}
	return load(lib, name)
}

func load(lib uintptr, name string) (*Library, error) {
	var version func() unsafe.Pointer
	if _, err := purego.Dlsym(lib, "dnnl_version"); err != nil {
		return nil, fmt.Errorf("%w: %s has no dnnl_version: %v", ErrNoLibrary, name, err)
	}
	purego.RegisterLibFunc(&version, lib, "dnnl_version")
	c := &core{ver: readVersion(version())}
	var err error
	switch c.ver.Major {
	case 2:
		c.gen, err = bind2(lib, c.ver)
	case 3:
		c.gen, err = bind3(lib, c.ver)
	default:
		return nil, &VersionError{Version: c.ver}
	}
	if err != nil {
		return nil, err
	}
	if err := c.bind(lib); err != nil {
		return nil, err
	}
	if st := c.engineCreate(&c.engine, dnnlCPU, 0); st != dnnlSuccess {
		return nil, statusError("dnnl_engine_create", st)
	}
	if st := c.streamCreate(&c.stream, c.engine, dnnlStreamDefault); st != dnnlSuccess {
		c.engineDestroy(c.engine)
		return nil, statusError("dnnl_stream_create", st)
	}
	return &Library{api: c}, nil
}

func (c *core) bind(lib uintptr) error {
	err := bind(lib, c.ver, []symbol{
		{&c.pdQueryMD, "dnnl_primitive_desc_query_md"},
		{&c.pdQuery, "dnnl_primitive_desc_query"},
		{&c.pdDestroy, "dnnl_primitive_desc_destroy"},
		{&c.primCreate, "dnnl_primitive_create"},
		{&c.primDestroy, "dnnl_primitive_destroy"},
		{&c.memCreate, "dnnl_memory_create"},
		{&c.memHandle, "dnnl_memory_get_data_handle"},
		{&c.memDestroy, "dnnl_memory_destroy"},
		{&c.mdSize, "dnnl_memory_desc_get_size"},
		{&c.execute, "dnnl_primitive_execute"},
		{&c.streamWait, "dnnl_stream_wait"},
		{&c.streamDestroy, "dnnl_stream_destroy"},
		{&c.engineDestroy, "dnnl_engine_destroy"},
		{&c.engineCreate, "dnnl_engine_create"},
		{&c.streamCreate, "dnnl_stream_create"},
	})
	if err != nil {
		return err
	}
	if c.ver.CPURuntime == "OpenMP" {
		// The library's OpenMP runtime, already loaded with it.
		if omp, err := purego.Dlopen("libgomp.so.1", purego.RTLD_NOW|purego.RTLD_GLOBAL); err == nil {
			purego.RegisterLibFunc(&c.ompSetNumThreads, omp, "omp_set_num_threads")
			purego.RegisterLibFunc(&c.ompGetMaxThreads, omp, "omp_get_max_threads")
		}
	}
	return nil
}

// readVersion reads the dnnl_version_t at p (the same in 2.x and 3.x):
// three ints, the hash string at offset 16, the CPU runtime at 24.
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

// dimsAt reads n of the dnnl_dims_t at p.
func dimsAt(p unsafe.Pointer, n int) []int64 {
	return append([]int64(nil), unsafe.Slice((*int64)(p), n)...)
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

func (c *core) version() Version { return c.ver }

func (c *core) setThreads(n int) error {
	if c.ompSetNumThreads == nil {
		return fmt.Errorf("%w: oneDNN %s uses the %s runtime; only OpenMP's can be set here", ErrThreadsUnset, c.ver, c.ver.CPURuntime)
	}
	c.ompSetNumThreads(int32(n))
	return nil
}

func (c *core) maxThreads() int {
	if c.ompGetMaxThreads == nil {
		return 0
	}
	return int(c.ompGetMaxThreads())
}

func (c *core) close() {
	c.streamDestroy(c.stream)
	c.engineDestroy(c.engine)
}

// argNames are the verbose trace's names of the execution arguments.
var argNames = map[int]string{argSrc: "src", argWeights: "wei", argBias: "bia", argDst: "dst"}

func (c *core) create(p Problem) (primitive, error) {
	g, err := geometryOf(p)
	if err != nil {
		return nil, err
	}
	pr := &prim{c: c, layouts: map[string]string{}}
	if pr.pd, err = c.gen.primitiveDesc(c, p, g); err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	var impl unsafe.Pointer
	if c.pdQuery(pr.pd, dnnlQueryImplInfoStr, 0, unsafe.Pointer(&impl)) == dnnlSuccess {
		pr.impl = cString(impl)
	}
	if st := c.primCreate(&pr.prim, pr.pd); st != dnnlSuccess {
		pr.close()
		return nil, fmt.Errorf("%s: %w", p, statusError("dnnl_primitive_create", st))
	}
	for _, id := range g.args {
		md := c.pdQueryMD(pr.pd, dnnlQueryExecArgMD, int32(id))
		if md == nil || c.mdSize(md) == 0 {
			continue // an argument this primitive does not take (a max pool's inference workspace)
		}
		if b, ok := c.gen.blocking(md); ok && argNames[id] != "" {
			pr.layouts[argNames[id]] = b.tag()
		}
		var m uintptr
		if st := c.memCreate(&m, md, c.engine, ^uintptr(0)); st != dnnlSuccess { // DNNL_MEMORY_ALLOCATE
			pr.close()
			return nil, fmt.Errorf("%s: %w", p, statusError("dnnl_memory_create", st))
		}
		pr.args = append(pr.args, execArg{arg: int32(id), mem: m})
		c.fill(m, md)
	}
	return pr, nil
}

// fill writes small normal numbers into a memory: the library allocates it
// uninitialised, and denormals or NaNs would change the kernels' speed.
func (c *core) fill(m uintptr, md unsafe.Pointer) {
	var h unsafe.Pointer
	if c.memHandle(m, &h) != dnnlSuccess || h == nil {
		return
	}
	n := int(c.mdSize(md) / 4)
	data := unsafe.Slice((*float32)(h), n)
	for i := range data {
		data[i] = float32(math.Sin(float64(i%1021))) * 0.5
	}
}

// prim is a created primitive with its memory.
type prim struct {
	c    *core
	pd   uintptr
	prim uintptr
	args []execArg
	impl string
	// layouts are the format tags the library chose, by argument name.
	layouts map[string]string
}

func (p *prim) implementation() string { return p.impl }

func (p *prim) layout(arg string) string { return p.layouts[arg] }

func (p *prim) execute() error {
	if st := p.c.execute(p.prim, p.c.stream, int32(len(p.args)), unsafe.Pointer(&p.args[0])); st != dnnlSuccess {
		return statusError("dnnl_primitive_execute", st)
	}
	return nil
}

func (p *prim) wait() error {
	if st := p.c.streamWait(p.c.stream); st != dnnlSuccess {
		return statusError("dnnl_stream_wait", st)
	}
	return nil
}

func (p *prim) close() {
	for _, arg := range p.args {
		p.c.memDestroy(arg.mem)
	}
	if p.prim != 0 {
		p.c.primDestroy(p.prim)
	}
	if p.pd != 0 {
		p.c.pdDestroy(p.pd)
	}
}
