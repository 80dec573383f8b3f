package gpu

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/rprof/rprof/gpu/cuda"
	"github.com/rprof/rprof/gpu/cuda/cudatest"
	"github.com/rprof/rprof/gpu/ptx"
	"github.com/rprof/rprof/roofline"
)

// model is a simulated H100 SXM at 1980 MHz: FMA at 95% of the table's rate once
// ILP x warps per scheduler covers the FMA latency (4 clocks), memory at
// 3000 GB/s from DRAM, 8000 from L2 and 20000 from L1 once an SM has 1024
// threads, and 3 us between launches.
func model(in cudatest.Device) func(l cudatest.Launch) time.Duration {
	return modelAt(in, 1980)
}

// modelAt is model with the SMs at smMHz.
func modelAt(in cudatest.Device, smMHz float64) func(l cudatest.Launch) time.Duration {
	sms := float64(in.Attrs[cuda.AttrMultiprocessors])
	l2 := float64(in.Attrs[cuda.AttrL2CacheSize])
	at := smMHz / 1980
	peak := map[string]float64{"fp64": 33454 * at, "fp32": 66908 * at, "fp16": 133816 * at}
	return func(l cudatest.Launch) time.Duration {
		k, _ := ptx.Find(l.Kernel)
		threadsPerSM := float64(l.Grid.Blocks) * float64(l.Grid.Threads) / sms
		occupancy := math.Min(1, threadsPerSM/1024)
		var secs float64
		switch k.Kind {
		case ptx.FMA:
			warpsPerScheduler := threadsPerSM / 32 / 4
			rate := 0.95 * peak[k.Precision] * math.Min(1, float64(k.ILP)*warpsPerScheduler/4) * 1e9
			secs = float64(l.Grid.Blocks) * float64(l.Grid.Threads) * float64(l.Params[1]) * float64(k.Flops) / rate
		case ptx.Bandwidth:
			n, passes := float64(l.Params[3]), float64(l.Params[4])
			ws := n * float64(k.Bytes)
			bw := 3000.0
			switch {
			case ws <= sms*64*1024:
				bw = 20000
			case ws <= l2/2:
				bw = 8000
			}
			secs = n * passes * float64(k.Bytes) / (bw * occupancy * 1e9)
		case ptx.Ladder:
			n, passes := float64(l.Params[1]), float64(l.Params[2])
			secs = math.Max(n*passes*float64(k.Bytes)/3000e9, n*passes*float64(k.Flops)/(0.95*peak["fp64"]*1e9))
		}
		return time.Duration(secs*1e9) + 3*time.Microsecond
	}
}

func fakeH100() *cudatest.Fake {
	d := cudatest.H100SXM()
	return &cudatest.Fake{Devices: []cudatest.Device{d}, KernelTime: model(d)}
}

func near(got, want, tol float64) bool { return math.Abs(got-want) <= tol*want }

func TestMeasureFindsTheModelsRoofs(t *testing.T) {
	f := fakeH100()
	var steps []string
	g, err := Measure(context.Background(), f, Options{Quick: true, Progress: func(s string) { steps = append(steps, s) }})
	if err != nil {
		t.Fatal(err)
	}
	if g.Device.Name != "NVIDIA H100 80GB HBM3" || g.Device.ComputeCapability != "9.0" || g.Device.SMClockMHz != 1980 || g.Device.Driver != "12.4" {
		t.Errorf("device %+v", g.Device)
	}
	checkCompute(t, g)
	checkMemory(t, g)
	if !slices.ContainsFunc(g.Flags, func(f roofline.Flag) bool { return f.Code == roofline.FlagFrequency }) {
		t.Errorf("flags %+v", g.Flags)
	}
	if len(steps) < 7 {
		t.Errorf("progress %q", steps)
	}
	if c, m, a, _ := f.Leaks(); c != 0 || m != 0 || a != 0 {
		t.Errorf("left %d contexts, %d modules, %d allocations", c, m, a)
	}
}

// Back-to-back launches: every sample is a run of launches between two
// events, sized to the sample time, after a warm-up launch.
func TestSamplesAreBackToBackLaunchesAfterAWarmUp(t *testing.T) {
	f := fakeH100()
	if _, err := Measure(context.Background(), f, Options{Fixed: 2}); err != nil {
		t.Fatal(err)
	}
	ls := f.Launches()
	// The first FMA kernel: warm-up launches from 64 iterations up, then
	// two samples of equal runs of launches at the last count.
	first := ls[0]
	if first.Kernel != "fma_fp64_ilp1_u4" || first.Params[1] != 64 {
		t.Fatalf("first launch %+v", first)
	}
	var run []cudatest.Launch
	for _, l := range ls {
		if l.Kernel != first.Kernel || l.Grid != first.Grid {
			break
		}
		run = append(run, l)
	}
	final := run[len(run)-1].Params[1]
	var atFinal int
	for _, l := range run {
		if l.Params[1] == final {
			atFinal++
		}
	}
	// One of them is the warm-up's last launch.
	if final <= 64 || (atFinal-1)%2 != 0 || atFinal < 3 {
		t.Errorf("%d launches at %d iterations after %d warm-ups", atFinal, final, len(run)-atFinal)
	}
}

func TestMeasureErrors(t *testing.T) {
	old := cudatest.H100SXM()
	old.Attrs[cuda.AttrCCMajor], old.Attrs[cuda.AttrCCMinor] = 7, 0
	for _, tc := range []struct {
		name  string
		fake  *cudatest.Fake
		o     Options
		check func(error) bool
	}{
		{"no device", &cudatest.Fake{}, Options{}, func(err error) bool { return errors.Is(err, cuda.ErrNoDevice) }},
		{"index out of range", fakeH100(), Options{Device: 2}, func(err error) bool {
			var re *cuda.DeviceRangeError
			return errors.As(err, &re)
		}},
		{"compute capability too old", &cudatest.Fake{Devices: []cudatest.Device{old}}, Options{}, func(err error) bool {
			var ue *UnsupportedError
			return errors.As(err, &ue) && err.Error() == "NVIDIA H100 80GB HBM3: compute capability 7.0 is not supported (rprof's kernels need 8.0 or later)"
		}},
		{"JIT error", &cudatest.Fake{Devices: []cudatest.Device{cudatest.H100SXM()}, JITLog: "line 9: error"}, Options{}, func(err error) bool {
			var je *cuda.JITError
			return errors.As(err, &je) && je.Log == "line 9: error"
		}},
		{"out of memory", &cudatest.Fake{Devices: []cudatest.Device{cudatest.H100SXM()}, Fail: map[string]cuda.Result{"cuMemAlloc_v2": 2}}, Options{}, func(err error) bool {
			var ce *cuda.Error
			return errors.As(err, &ce) && ce.Name == "CUDA_ERROR_OUT_OF_MEMORY"
		}},
		{"a launch fails", &cudatest.Fake{Devices: []cudatest.Device{cudatest.H100SXM()}, Fail: map[string]cuda.Result{"cuLaunchKernel": 719}}, Options{}, func(err error) bool {
			var ce *cuda.Error
			return errors.As(err, &ce) && ce.Code == 719
		}},
		{"a launch timed at zero", &cudatest.Fake{Devices: []cudatest.Device{cudatest.H100SXM()}, KernelTime: func(cudatest.Launch) time.Duration { return 0 }}, Options{}, func(err error) bool {
			return errors.Is(err, errGone)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Measure(context.Background(), tc.fake, tc.o)
			if err == nil || !tc.check(err) {
				t.Errorf("err = %v", err)
			}
		})
	}
}

// A compute capability the kernels run on but the table lacks: measured,
// with no theoretical peak, and flagged.
func TestUnknownComputeCapabilityHasNoPeak(t *testing.T) {
	d := cudatest.H100SXM()
	d.Attrs[cuda.AttrCCMajor], d.Attrs[cuda.AttrCCMinor] = 12, 0
	g, err := Measure(context.Background(), &cudatest.Fake{Devices: []cudatest.Device{d}, KernelTime: model(d)}, Options{Fixed: 1})
	if err != nil {
		t.Fatal(err)
	}
	var noPeak int
	for _, f := range g.Flags {
		if f.Code == roofline.FlagGPUNoPeak {
			noPeak++
		}
	}
	if noPeak != 3 || g.Compute[0].TheoreticalGFlops != 0 {
		t.Errorf("flags %+v", g.Flags)
	}
}

func TestAboveTheoreticalIsFlagged(t *testing.T) {
	d := cudatest.H100SXM()
	d.Attrs[cuda.AttrClockRate] = 1000000 // the attribute says 1 GHz; the model runs at 1.98
	g, err := Measure(context.Background(), &cudatest.Fake{Devices: []cudatest.Device{d}, KernelTime: model(d)}, Options{Quick: true})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(g.Flags, func(f roofline.Flag) bool {
		return f.Code == roofline.FlagAboveTheory && f.Subject == "gpu-fma-fp64"
	}) {
		t.Errorf("flags %+v", g.Flags)
	}
}

func TestInterruptedMeasurementStops(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Measure(ctx, fakeH100(), Options{Quick: true}); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v", err)
	}
}

// checkCompute checks the FMA roofs of the model.
func checkCompute(t *testing.T, g *roofline.GPURoofs) {
	t.Helper()
	want := map[string]float64{"gpu-fma-fp64": 33454, "gpu-fma-fp32": 66908, "gpu-fma-fp16": 133816}
	for _, c := range g.Compute {
		if !near(c.TheoreticalGFlops, want[c.Name], 1e-4) || !near(c.GFlops, 0.95*want[c.Name], 0.01) {
			t.Errorf("%s: %.0f GFLOP/s, theoretical %.0f", c.Name, c.GFlops, c.TheoreticalGFlops)
		}
		if c.Clocks.SMClockMHz != 1980 || c.Clocks.Source != roofline.ClockSourceAttribute || c.PeakSource == "" {
			t.Errorf("%s: clocks %+v, peak source %q", c.Name, c.Clocks, c.PeakSource)
		}
		if c.Launch.Blocks%132 != 0 || c.Launch.Threads == 0 || c.ILP == 0 {
			t.Errorf("%s: launch %+v, ILP %d", c.Name, c.Launch, c.ILP)
		}
	}
}

// checkMemory checks the memory roofs and the ladder of the model.
func checkMemory(t *testing.T, g *roofline.GPURoofs) {
	t.Helper()
	mem := map[string]float64{"DRAM": 3000, "L2": 8000, "L1": 20000}
	for _, m := range g.Memory {
		if !near(m.GBytesPerS, mem[m.Level], 0.02) {
			t.Errorf("%s: %.0f GB/s (%s, %d bytes)", m.Level, m.GBytesPerS, m.Kernel, m.WorkingSetBytes)
		}
	}
	if d := g.Memory[0]; d.Level != "DRAM" || !near(d.TheoreticalGBytesPerS, 3352, 0.001) || d.WorkingSetBytes < 3*400<<20 {
		t.Errorf("DRAM roof %+v", d)
	}
	if len(g.Ladder) != 9 || g.Ladder[0].FlopsPerByte != 0.125 || g.Ladder[8].FlopsPerByte != 32 {
		t.Fatalf("ladder %+v", g.Ladder)
	}
	// Memory-bound at the bottom (DRAM's rate), compute-bound at the top.
	if lo, hi := g.Ladder[0], g.Ladder[8]; !near(lo.GBytesPerS, 3000, 0.02) || !near(hi.GFlops, 0.95*33454, 0.02) {
		t.Errorf("ladder ends %+v, %+v", lo, hi)
	}
}

// An SM clock below the attribute's (a power-limited H100): the FMA
// kernels' clock records give it, and the theoretical peaks use it.
func TestFMARoofsRecordTheMeasuredSMClock(t *testing.T) {
	d := cudatest.H100SXM()
	f := &cudatest.Fake{Devices: []cudatest.Device{d}, KernelTime: modelAt(d, 1755)}
	f.OnLaunch = func(l cudatest.Launch, start, took time.Duration) {
		if k, _ := ptx.Find(l.Kernel); k.Kind != ptx.FMA {
			return
		}
		var b [ptx.ClockRecordBytes]byte
		ns := uint64(1_700_000_000_000 + start.Nanoseconds())
		binary.LittleEndian.PutUint64(b[0:], ns)
		binary.LittleEndian.PutUint64(b[8:], 5_000_000)
		binary.LittleEndian.PutUint64(b[16:], ns+uint64(took.Nanoseconds()))
		binary.LittleEndian.PutUint64(b[24:], 5_000_000+uint64(took.Seconds()*1755e6))
		if !f.Write(l.Params[0], b[:]) {
			t.Errorf("%s: out is not the clock record's buffer", l.Kernel)
		}
	}
	g, err := Measure(context.Background(), f, Options{Quick: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range g.Compute {
		if c.Clocks.Source != roofline.ClockSourceMeasured || !near(c.Clocks.SMClockMHz, 1755, 0.001) || c.Clocks.MemClockMHz != 2619 {
			t.Errorf("%s: clocks %+v", c.Name, c.Clocks)
		}
		if !near(c.GFlops/c.TheoreticalGFlops, 0.95, 0.01) {
			t.Errorf("%s: %.0f of %.0f GFLOP/s", c.Name, c.GFlops, c.TheoreticalGFlops)
		}
	}
	if m := g.Memory[0]; m.Clocks.Source != roofline.ClockSourceAttribute {
		t.Errorf("DRAM clocks %+v", m.Clocks)
	}
	if slices.ContainsFunc(g.Flags, func(f roofline.Flag) bool { return f.Code == roofline.FlagAboveTheory }) {
		t.Errorf("flags %+v", g.Flags)
	}
}
