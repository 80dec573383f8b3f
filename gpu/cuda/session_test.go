package cuda_test

import (
	"errors"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/rprof/rprof/gpu/cuda"
	"github.com/rprof/rprof/gpu/cuda/cudatest"
)

const testPTX = `.version 7.8
.target sm_80
.address_size 64
.visible .entry k(.param .u64 a, .param .u64 n)
{
	ret;
}
`

func open(t *testing.T, f *cudatest.Fake) *cuda.Session {
	t.Helper()
	s, err := cuda.Open(f, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return s
}

// loadK loads testPTX and finds its kernel.
func loadK(t *testing.T, s *cuda.Session) (*cuda.Module, cuda.Function) {
	t.Helper()
	m, err := s.Load([]byte(testPTX))
	if err != nil {
		t.Fatal(err)
	}
	k, err := m.Function("k")
	if err != nil {
		t.Fatal(err)
	}
	return m, k
}

func TestOpenReadsTheDevicesAttributes(t *testing.T) {
	f := &cudatest.Fake{Devices: []cudatest.Device{cudatest.H100SXM()}}
	s := open(t, f)
	in := s.Info
	if in.Name != "NVIDIA H100 80GB HBM3" || in.Major != 9 || in.Minor != 0 || in.SMs != 132 ||
		in.SMClockKHz != 1980000 || in.MemClockKHz != 2619000 || in.BusWidthBits != 5120 ||
		in.L2Bytes != 50<<20 || in.MaxThreadsSM != 2048 || in.MaxBlocksSM != 32 || in.WarpSize != 32 ||
		in.TotalMem != 80<<30 || in.DriverVersion != 12040 {
		t.Errorf("info = %+v", in)
	}
}

func TestOpenErrors(t *testing.T) {
	h100 := []cudatest.Device{cudatest.H100SXM()}
	for _, tc := range []struct {
		name    string
		fake    *cudatest.Fake
		ordinal int
		check   func(error) bool
	}{
		{"no device at init", &cudatest.Fake{}, 0, func(err error) bool { return errors.Is(err, cuda.ErrNoDevice) }},
		{"no device counted", &cudatest.Fake{Fail: map[string]cuda.Result{"cuInit": 0}}, 0, func(err error) bool { return errors.Is(err, cuda.ErrNoDevice) }},
		{"index past the last", &cudatest.Fake{Devices: h100}, 1, func(err error) bool {
			var re *cuda.DeviceRangeError
			return errors.As(err, &re) && re.Index == 1 && re.Count == 1 && err.Error() == "CUDA device 1 out of range: 1 devices (0 to 0)"
		}},
		{"negative index", &cudatest.Fake{Devices: h100}, -1, func(err error) bool {
			var re *cuda.DeviceRangeError
			return errors.As(err, &re)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := cuda.Open(tc.fake, tc.ordinal)
			if err == nil {
				s.Close()
				t.Fatal("opened")
			}
			if !tc.check(err) {
				t.Errorf("err = %v", err)
			}
		})
	}
}

// Each call of Open failing in turn leaves no context behind and names
// the call.
func TestOpenFailingCallsAreNamedAndLeaveNothing(t *testing.T) {
	for _, call := range []string{"cuInit", "cuDeviceGetCount", "cuDeviceGet", "cuDeviceGetName",
		"cuDriverGetVersion", "cuDeviceTotalMem_v2", "cuDeviceGetAttribute", "cuCtxCreate_v2", "cuEventCreate"} {
		t.Run(call, func(t *testing.T) {
			f := &cudatest.Fake{Devices: []cudatest.Device{cudatest.H100SXM()}, Fail: map[string]cuda.Result{call: 2}}
			_, err := cuda.Open(f, 0)
			var ce *cuda.Error
			if !errors.As(err, &ce) || !strings.HasPrefix(ce.Call, call) || ce.Name != "CUDA_ERROR_OUT_OF_MEMORY" {
				t.Fatalf("err = %v", err)
			}
			if c, _, _, _ := f.Leaks(); c != 0 {
				t.Errorf("%d contexts left", c)
			}
		})
	}
}

func TestErrorWithoutAName(t *testing.T) {
	f := &cudatest.Fake{Fail: map[string]cuda.Result{"cuInit": 999}}
	_, err := cuda.Open(f, 0)
	if err == nil || err.Error() != "cuInit: CUresult 999" || errors.Is(err, cuda.ErrNoDevice) {
		t.Errorf("err = %v", err)
	}
}

func TestLoadReturnsTheJITLog(t *testing.T) {
	f := &cudatest.Fake{Devices: []cudatest.Device{cudatest.H100SXM()},
		JITLog: "ptxas application ptx input, line 5; error   : Unknown symbol 'x'\nptxas fatal   : Ptx assembly aborted due to errors\n"}
	s := open(t, f)
	_, err := s.Load([]byte(testPTX))
	var je *cuda.JITError
	if !errors.As(err, &je) {
		t.Fatalf("err = %v", err)
	}
	if je.Log != "ptxas application ptx input, line 5; error   : Unknown symbol 'x'\nptxas fatal   : Ptx assembly aborted due to errors" {
		t.Errorf("log = %q", je.Log)
	}
	if err.Error() != "PTX JIT: cuModuleLoadDataEx: CUDA_ERROR_INVALID_PTX (218): ptxas application ptx input, line 5; error   : Unknown symbol 'x'; ptxas fatal   : Ptx assembly aborted due to errors" {
		t.Errorf("message = %q", err)
	}
	var ce *cuda.Error
	if !errors.As(err, &ce) || ce.Code != cuda.ErrorInvalidPTX {
		t.Errorf("unwrapped = %v", ce)
	}
}

func TestLoadFailureWithoutLog(t *testing.T) {
	f := &cudatest.Fake{Devices: []cudatest.Device{cudatest.H100SXM()}, Fail: map[string]cuda.Result{"cuModuleLoadDataEx": cuda.ErrorInvalidPTX}}
	s := open(t, f)
	_, err := s.Load([]byte(testPTX))
	var je *cuda.JITError
	if !errors.As(err, &je) || je.Log != "" || err.Error() != "PTX JIT: cuModuleLoadDataEx: CUDA_ERROR_INVALID_PTX (218)" {
		t.Errorf("err = %v", err)
	}
}

func TestTimeLaunchesBackToBackBetweenEvents(t *testing.T) {
	f := &cudatest.Fake{Devices: []cudatest.Device{cudatest.H100SXM()},
		KernelTime: func(l cudatest.Launch) time.Duration { return time.Duration(l.Params[1]) * time.Microsecond }}
	s := open(t, f)
	m, k := loadK(t, s)
	p, err := s.Alloc(1 << 20)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Memset32(p, 0, 1<<18); err != nil {
		t.Fatal(err)
	}
	d, err := s.Time(k, cuda.Grid{Blocks: 264, Threads: 256}, []uint64{uint64(p), 250}, 4)
	if err != nil {
		t.Fatal(err)
	}
	if d != time.Millisecond {
		t.Errorf("4 launches of 250 us took %v", d)
	}
	ls := f.Launches()
	if len(ls) != 4 || ls[0].Kernel != "k" || ls[0].Grid.Blocks != 264 || ls[0].Grid.Threads != 256 || ls[0].Params[0] != uint64(p) {
		t.Errorf("launches = %+v", ls)
	}
	if err := s.Free(p); err != nil {
		t.Fatal(err)
	}
	if err := s.Free(p); err == nil {
		t.Error("freed twice")
	}
	if err := m.Unload(); err != nil {
		t.Fatal(err)
	}
	if _, mods, allocs, _ := f.Leaks(); mods != 0 || allocs != 0 {
		t.Errorf("left %d modules, %d allocations", mods, allocs)
	}
}

func TestFunctionNotInTheModule(t *testing.T) {
	s := open(t, &cudatest.Fake{Devices: []cudatest.Device{cudatest.H100SXM()}})
	m, err := s.Load([]byte(testPTX))
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.Function("nope")
	var ce *cuda.Error
	if !errors.As(err, &ce) || ce.Code != cuda.ErrorNotFound || ce.Call != "cuModuleGetFunction nope" {
		t.Errorf("err = %v", err)
	}
}

// Each call Time makes failing in turn is reported with its name.
func TestTimeFailingCalls(t *testing.T) {
	for _, call := range []string{"cuEventRecord", "cuLaunchKernel", "cuEventSynchronize", "cuEventElapsedTime"} {
		t.Run(call, func(t *testing.T) {
			f := &cudatest.Fake{Devices: []cudatest.Device{cudatest.H100SXM()}}
			s := open(t, f)
			_, k := loadK(t, s)
			f.Fail = map[string]cuda.Result{call: 2}
			_, err := s.Time(k, cuda.Grid{Blocks: 1, Threads: 32}, []uint64{0, 1}, 2)
			var ce *cuda.Error
			if !errors.As(err, &ce) || !strings.HasPrefix(ce.Call, call) {
				t.Errorf("err = %v", err)
			}
		})
	}
}

func TestMemoryCallsFailing(t *testing.T) {
	f := &cudatest.Fake{Devices: []cudatest.Device{cudatest.H100SXM()}}
	s := open(t, f)
	f.Fail = map[string]cuda.Result{"cuMemAlloc_v2": 2, "cuMemsetD32_v2": 2, "cuModuleUnload": 2}
	if _, err := s.Alloc(1); err == nil {
		t.Error("alloc")
	}
	if err := s.Memset32(0, 0, 1); err == nil {
		t.Error("memset")
	}
	f.Fail = map[string]cuda.Result{"cuCtxSynchronize": 2}
	if err := s.Memset32(0, 0, 1); err == nil {
		t.Error("memset's synchronize")
	}
	f.Fail = nil
}

func TestClosedSessionRefusesCalls(t *testing.T) {
	f := &cudatest.Fake{Devices: []cudatest.Device{cudatest.H100SXM()}}
	s, err := cuda.Open(f, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second close: %v", err)
	}
	if _, err := s.Load([]byte(testPTX)); !errors.Is(err, cuda.ErrClosed) {
		t.Errorf("load after close: %v", err)
	}
	if c, _, _, ev := f.Leaks(); c != 0 || ev != 0 {
		t.Errorf("left %d contexts, %d events", c, ev)
	}
}

func TestCloseReportsTheContextsDestruction(t *testing.T) {
	f := &cudatest.Fake{Devices: []cudatest.Device{cudatest.H100SXM()}}
	s, err := cuda.Open(f, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Fail = map[string]cuda.Result{"cuCtxDestroy_v2": 2}
	if err := s.Close(); err == nil {
		t.Error("no error")
	}
}

func TestLoadWithoutALibrary(t *testing.T) {
	old := cuda.Libraries
	t.Cleanup(func() { cuda.Libraries = old })
	cuda.Libraries = []string{"librprof-no-such-cuda.so.1"}
	if _, err := cuda.Load(); !errors.Is(err, cuda.ErrNoDriver) {
		t.Errorf("err = %v", err)
	}
}

func TestReadCopiesDeviceMemory(t *testing.T) {
	f := &cudatest.Fake{Devices: []cudatest.Device{cudatest.H100SXM()}}
	s := open(t, f)
	p, err := s.Alloc(64)
	if err != nil {
		t.Fatal(err)
	}
	if !f.Write(uint64(p)+8, []byte("clocks")) {
		t.Fatal("fake kept no memory")
	}
	got := make([]byte, 6)
	if err := s.Read(got, p+8); err != nil || string(got) != "clocks" {
		t.Errorf("read %q, %v", got, err)
	}
	if err := s.Read(nil, p); err != nil {
		t.Errorf("empty read: %v", err)
	}
	f.Fail = map[string]cuda.Result{"cuMemcpyDtoH_v2": 700}
	if err := s.Read(got, p); err == nil {
		t.Error("failed copy read")
	}
}

func TestDevicesDescribesEveryDeviceWithoutAContext(t *testing.T) {
	a100 := cudatest.H100SXM()
	a100.Name = "NVIDIA A100-SXM4-80GB"
	a100.Attrs = maps.Clone(a100.Attrs)
	a100.Attrs[cuda.AttrCCMajor] = 8
	f := &cudatest.Fake{Devices: []cudatest.Device{cudatest.H100SXM(), a100}}
	ds, err := cuda.Devices(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 2 || ds[0].Name != "NVIDIA H100 80GB HBM3" || ds[1].Ordinal != 1 || ds[1].Major != 8 || ds[0].SMClockKHz != 1980000 {
		t.Errorf("devices: %+v", ds)
	}
	if contexts, _, _, _ := f.Leaks(); contexts != 0 {
		t.Errorf("%d contexts left", contexts)
	}
	if _, err := cuda.Devices(&cudatest.Fake{}); !errors.Is(err, cuda.ErrNoDevice) {
		t.Errorf("no device: %v", err)
	}
	if _, err := cuda.Devices(&cudatest.Fake{Devices: []cudatest.Device{a100}, Fail: map[string]cuda.Result{"cuDeviceGetName": 1}}); err == nil ||
		!strings.Contains(err.Error(), "cuDeviceGetName") {
		t.Errorf("a failing call: %v", err)
	}
}
