// Package cudatest is a fake CUDA driver for tests: devices described by
// their attributes, PTX modules whose entries and parameters are read from
// the text, and a simulated clock that launches advance by a model's time,
// so that events time them as on a device.
package cudatest

import (
	"regexp"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/rprof/rprof/gpu/cuda"
)

// Device is a fake device.
type Device struct {
	Name     string
	Attrs    map[cuda.Attribute]int32
	TotalMem uint64
}

// H100SXM is a device with the attributes an H100 SXM5 80GB reports
// (NVIDIA's H100 datasheet and deviceQuery: 132 SMs, 1980 MHz boost clock,
// 2619 MHz memory clock, 5120-bit HBM3 bus, 50 MiB L2, compute
// capability 9.0).
func H100SXM() Device {
	return Device{
		Name: "NVIDIA H100 80GB HBM3",
		Attrs: map[cuda.Attribute]int32{
			cuda.AttrCCMajor: 9, cuda.AttrCCMinor: 0,
			cuda.AttrMultiprocessors: 132, cuda.AttrClockRate: 1980000,
			cuda.AttrMemoryClockRate: 2619000, cuda.AttrMemoryBusWidth: 5120,
			cuda.AttrL2CacheSize: 50 << 20, cuda.AttrSharedPerSM: 228 << 10,
			cuda.AttrMaxThreadsPerSM: 2048, cuda.AttrMaxThreadsPerBlock: 1024,
			cuda.AttrMaxBlocksPerSM: 32, cuda.AttrWarpSize: 32,
		},
		TotalMem: 80 << 30,
	}
}

// Launch is one kernel launch the fake saw.
type Launch struct {
	Kernel string
	Grid   cuda.Grid
	Params []uint64
}

// Fake implements cuda.Driver.
type Fake struct {
	Devices []Device
	// Fail makes the named call (the C name: "cuInit", "cuCtxCreate_v2",
	// ...) return the result instead of running.
	Fail map[string]cuda.Result
	// JITLog, when set, makes every module load fail as an invalid PTX
	// with this error log.
	JITLog string
	// KernelTime is the simulated time of one launch; nil is 1 ms.
	KernelTime func(l Launch) time.Duration
	// OnCall, when set, is called with each call's C name as it runs.
	OnCall func(name string)
	// OnLaunch, when set, is called with each launch, its start on the
	// simulated clock and its time, and may write the kernel's results
	// (Write).
	OnLaunch func(l Launch, start, took time.Duration)

	mu       sync.Mutex
	next     uintptr
	clock    time.Duration
	params   map[string]int // entry name: parameter count
	modules  map[uintptr][]string
	funcs    map[uintptr]string
	events   map[uintptr]time.Duration
	allocs   map[uint64]uint64
	backing  map[uint64][]byte // allocations of up to backedBytes
	contexts int
	launches []Launch
}

// Launches returns the launches so far.
func (f *Fake) Launches() []Launch {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Launch(nil), f.launches...)
}

// Leaks says what is still allocated: contexts, modules, device memory
// and events.
func (f *Fake) Leaks() (contexts, modules, allocs, events int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.contexts, len(f.modules), len(f.allocs), len(f.events)
}

// call is the prologue of every call: it notes the call and returns the
// forced result, if any.
func (f *Fake) call(name string) (cuda.Result, bool) {
	if f.OnCall != nil {
		f.OnCall(name)
	}
	r, ok := f.Fail[name]
	return r, ok
}

func (f *Fake) handle() uintptr {
	f.next++
	return f.next
}

func (f *Fake) device(d int32) (Device, cuda.Result) {
	if d < 0 || int(d) >= len(f.Devices) {
		return Device{}, 101 // CUDA_ERROR_INVALID_DEVICE
	}
	return f.Devices[d], cuda.Success
}

func (f *Fake) Init(uint32) cuda.Result {
	if r, ok := f.call("cuInit"); ok {
		return r
	}
	if len(f.Devices) == 0 {
		return cuda.ErrorNoDevice
	}
	return cuda.Success
}

func (f *Fake) DriverGetVersion(v *int32) cuda.Result {
	if r, ok := f.call("cuDriverGetVersion"); ok {
		return r
	}
	*v = 12040
	return cuda.Success
}

func (f *Fake) DeviceGetCount(n *int32) cuda.Result {
	if r, ok := f.call("cuDeviceGetCount"); ok {
		return r
	}
	*n = int32(len(f.Devices))
	return cuda.Success
}

func (f *Fake) DeviceGet(dev *int32, ordinal int32) cuda.Result {
	if r, ok := f.call("cuDeviceGet"); ok {
		return r
	}
	if _, r := f.device(ordinal); r != cuda.Success {
		return r
	}
	*dev = ordinal
	return cuda.Success
}

func (f *Fake) DeviceGetName(name *byte, size int32, dev int32) cuda.Result {
	if r, ok := f.call("cuDeviceGetName"); ok {
		return r
	}
	d, r := f.device(dev)
	if r != cuda.Success {
		return r
	}
	buf := unsafe.Slice(name, size)
	n := copy(buf[:size-1], d.Name)
	buf[n] = 0
	return cuda.Success
}

func (f *Fake) DeviceGetAttribute(v *int32, attr cuda.Attribute, dev int32) cuda.Result {
	if r, ok := f.call("cuDeviceGetAttribute"); ok {
		return r
	}
	d, r := f.device(dev)
	if r != cuda.Success {
		return r
	}
	*v = d.Attrs[attr]
	return cuda.Success
}

func (f *Fake) DeviceTotalMem(bytes *uint64, dev int32) cuda.Result {
	if r, ok := f.call("cuDeviceTotalMem_v2"); ok {
		return r
	}
	d, r := f.device(dev)
	if r != cuda.Success {
		return r
	}
	*bytes = d.TotalMem
	return cuda.Success
}

func (f *Fake) CtxCreate(ctx *uintptr, _ uint32, dev int32) cuda.Result {
	if r, ok := f.call("cuCtxCreate_v2"); ok {
		return r
	}
	if _, r := f.device(dev); r != cuda.Success {
		return r
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.contexts++
	*ctx = f.handle()
	return cuda.Success
}

func (f *Fake) CtxDestroy(uintptr) cuda.Result {
	if r, ok := f.call("cuCtxDestroy_v2"); ok {
		return r
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.contexts--
	return cuda.Success
}

func (f *Fake) CtxSynchronize() cuda.Result {
	r, _ := f.call("cuCtxSynchronize")
	return r
}

// entryRE finds a PTX entry and its parameter list.
var entryRE = regexp.MustCompile(`\.entry\s+(\w+)\s*\(([^)]*)\)`)

func (f *Fake) ModuleLoadDataEx(mod *uintptr, image *byte, n uint32, opts *int32, vals *uintptr) cuda.Result {
	if r, ok := f.call("cuModuleLoadDataEx"); ok {
		return r
	}
	if f.JITLog != "" {
		writeLog(f.JITLog, unsafe.Slice(opts, n), unsafe.Slice(vals, n))
		return cuda.ErrorInvalidPTX
	}
	text := unsafeString(image)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.params == nil {
		f.params = map[string]int{}
		f.modules = map[uintptr][]string{}
	}
	var names []string
	for _, m := range entryRE.FindAllStringSubmatch(text, -1) {
		names = append(names, m[1])
		f.params[m[1]] = strings.Count(m[2], ".param")
	}
	*mod = f.handle()
	f.modules[*mod] = names
	return cuda.Success
}

// writeLog writes log to the error log buffer the options give, and its
// length (with the NUL) in place of the buffer's size, as the driver does.
func writeLog(log string, opts []int32, vals []uintptr) {
	var buf, size = -1, -1
	for i, o := range opts {
		switch o {
		case 5: // CU_JIT_ERROR_LOG_BUFFER
			buf = i
		case 6: // CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES
			size = i
		}
	}
	if buf < 0 || size < 0 {
		return
	}
	// The slot holds the address of the caller's pinned buffer.
	dst := unsafe.Slice(*(**byte)(unsafe.Pointer(&vals[buf])), vals[size])
	n := copy(dst[:len(dst)-1], log)
	dst[n] = 0
	vals[size] = uintptr(n + 1)
}

func unsafeString(p *byte) string {
	var n int
	for *(*byte)(unsafe.Add(unsafe.Pointer(p), n)) != 0 {
		n++
	}
	return string(unsafe.Slice(p, n))
}

func (f *Fake) ModuleUnload(mod uintptr) cuda.Result {
	if r, ok := f.call("cuModuleUnload"); ok {
		return r
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.modules, mod)
	return cuda.Success
}

func (f *Fake) ModuleGetFunction(fn *uintptr, mod uintptr, name *byte) cuda.Result {
	if r, ok := f.call("cuModuleGetFunction"); ok {
		return r
	}
	want := unsafeString(name)
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, n := range f.modules[mod] {
		if n == want {
			if f.funcs == nil {
				f.funcs = map[uintptr]string{}
			}
			*fn = f.handle()
			f.funcs[*fn] = n
			return cuda.Success
		}
	}
	return cuda.ErrorNotFound
}

func (f *Fake) LaunchKernel(fn uintptr, gx, _, _, bx, _, _, shared uint32, _ uintptr, params, _ *unsafe.Pointer) cuda.Result {
	if r, ok := f.call("cuLaunchKernel"); ok {
		return r
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	name, ok := f.funcs[fn]
	if !ok {
		return 400 // CUDA_ERROR_INVALID_HANDLE
	}
	l := Launch{Kernel: name, Grid: cuda.Grid{Blocks: gx, Threads: bx, SharedBytes: shared}}
	for _, p := range unsafe.Slice(params, f.params[name]) {
		l.Params = append(l.Params, *(*uint64)(p))
	}
	f.launches = append(f.launches, l)
	took := time.Millisecond
	if f.KernelTime != nil {
		took = f.KernelTime(l)
	}
	if f.OnLaunch != nil {
		f.OnLaunch(l, f.clock, took)
	}
	f.clock += took
	return cuda.Success
}

func (f *Fake) EventCreate(ev *uintptr, _ uint32) cuda.Result {
	if r, ok := f.call("cuEventCreate"); ok {
		return r
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.events == nil {
		f.events = map[uintptr]time.Duration{}
	}
	*ev = f.handle()
	f.events[*ev] = -1
	return cuda.Success
}

func (f *Fake) EventRecord(ev, _ uintptr) cuda.Result {
	if r, ok := f.call("cuEventRecord"); ok {
		return r
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.events[ev] = f.clock
	return cuda.Success
}

func (f *Fake) EventSynchronize(uintptr) cuda.Result {
	r, _ := f.call("cuEventSynchronize")
	return r
}

func (f *Fake) EventElapsedTime(ms *float32, start, end uintptr) cuda.Result {
	if r, ok := f.call("cuEventElapsedTime"); ok {
		return r
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	a, b := f.events[start], f.events[end]
	if a < 0 || b < 0 {
		return 600 // CUDA_ERROR_NOT_READY
	}
	*ms = float32(float64(b-a) / float64(time.Millisecond))
	return cuda.Success
}

func (f *Fake) EventDestroy(ev uintptr) cuda.Result {
	if r, ok := f.call("cuEventDestroy_v2"); ok {
		return r
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.events, ev)
	return cuda.Success
}

func (f *Fake) MemAlloc(p *uint64, bytes uint64) cuda.Result {
	if r, ok := f.call("cuMemAlloc_v2"); ok {
		return r
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.allocs == nil {
		f.allocs = map[uint64]uint64{}
	}
	*p = uint64(f.handle()) << 32
	f.allocs[*p] = bytes
	if bytes <= backedBytes {
		if f.backing == nil {
			f.backing = map[uint64][]byte{}
		}
		f.backing[*p] = make([]byte, bytes)
	}
	return cuda.Success
}

func (f *Fake) MemFree(p uint64) cuda.Result {
	if r, ok := f.call("cuMemFree_v2"); ok {
		return r
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.allocs[p]; !ok {
		return 1 // CUDA_ERROR_INVALID_VALUE
	}
	delete(f.allocs, p)
	delete(f.backing, p)
	return cuda.Success
}

func (f *Fake) MemsetD32(uint64, uint32, uint64) cuda.Result {
	r, _ := f.call("cuMemsetD32_v2")
	return r
}

// backedBytes is the largest allocation whose contents the fake keeps.
const backedBytes = 1 << 20

// Write puts b in device memory at p, within a kept allocation (as a
// kernel would, from OnLaunch); false when p is not in one.
func (f *Fake) Write(p uint64, b []byte) bool {
	for base, mem := range f.backing {
		if p >= base && p+uint64(len(b)) <= base+uint64(len(mem)) {
			copy(mem[p-base:], b)
			return true
		}
	}
	return false
}

func (f *Fake) MemcpyDtoH(dst *byte, src uint64, bytes uint64) cuda.Result {
	if r, ok := f.call("cuMemcpyDtoH_v2"); ok {
		return r
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	out := unsafe.Slice(dst, bytes)
	for base, mem := range f.backing {
		if src >= base && src+bytes <= base+uint64(len(mem)) {
			copy(out, mem[src-base:])
			return cuda.Success
		}
	}
	clear(out) // memory the fake does not keep reads as zeros
	return cuda.Success
}

// names are the driver's names of the results the fake returns.
var names = map[cuda.Result][]byte{
	cuda.ErrorNoDevice:   []byte("CUDA_ERROR_NO_DEVICE\x00"),
	cuda.ErrorInvalidPTX: []byte("CUDA_ERROR_INVALID_PTX\x00"),
	cuda.ErrorNotFound:   []byte("CUDA_ERROR_NOT_FOUND\x00"),
	2:                    []byte("CUDA_ERROR_OUT_OF_MEMORY\x00"),
}

func (f *Fake) GetErrorName(r cuda.Result, s **byte) cuda.Result {
	n, ok := names[r]
	if !ok {
		return 1 // CUDA_ERROR_INVALID_VALUE
	}
	*s = &n[0]
	return cuda.Success
}
