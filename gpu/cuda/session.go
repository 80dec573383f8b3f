package cuda

import (
	"fmt"
	"runtime"
	"sync"
	"time"
	"unsafe"
)

// Info is what the driver says of a device.
type Info struct {
	Ordinal       int
	Name          string
	Major, Minor  int // compute capability
	SMs           int
	SMClockKHz    int // the SM clock's peak (CU_DEVICE_ATTRIBUTE_CLOCK_RATE)
	MemClockKHz   int // the memory clock's peak
	BusWidthBits  int
	L2Bytes       int
	SharedPerSM   int // bytes
	MaxThreadsSM  int
	MaxThreadsBlk int
	MaxBlocksSM   int
	WarpSize      int
	TotalMem      uint64 // bytes
	DriverVersion int    // cuDriverGetVersion: 1000*major + 10*minor
}

// Grid is a launch's shape, one-dimensional.
type Grid struct {
	Blocks, Threads uint32
	SharedBytes     uint32
}

// Ptr is a device address.
type Ptr uint64

// Function is a kernel in a loaded module.
type Function struct {
	Name string
	h    uintptr
}

// Module is a loaded PTX module.
type Module struct {
	s *Session
	h uintptr
}

// Session is one device's context, every driver call of which runs on
// one locked OS thread: the context is current on that thread only.
type Session struct {
	Info Info

	drv         Driver
	mu          sync.Mutex
	calls       chan func()
	closed      bool
	ctx         uintptr
	start, stop uintptr
}

// Open initialises the driver, checks that device ordinal exists and
// creates a context on it. With no device it returns an error matching
// ErrNoDevice; with ordinal out of range a *DeviceRangeError.
func Open(drv Driver, ordinal int) (*Session, error) {
	s := &Session{drv: drv, calls: make(chan func())}
	go s.serve()
	if err := s.do(func() error { return s.open(ordinal) }); err != nil {
		s.mu.Lock()
		s.closed = true
		close(s.calls)
		s.mu.Unlock()
		return nil, err
	}
	return s, nil
}

// serve runs the calls on a thread of its own. It never unlocks the
// thread, so the thread ends with the goroutine, and no other goroutine
// inherits the context.
func (s *Session) serve() {
	runtime.LockOSThread()
	for f := range s.calls {
		f()
	}
}

// do runs f on the session's thread and waits for it.
func (s *Session) do(f func() error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	errc := make(chan error, 1)
	s.calls <- func() { errc <- f() }
	return <-errc
}

// check turns a CUresult into an error naming the call.
func (s *Session) check(call string, r Result) error {
	if r == Success {
		return nil
	}
	var name *byte
	e := &Error{Call: call, Code: r}
	if s.drv.GetErrorName(r, &name) == Success {
		e.Name = cString(name)
	}
	return e
}

func (s *Session) open(ordinal int) error {
	if err := s.check("cuInit", s.drv.Init(0)); err != nil {
		return err
	}
	var n int32
	if err := s.check("cuDeviceGetCount", s.drv.DeviceGetCount(&n)); err != nil {
		return err
	}
	if n == 0 {
		return ErrNoDevice
	}
	if ordinal < 0 || ordinal >= int(n) {
		return &DeviceRangeError{Index: ordinal, Count: int(n)}
	}
	var dev int32
	if err := s.check("cuDeviceGet", s.drv.DeviceGet(&dev, int32(ordinal))); err != nil {
		return err
	}
	if err := s.readInfo(dev); err != nil {
		return err
	}
	s.Info.Ordinal = ordinal
	if err := s.check("cuCtxCreate_v2", s.drv.CtxCreate(&s.ctx, 0, dev)); err != nil {
		return err
	}
	if err := s.check("cuEventCreate", s.drv.EventCreate(&s.start, 0)); err != nil {
		s.drv.CtxDestroy(s.ctx)
		return err
	}
	if err := s.check("cuEventCreate", s.drv.EventCreate(&s.stop, 0)); err != nil {
		s.drv.EventDestroy(s.start)
		s.drv.CtxDestroy(s.ctx)
		return err
	}
	return nil
}

// Devices describes every device the driver sees, without a context
// (cuInit and the device queries need none): for rprof doctor and for the
// points of rprof run --gpu. Errors: ErrNoDevice, *Error.
func Devices(drv Driver) ([]Info, error) {
	s := &Session{drv: drv}
	if err := s.check("cuInit", drv.Init(0)); err != nil {
		return nil, err
	}
	var n int32
	if err := s.check("cuDeviceGetCount", drv.DeviceGetCount(&n)); err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, ErrNoDevice
	}
	out := make([]Info, n)
	for i := range out {
		var dev int32
		if err := s.check("cuDeviceGet", drv.DeviceGet(&dev, int32(i))); err != nil {
			return nil, err
		}
		if err := s.readInfo(dev); err != nil {
			return nil, err
		}
		s.Info.Ordinal = i
		out[i] = s.Info
	}
	return out, nil
}

func (s *Session) readInfo(dev int32) error {
	in := &s.Info
	var name [256]byte
	if err := s.check("cuDeviceGetName", s.drv.DeviceGetName(&name[0], int32(len(name)), dev)); err != nil {
		return err
	}
	in.Name = cString(&name[0])
	var ver int32
	if err := s.check("cuDriverGetVersion", s.drv.DriverGetVersion(&ver)); err != nil {
		return err
	}
	in.DriverVersion = int(ver)
	if err := s.check("cuDeviceTotalMem_v2", s.drv.DeviceTotalMem(&in.TotalMem, dev)); err != nil {
		return err
	}
	for _, a := range []struct {
		attr Attribute
		v    *int
	}{
		{AttrCCMajor, &in.Major}, {AttrCCMinor, &in.Minor},
		{AttrMultiprocessors, &in.SMs}, {AttrClockRate, &in.SMClockKHz},
		{AttrMemoryClockRate, &in.MemClockKHz}, {AttrMemoryBusWidth, &in.BusWidthBits},
		{AttrL2CacheSize, &in.L2Bytes}, {AttrSharedPerSM, &in.SharedPerSM},
		{AttrMaxThreadsPerSM, &in.MaxThreadsSM}, {AttrMaxThreadsPerBlock, &in.MaxThreadsBlk},
		{AttrMaxBlocksPerSM, &in.MaxBlocksSM}, {AttrWarpSize, &in.WarpSize},
	} {
		var v int32
		if err := s.check(fmt.Sprintf("cuDeviceGetAttribute(%d)", a.attr), s.drv.DeviceGetAttribute(&v, a.attr, dev)); err != nil {
			return err
		}
		*a.v = int(v)
	}
	return nil
}

// Close destroys the context and ends the session's thread.
func (s *Session) Close() error {
	err := s.do(func() error {
		s.drv.EventDestroy(s.start)
		s.drv.EventDestroy(s.stop)
		return s.check("cuCtxDestroy_v2", s.drv.CtxDestroy(s.ctx))
	})
	if err == ErrClosed {
		return nil
	}
	s.mu.Lock()
	s.closed = true
	close(s.calls)
	s.mu.Unlock()
	return err
}

// jitLogSize is the JIT's error log buffer: ptxas's messages for a
// generated kernel run to a few lines.
const jitLogSize = 16 << 10

// Load compiles a PTX module with the driver's JIT. A PTX the JIT refuses
// is a *JITError with the JIT's error log.
func (s *Session) Load(ptx []byte) (*Module, error) {
	image := append(append([]byte(nil), ptx...), 0)
	logBuf := make([]byte, jitLogSize)
	var pin runtime.Pinner
	pin.Pin(&logBuf[0])
	defer pin.Unpin()
	opts := []int32{jitErrorLogBuffer, jitErrorLogBufferSize}
	vals := []uintptr{uintptr(unsafe.Pointer(&logBuf[0])), uintptr(len(logBuf))}
	m := &Module{s: s}
	err := s.do(func() error {
		r := s.drv.ModuleLoadDataEx(&m.h, &image[0], uint32(len(opts)), &opts[0], &vals[0])
		return s.check("cuModuleLoadDataEx", r)
	})
	runtime.KeepAlive(image)
	if err != nil {
		if e, ok := err.(*Error); ok {
			n := min(int(vals[1]), len(logBuf))
			return nil, &JITError{Log: trimLog(logBuf[:n]), Err: e}
		}
		return nil, err
	}
	return m, nil
}

// trimLog is the log up to its NUL, without trailing white space.
func trimLog(b []byte) string {
	for i, c := range b {
		if c == 0 {
			b = b[:i]
			break
		}
	}
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == ' ') {
		b = b[:len(b)-1]
	}
	return string(b)
}

// Function finds a kernel of the module by its entry name.
func (m *Module) Function(name string) (Function, error) {
	f := Function{Name: name}
	cname := append([]byte(name), 0)
	err := m.s.do(func() error {
		return m.s.check("cuModuleGetFunction "+name, m.s.drv.ModuleGetFunction(&f.h, m.h, &cname[0]))
	})
	return f, err
}

// Unload frees the module.
func (m *Module) Unload() error {
	return m.s.do(func() error { return m.s.check("cuModuleUnload", m.s.drv.ModuleUnload(m.h)) })
}

// Alloc allocates device memory.
func (s *Session) Alloc(bytes uint64) (Ptr, error) {
	var p uint64
	err := s.do(func() error { return s.check("cuMemAlloc_v2", s.drv.MemAlloc(&p, bytes)) })
	return Ptr(p), err
}

// Free frees device memory from Alloc.
func (s *Session) Free(p Ptr) error {
	return s.do(func() error { return s.check("cuMemFree_v2", s.drv.MemFree(uint64(p))) })
}

// Memset32 sets n 32-bit words from p to v, and waits for it.
func (s *Session) Memset32(p Ptr, v uint32, n uint64) error {
	return s.do(func() error {
		if err := s.check("cuMemsetD32_v2", s.drv.MemsetD32(uint64(p), v, n)); err != nil {
			return err
		}
		return s.check("cuCtxSynchronize", s.drv.CtxSynchronize())
	})
}

// Read copies len(dst) bytes from p to dst, after the work before it.
func (s *Session) Read(dst []byte, p Ptr) error {
	if len(dst) == 0 {
		return nil
	}
	return s.do(func() error {
		return s.check("cuMemcpyDtoH_v2", s.drv.MemcpyDtoH(&dst[0], uint64(p), uint64(len(dst))))
	})
}

// Time launches fn launches times back to back on the default stream,
// with the kernel's parameters (every one 8 bytes: addresses, counts), and
// returns the time between events recorded before the first and after the
// last.
func (s *Session) Time(fn Function, g Grid, params []uint64, launches int) (time.Duration, error) {
	vals := append([]uint64(nil), params...)
	ptrs := make([]unsafe.Pointer, len(vals)+1) // one past: never empty
	var pin runtime.Pinner
	defer pin.Unpin()
	for i := range vals {
		pin.Pin(&vals[i])
		ptrs[i] = unsafe.Pointer(&vals[i])
	}
	pin.Pin(&ptrs[0])
	var ms float32
	err := s.do(func() error {
		if err := s.check("cuEventRecord", s.drv.EventRecord(s.start, 0)); err != nil {
			return err
		}
		for range launches {
			r := s.drv.LaunchKernel(fn.h, g.Blocks, 1, 1, g.Threads, 1, 1, g.SharedBytes, 0, &ptrs[0], nil)
			if err := s.check("cuLaunchKernel "+fn.Name, r); err != nil {
				return err
			}
		}
		if err := s.check("cuEventRecord", s.drv.EventRecord(s.stop, 0)); err != nil {
			return err
		}
		if err := s.check("cuEventSynchronize", s.drv.EventSynchronize(s.stop)); err != nil {
			return err
		}
		return s.check("cuEventElapsedTime", s.drv.EventElapsedTime(&ms, s.start, s.stop))
	})
	return time.Duration(float64(ms) * float64(time.Millisecond)), err
}
