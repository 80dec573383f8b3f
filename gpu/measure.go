package gpu

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/rprof/rprof/gpu/cuda"
	"github.com/rprof/rprof/gpu/ptx"
	"github.com/rprof/rprof/internal/stats"
	"github.com/rprof/rprof/roofline"
)

// Options tune a measurement; the zero value measures device 0 with the
// default search.
type Options struct {
	Device int
	// Quick searches a reduced space with shorter samples.
	Quick bool
	// Fixed, when positive, takes Fixed samples of every configuration,
	// with no early stopping.
	Fixed  int
	Method stats.Method
	// Progress, when set, is told each step as it starts.
	Progress func(step string)
}

// Confidence is the level of every GPU roof's interval, for the stop
// rules and for whoever shows the intervals: 99%, as roofs uses.
const Confidence = 0.99

// Stop rules: intervals within 1% as roofs uses; a sample is a run of
// back-to-back launches, seconds in all, so the counts are smaller.
const (
	relError     = 0.01
	minCount     = 8
	bestMinCount = 3
	maxCount     = 40
)

// sampleTime is a sample's target length: launches are added back to back
// until it is reached. launchTime is one launch's, reached by the kernel's
// iteration or pass count, so that launch gaps are a small share.
func (o Options) sampleTime() time.Duration {
	if o.Quick {
		return 2 * time.Millisecond
	}
	return 10 * time.Millisecond
}

const launchTime = 500 * time.Microsecond

func (o Options) rule() stats.StopRule {
	if o.Fixed > 0 {
		return stats.Fixed(o.Fixed, Confidence, o.Method)
	}
	budget := 400 * time.Millisecond
	if o.Quick {
		budget = 60 * time.Millisecond
	}
	return stats.StopRule{MaxTime: budget, MaxCount: maxCount, Confidence: Confidence, RelError: relError,
		MinCount: minCount, BestMinCount: bestMinCount, Method: o.Method}
}

func (o Options) progress(format string, args ...any) {
	if o.Progress != nil {
		o.Progress(fmt.Sprintf(format, args...))
	}
}

// run is one measurement's state.
type run struct {
	o       Options
	s       *cuda.Session
	mod     *cuda.Module
	arrays  [3]cuda.Ptr
	clock   cuda.Ptr // the FMA kernels' ClockRecord
	arrayN  uint64   // vectors of 16 bytes per array
	dev     roofline.GPUDevice
	clocks  roofline.GPUClocks
	flags   []roofline.Flag
	kernels map[string]cuda.Function
}

// Measure measures the roofs of device o.Device. It returns an error
// matching cuda.ErrNoDevice when there is none, a *cuda.DeviceRangeError
// for an index past the last, an *UnsupportedError for a device older
// than the kernels, and a *cuda.JITError when the driver refuses the PTX.
func Measure(ctx context.Context, drv cuda.Driver, o Options) (*roofline.GPURoofs, error) {
	s, err := cuda.Open(drv, o.Device)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	in := s.Info
	if in.Major < minMajor {
		return nil, &UnsupportedError{Name: in.Name, Major: in.Major, Minor: in.Minor}
	}
	r := &run{o: o, s: s, kernels: map[string]cuda.Function{}}
	r.describe()
	o.progress("gpu: compiling the kernels")
	if r.mod, err = s.Load(ptx.Module); err != nil {
		return nil, err
	}
	defer r.mod.Unload()
	if err := r.alloc(); err != nil {
		return nil, err
	}
	defer r.free()
	out := &roofline.GPURoofs{Device: r.dev}
	for _, p := range []string{roofline.Double, roofline.Single, roofline.Half} {
		c, err := r.compute(ctx, p)
		if err != nil {
			return nil, err
		}
		out.Compute = append(out.Compute, c)
	}
	for _, l := range levels {
		m, err := r.memory(ctx, l)
		if err != nil {
			return nil, err
		}
		out.Memory = append(out.Memory, m)
	}
	if out.Ladder, err = r.ladder(ctx, out.Memory[0].Launch); err != nil {
		return nil, err
	}
	out.Flags = append(r.flags, r.checkPeaks(out)...)
	return out, nil
}

func (r *run) describe() {
	in := r.s.Info
	r.dev = roofline.GPUDevice{Index: in.Ordinal, Name: in.Name, ComputeCapability: fmt.Sprintf("%d.%d", in.Major, in.Minor),
		SMs: in.SMs, SMClockMHz: float64(in.SMClockKHz) / 1000, MemClockMHz: float64(in.MemClockKHz) / 1000,
		BusWidthBits: in.BusWidthBits, L2Bytes: int64(in.L2Bytes), MemoryBytes: int64(in.TotalMem),
		Driver: fmt.Sprintf("%d.%d", in.DriverVersion/1000, in.DriverVersion%1000/10)}
	r.clocks = roofline.GPUClocks{SMClockMHz: r.dev.SMClockMHz, MemClockMHz: r.dev.MemClockMHz, Source: roofline.ClockSourceAttribute}
	r.flags = append(r.flags, roofline.Flag{Code: roofline.FlagFrequency,
		Message: fmt.Sprintf("the FMA roofs' SM clock is measured by their kernels (cycles over the global timer) where it moved, and their theoretical peaks use it; the memory clock, and every clock of the memory roofs, is the driver's peak (SM %.0f MHz, memory %.0f MHz)", r.dev.SMClockMHz, r.dev.MemClockMHz)})
}

// alloc allocates the bandwidth kernels' three arrays, each sized for the
// DRAM level, and zeroes them (the ladder's chains stay finite from 0).
func (r *run) alloc() error {
	var err error
	if r.clock, err = r.s.Alloc(ptx.ClockRecordBytes); err != nil {
		return fmt.Errorf("allocate on the GPU: %w", err)
	}
	bytes := dramArrayBytes(r.s.Info)
	r.arrayN = bytes / 16
	for i := range r.arrays {
		p, err := r.s.Alloc(bytes)
		if err != nil {
			r.free()
			return fmt.Errorf("allocate %d MiB on the GPU: %w", bytes>>20, err)
		}
		r.arrays[i] = p
		if err := r.s.Memset32(p, 0, bytes/4); err != nil {
			r.free()
			return err
		}
	}
	return nil
}

func (r *run) free() {
	if r.clock != 0 {
		r.s.Free(r.clock)
		r.clock = 0
	}
	for i, p := range r.arrays {
		if p != 0 {
			r.s.Free(p)
			r.arrays[i] = 0
		}
	}
}

// dramArrayBytes is one array's size at the DRAM level: eight times the
// L2 and at least 256 MiB, so that L2 holds a small share, but the three
// arrays within a quarter of the device's memory.
func dramArrayBytes(in cuda.Info) uint64 {
	b := max(8*uint64(in.L2Bytes), 256<<20)
	return min(b, in.TotalMem/12) &^ (1<<20 - 1)
}

// function finds a kernel of the module, once.
func (r *run) function(name string) (cuda.Function, error) {
	if f, ok := r.kernels[name]; ok {
		return f, nil
	}
	f, err := r.mod.Function(name)
	if err == nil {
		r.kernels[name] = f
	}
	return f, err
}

// config is one configuration of a search: a kernel, its grid, and the
// parameters of a launch given its iteration or pass count.
type config struct {
	kernel ptx.Kernel
	grid   cuda.Grid
	// params returns a launch's parameters and the FLOPs and bytes it
	// does for a count of iterations (FMA) or passes.
	params func(count uint64) (p []uint64, flops, bytes float64)
	// scalable is false when the count must stay 1 (DRAM: one pass over
	// arrays too large for any cache).
	scalable bool
}

// measured is one configuration's evaluation.
type measured struct {
	res            stats.Result
	count          uint64  // iterations or passes per launch
	flops, bytes   float64 // per launch
	launches       int     // per sample
	gflops, gbytes float64 // at the estimate
}

// errGone is a configuration that timed at zero: the driver reported no
// time for work done.
var errGone = errors.New("a launch timed at zero")

// evaluate warms a configuration up, sizes its launches, and evaluates its
// rate (GFLOP/s when rateOf says flops, else GB/s) with the stop rules.
func (r *run) evaluate(ctx context.Context, c config, best float64, flopsRate bool) (measured, error) {
	fn, err := r.function(c.kernel.Name)
	if err != nil {
		return measured{}, err
	}
	m := measured{count: 1}
	if c.kernel.Kind == ptx.FMA {
		m.count = 64
	}
	t0, err := r.warmUp(fn, c, &m.count)
	if err != nil {
		return m, err
	}
	m.launches = max(1, int(r.o.sampleTime()/t0))
	p, flops, bytes := c.params(m.count)
	m.flops, m.bytes = flops, bytes
	work := m.bytes
	if flopsRate {
		work = m.flops
	}
	work *= float64(m.launches)
	sample := func() (float64, time.Duration, error) {
		d, err := r.s.Time(fn, c.grid, p, m.launches)
		if err == nil && d <= 0 {
			err = fmt.Errorf("%s: %w", c.kernel.Name, errGone)
		}
		if err != nil {
			return 0, 0, err
		}
		return roofline.Rate(work, d.Seconds()), d, nil
	}
	ev := stats.Evaluator{Inner: r.o.rule()}
	m.res, err = ev.Evaluate(ctx, best, func(ctx context.Context, inner stats.StopRule, best float64) (stats.Inner, error) {
		return stats.Iterate(ctx, inner, best, sample)
	})
	if err != nil {
		return m, err
	}
	// The other rate at the same estimate: launches are timed as a whole.
	secs := work / m.res.Estimate.Value / 1e9
	m.gflops = roofline.Rate(m.flops*float64(m.launches), secs)
	m.gbytes = roofline.Rate(m.bytes*float64(m.launches), secs)
	return m, nil
}

// warmUp launches a configuration until a launch takes launchTime or
// more, raising its count (when scalable), and returns the last launch's
// time. The first launch pays for loading the code and touching the
// memory; a short one is mostly the launch's own cost, so the count is
// raised again until the time is the kernel's.
func (r *run) warmUp(fn cuda.Function, c config, count *uint64) (time.Duration, error) {
	for {
		p, _, _ := c.params(*count)
		t, err := r.s.Time(fn, c.grid, p, 1)
		if err != nil {
			return 0, err
		}
		if t <= 0 {
			return 0, fmt.Errorf("%s: %w", c.kernel.Name, errGone)
		}
		if !c.scalable || t >= launchTime/2 || *count >= 1<<30 {
			return t, nil
		}
		*count = uint64(math.Ceil(float64(*count) * max(2, float64(launchTime)/float64(t))))
	}
}

// search evaluates configs and returns the best one's index and result.
func (r *run) search(ctx context.Context, configs []config, flopsRate bool) (int, measured, error) {
	ms := make([]measured, len(configs))
	t, err := stats.Search(ctx, len(configs), stats.Forward, func(ctx context.Context, i int, best float64) (stats.Result, error) {
		m, err := r.evaluate(ctx, configs[i], best, flopsRate)
		ms[i] = m
		return m.res, err
	})
	if err != nil {
		return 0, measured{}, err
	}
	return t.Best, ms[t.Best], nil
}

// grids are the launch shapes searched: blocks per SM by threads per
// block, within the SM's limits.
func (r *run) grids() []cuda.Grid {
	in := r.s.Info
	bps, tpb := []int{1, 2, 4, 8}, []int{128, 256, 512, 1024}
	if r.o.Quick {
		bps, tpb = []int{2, 4}, []int{256, 512}
	}
	var out []cuda.Grid
	for _, b := range bps {
		for _, t := range tpb {
			if b*t > in.MaxThreadsSM || b > in.MaxBlocksSM || t > in.MaxThreadsBlk {
				continue
			}
			out = append(out, cuda.Grid{Blocks: uint32(b * in.SMs), Threads: uint32(t)})
		}
	}
	return out
}

// defaultGrid is where the kernel search runs: 4 blocks of 256 threads
// per SM (32 warps: 8 per scheduler, enough to cover an FMA's latency
// with one chain each).
func (r *run) defaultGrid() cuda.Grid {
	return cuda.Grid{Blocks: uint32(4 * r.s.Info.SMs), Threads: 256}
}

func launchOf(g cuda.Grid) roofline.GPULaunch {
	return roofline.GPULaunch{Blocks: int(g.Blocks), Threads: int(g.Threads)}
}

func interval(res stats.Result) (roofline.Interval, bool) {
	e := res.Estimate
	if !e.Bounded() {
		return roofline.Interval{Lo: e.Value, Hi: e.Value}, true
	}
	return roofline.Interval{Lo: e.Lo, Hi: e.Hi}, false
}
