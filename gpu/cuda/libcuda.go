package cuda

import (
	"fmt"
	"strings"
	"unsafe"

	"github.com/ebitengine/purego"
)

// Libraries are the names of the driver library tried in order: the
// versioned name the driver package installs, then the development link.
var Libraries = []string{"libcuda.so.1", "libcuda.so"}

// libcuda forwards Driver's methods to the library's symbols.
type libcuda struct {
	init             func(flags uint32) Result
	driverGetVersion func(v *int32) Result
	deviceGetCount   func(n *int32) Result
	deviceGet        func(dev *int32, ordinal int32) Result
	deviceGetName    func(name *byte, size int32, dev int32) Result
	deviceGetAttr    func(v *int32, attr Attribute, dev int32) Result
	deviceTotalMem   func(bytes *uint64, dev int32) Result
	ctxCreate        func(ctx *uintptr, flags uint32, dev int32) Result
	ctxDestroy       func(ctx uintptr) Result
	ctxSynchronize   func() Result
	moduleLoadDataEx func(mod *uintptr, image *byte, n uint32, opts *int32, vals *uintptr) Result
	moduleUnload     func(mod uintptr) Result
	moduleGetFunc    func(fn *uintptr, mod uintptr, name *byte) Result
	launchKernel     func(fn uintptr, gx, gy, gz, bx, by, bz, shared uint32, stream uintptr, params, extra *unsafe.Pointer) Result
	eventCreate      func(ev *uintptr, flags uint32) Result
	eventRecord      func(ev, stream uintptr) Result
	eventSynchronize func(ev uintptr) Result
	eventElapsed     func(ms *float32, start, end uintptr) Result
	eventDestroy     func(ev uintptr) Result
	memAlloc         func(p *uint64, bytes uint64) Result
	memFree          func(p uint64) Result
	memsetD32        func(p uint64, v uint32, n uint64) Result
	memcpyDtoH       func(dst *byte, src uint64, bytes uint64) Result
	getErrorName     func(r Result, s **byte) Result
}

// symbols names each function's symbol: the _v2 ones where cuda.h maps
// the plain name to them.
func (l *libcuda) symbols() []struct {
	fn   any
	name string
} {
	return []struct {
		fn   any
		name string
	}{
		{&l.init, "cuInit"},
		{&l.driverGetVersion, "cuDriverGetVersion"},
		{&l.deviceGetCount, "cuDeviceGetCount"},
		{&l.deviceGet, "cuDeviceGet"},
		{&l.deviceGetName, "cuDeviceGetName"},
		{&l.deviceGetAttr, "cuDeviceGetAttribute"},
		{&l.deviceTotalMem, "cuDeviceTotalMem_v2"},
		{&l.ctxCreate, "cuCtxCreate_v2"},
		{&l.ctxDestroy, "cuCtxDestroy_v2"},
		{&l.ctxSynchronize, "cuCtxSynchronize"},
		{&l.moduleLoadDataEx, "cuModuleLoadDataEx"},
		{&l.moduleUnload, "cuModuleUnload"},
		{&l.moduleGetFunc, "cuModuleGetFunction"},
		{&l.launchKernel, "cuLaunchKernel"},
		{&l.eventCreate, "cuEventCreate"},
		{&l.eventRecord, "cuEventRecord"},
		{&l.eventSynchronize, "cuEventSynchronize"},
		{&l.eventElapsed, "cuEventElapsedTime"},
		{&l.eventDestroy, "cuEventDestroy_v2"},
		{&l.memAlloc, "cuMemAlloc_v2"},
		{&l.memFree, "cuMemFree_v2"},
		{&l.memsetD32, "cuMemsetD32_v2"},
		{&l.memcpyDtoH, "cuMemcpyDtoH_v2"},
		{&l.getErrorName, "cuGetErrorName"},
	}
}

// Load opens the driver library, the first of Libraries that loads, and
// binds its symbols. It returns an error wrapping ErrNoDriver when none
// loads or a symbol is missing.
func Load() (Driver, error) {
	var errs []string
	for _, name := range Libraries {
		h, err := purego.Dlopen(name, purego.RTLD_NOW|purego.RTLD_GLOBAL)
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		l := &libcuda{}
		for _, s := range l.symbols() {
			if _, err := purego.Dlsym(h, s.name); err != nil {
				return nil, fmt.Errorf("%w: %s has no %s", ErrNoDriver, name, s.name)
			}
			purego.RegisterLibFunc(s.fn, h, s.name)
		}
		return l, nil
	}
	return nil, fmt.Errorf("%w: %s", ErrNoDriver, strings.Join(errs, "; "))
}

func (l *libcuda) Init(flags uint32) Result         { return l.init(flags) }
func (l *libcuda) DriverGetVersion(v *int32) Result { return l.driverGetVersion(v) }
func (l *libcuda) DeviceGetCount(n *int32) Result   { return l.deviceGetCount(n) }
func (l *libcuda) DeviceGet(dev *int32, ordinal int32) Result {
	return l.deviceGet(dev, ordinal)
}
func (l *libcuda) DeviceGetName(name *byte, size int32, dev int32) Result {
	return l.deviceGetName(name, size, dev)
}
func (l *libcuda) DeviceGetAttribute(v *int32, attr Attribute, dev int32) Result {
	return l.deviceGetAttr(v, attr, dev)
}
func (l *libcuda) DeviceTotalMem(bytes *uint64, dev int32) Result {
	return l.deviceTotalMem(bytes, dev)
}
func (l *libcuda) CtxCreate(ctx *uintptr, flags uint32, dev int32) Result {
	return l.ctxCreate(ctx, flags, dev)
}
func (l *libcuda) CtxDestroy(ctx uintptr) Result { return l.ctxDestroy(ctx) }
func (l *libcuda) CtxSynchronize() Result        { return l.ctxSynchronize() }
func (l *libcuda) ModuleLoadDataEx(mod *uintptr, image *byte, n uint32, opts *int32, vals *uintptr) Result {
	return l.moduleLoadDataEx(mod, image, n, opts, vals)
}
func (l *libcuda) ModuleUnload(mod uintptr) Result { return l.moduleUnload(mod) }
func (l *libcuda) ModuleGetFunction(fn *uintptr, mod uintptr, name *byte) Result {
	return l.moduleGetFunc(fn, mod, name)
}
func (l *libcuda) LaunchKernel(fn uintptr, gx, gy, gz, bx, by, bz, shared uint32, stream uintptr, params, extra *unsafe.Pointer) Result {
	return l.launchKernel(fn, gx, gy, gz, bx, by, bz, shared, stream, params, extra)
}
func (l *libcuda) EventCreate(ev *uintptr, flags uint32) Result { return l.eventCreate(ev, flags) }
func (l *libcuda) EventRecord(ev, stream uintptr) Result        { return l.eventRecord(ev, stream) }
func (l *libcuda) EventSynchronize(ev uintptr) Result           { return l.eventSynchronize(ev) }
func (l *libcuda) EventElapsedTime(ms *float32, start, end uintptr) Result {
	return l.eventElapsed(ms, start, end)
}
func (l *libcuda) EventDestroy(ev uintptr) Result                { return l.eventDestroy(ev) }
func (l *libcuda) MemAlloc(p *uint64, bytes uint64) Result       { return l.memAlloc(p, bytes) }
func (l *libcuda) MemFree(p uint64) Result                       { return l.memFree(p) }
func (l *libcuda) MemsetD32(p uint64, v uint32, n uint64) Result { return l.memsetD32(p, v, n) }
func (l *libcuda) MemcpyDtoH(dst *byte, src uint64, bytes uint64) Result {
	return l.memcpyDtoH(dst, src, bytes)
}
func (l *libcuda) GetErrorName(r Result, s **byte) Result { return l.getErrorName(r, s) }
