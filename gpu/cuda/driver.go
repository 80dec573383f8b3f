package cuda

import (
	"errors"
	"fmt"
	"strings"
	"unsafe"
)

// Result is a CUresult: 0 is success.
type Result int32

// The CUresults rprof tells apart (cuda.h).
const (
	Success          Result = 0
	ErrorNoDevice    Result = 100
	ErrorInvalidPTX  Result = 218
	ErrorNotFound    Result = 500
	ErrorLaunchFails Result = 719
)

// Attribute is a CUdevice_attribute.
type Attribute int32

// The device attributes rprof reads (cuda.h's CUdevice_attribute values).
const (
	AttrMaxThreadsPerBlock Attribute = 1
	AttrWarpSize           Attribute = 10
	AttrClockRate          Attribute = 13 // kHz, the SM clock's peak
	AttrMultiprocessors    Attribute = 16
	AttrMemoryClockRate    Attribute = 36 // kHz, the memory clock's peak
	AttrMemoryBusWidth     Attribute = 37 // bits
	AttrL2CacheSize        Attribute = 38 // bytes
	AttrMaxThreadsPerSM    Attribute = 39
	AttrCCMajor            Attribute = 75
	AttrCCMinor            Attribute = 76
	AttrSharedPerSM        Attribute = 81 // bytes
	AttrMaxBlocksPerSM     Attribute = 106
)

// JIT options of cuModuleLoadDataEx (cuda.h's CUjit_option values).
const (
	jitInfoLogBuffer      = 3
	jitInfoLogBufferSize  = 4
	jitErrorLogBuffer     = 5
	jitErrorLogBufferSize = 6
)

// Driver is the driver API's calls that rprof makes, in C's shape: out
// parameters are pointers and each call returns its CUresult. The library
// binding (Load) forwards each method to its symbol; tests use a fake.
type Driver interface {
	Init(flags uint32) Result
	DriverGetVersion(v *int32) Result
	DeviceGetCount(n *int32) Result
	DeviceGet(dev *int32, ordinal int32) Result
	DeviceGetName(name *byte, size int32, dev int32) Result
	DeviceGetAttribute(v *int32, attr Attribute, dev int32) Result
	DeviceTotalMem(bytes *uint64, dev int32) Result
	CtxCreate(ctx *uintptr, flags uint32, dev int32) Result
	CtxDestroy(ctx uintptr) Result
	CtxSynchronize() Result
	// ModuleLoadDataEx takes n options (opts) with their values (vals):
	// a log buffer's address, or a size, which the driver replaces with
	// the bytes it wrote.
	ModuleLoadDataEx(mod *uintptr, image *byte, n uint32, opts *int32, vals *uintptr) Result
	ModuleUnload(mod uintptr) Result
	ModuleGetFunction(fn *uintptr, mod uintptr, name *byte) Result
	LaunchKernel(fn uintptr, gx, gy, gz, bx, by, bz, shared uint32, stream uintptr, params, extra *unsafe.Pointer) Result
	EventCreate(ev *uintptr, flags uint32) Result
	EventRecord(ev, stream uintptr) Result
	EventSynchronize(ev uintptr) Result
	EventElapsedTime(ms *float32, start, end uintptr) Result
	EventDestroy(ev uintptr) Result
	MemAlloc(p *uint64, bytes uint64) Result
	MemFree(p uint64) Result
	MemsetD32(p uint64, v uint32, n uint64) Result
	MemcpyDtoH(dst *byte, src uint64, bytes uint64) Result
	// GetErrorName points s at the static name of r ("CUDA_ERROR_...").
	GetErrorName(r Result, s **byte) Result
}

// ErrNoDriver is returned when libcuda cannot be loaded.
var ErrNoDriver = errors.New("no CUDA driver")

// ErrNoDevice is returned when the driver finds no device.
var ErrNoDevice = errors.New("no CUDA device")

// ErrClosed is returned by calls on a closed Session.
var ErrClosed = errors.New("cuda: session closed")

// Error is a driver call that failed.
type Error struct {
	Call string // the driver function, "cuModuleGetFunction"
	Code Result
	Name string // the driver's name for Code, "" when it has none
}

func (e *Error) Error() string {
	if e.Name != "" {
		return fmt.Sprintf("%s: %s (%d)", e.Call, e.Name, e.Code)
	}
	return fmt.Sprintf("%s: CUresult %d", e.Call, e.Code)
}

// Is makes CUDA_ERROR_NO_DEVICE match ErrNoDevice.
func (e *Error) Is(target error) bool { return target == ErrNoDevice && e.Code == ErrorNoDevice }

// DeviceRangeError is a device index past the last device.
type DeviceRangeError struct {
	Index, Count int
}

func (e *DeviceRangeError) Error() string {
	return fmt.Sprintf("CUDA device %d out of range: %d devices (0 to %d)", e.Index, e.Count, e.Count-1)
}

// JITError is a PTX module the driver's JIT compiler refused, with its log.
type JITError struct {
	Log string
	Err error
}

// Error is one line: the log's lines are joined by "; ".
func (e *JITError) Error() string {
	if e.Log == "" {
		return "PTX JIT: " + e.Err.Error()
	}
	var lines []string
	for _, l := range strings.Split(e.Log, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	return "PTX JIT: " + e.Err.Error() + ": " + strings.Join(lines, "; ")
}

func (e *JITError) Unwrap() error { return e.Err }

// cString reads a NUL-terminated C string; "" for nil.
func cString(p *byte) string {
	if p == nil {
		return ""
	}
	var n int
	for *(*byte)(unsafe.Add(unsafe.Pointer(p), n)) != 0 {
		n++
	}
	return string(unsafe.Slice(p, n))
}
