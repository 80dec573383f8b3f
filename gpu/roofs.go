package gpu

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/rprof/rprof/gpu/cuda"
	"github.com/rprof/rprof/gpu/ptx"
	"github.com/rprof/rprof/roofline"
)

// fmaConfig is an FMA kernel on a grid: (out, iters); out receives the
// kernel's ClockRecord.
func (r *run) fmaConfig(k ptx.Kernel, g cuda.Grid) config {
	threads := float64(g.Blocks) * float64(g.Threads)
	return config{kernel: k, grid: g, scalable: true, params: func(iters uint64) ([]uint64, float64, float64) {
		return []uint64{uint64(r.clock), iters}, threads * float64(iters) * float64(k.Flops), 0
	}}
}

// compute searches precision's FMA kernels (ILP by unroll) on the default
// grid, then the best kernel's grids, and returns the roof.
func (r *run) compute(ctx context.Context, precision string) (roofline.GPUComputeRoof, error) {
	r.o.progress("gpu: FMA %s", precision)
	var configs []config
	for _, k := range ptx.Kernels {
		if k.Kind == ptx.FMA && k.Precision == precision {
			configs = append(configs, r.fmaConfig(k, r.defaultGrid()))
		}
	}
	i, _, err := r.search(ctx, configs, true)
	if err != nil {
		return roofline.GPUComputeRoof{}, fmt.Errorf("FMA %s: %w", precision, err)
	}
	k := configs[i].kernel
	configs = configs[:0]
	for _, g := range r.grids() {
		configs = append(configs, r.fmaConfig(k, g))
	}
	i, m, err := r.search(ctx, configs, true)
	if err != nil {
		return roofline.GPUComputeRoof{}, fmt.Errorf("FMA %s: %w", precision, err)
	}
	clocks, err := r.smClock(configs[i], m.count)
	if err != nil {
		return roofline.GPUComputeRoof{}, fmt.Errorf("FMA %s: %w", precision, err)
	}
	ci, unknown := interval(m.res)
	roof := roofline.GPUComputeRoof{Name: "gpu-fma-" + precision, Precision: precision,
		GFlops: m.res.Estimate.Value, CI: ci, IntervalUnknown: unknown,
		Kernel: k.Name, ILP: k.ILP, Launch: launchOf(configs[i].grid), Clocks: clocks}
	in := r.s.Info
	roof.TheoreticalGFlops, roof.PeakSource = theoretical(in.Major, in.Minor, in.SMs, clocks.SMClockMHz, precision)
	return roof, nil
}

// smClock runs an FMA configuration once more and reads the SM clock its
// loop ran at from its ClockRecord; the attribute's clocks when the
// timer did not move.
func (r *run) smClock(c config, count uint64) (roofline.GPUClocks, error) {
	fn, err := r.function(c.kernel.Name)
	if err != nil {
		return r.clocks, err
	}
	p, _, _ := c.params(count)
	if _, err := r.s.Time(fn, c.grid, p, 1); err != nil {
		return r.clocks, err
	}
	var b [ptx.ClockRecordBytes]byte
	if err := r.s.Read(b[:], r.clock); err != nil {
		return r.clocks, err
	}
	rec := ptx.ClockRecord{StartNs: le(b[0:]), StartCycles: le(b[8:]), EndNs: le(b[16:]), EndCycles: le(b[24:])}
	mhz := rec.SMClockMHz()
	if mhz <= 0 {
		return r.clocks, nil
	}
	return roofline.GPUClocks{SMClockMHz: mhz, MemClockMHz: r.clocks.MemClockMHz, Source: roofline.ClockSourceMeasured}, nil
}

// le reads a little-endian u64 (device memory on every CUDA GPU).
func le(b []byte) uint64 { return binary.LittleEndian.Uint64(b) }

// level is a memory level: its name and the working set the bandwidth
// kernels sweep there, all arrays together.
type level struct {
	name       string
	workingSet func(in cuda.Info, arrayBytes uint64) uint64
}

// levels are measured in this order; DRAM's launch shape is the ladder's.
var levels = []level{
	// DRAM: every array at its full size (dramArrayBytes).
	{roofline.LevelDRAM, func(_ cuda.Info, arrayBytes uint64) uint64 { return 3 * arrayBytes }},
	// L2: a quarter of it, within one partition of the L2s that have two
	// (an SM reaches the far one slower).
	{roofline.LevelL2, func(in cuda.Info, _ uint64) uint64 { return uint64(in.L2Bytes) / 4 }},
	// L1: 32 KiB per SM, within every L1 of rprof's compute capabilities
	// (each SM's blocks read their own share, pass after pass).
	{roofline.LevelL1, func(in cuda.Info, _ uint64) uint64 { return uint64(in.SMs) * 32 << 10 }},
}

// bandwidthConfig is a bandwidth kernel over a working set: (a, b, c, n,
// passes), n vectors per array.
func (r *run) bandwidthConfig(k ptx.Kernel, g cuda.Grid, n uint64, dram bool) config {
	return config{kernel: k, grid: g, scalable: !dram, params: func(passes uint64) ([]uint64, float64, float64) {
		p := []uint64{uint64(r.arrays[0]), uint64(r.arrays[1]), uint64(r.arrays[2]), n, passes}
		e := float64(n) * float64(passes)
		return p, e * float64(k.Flops), e * float64(k.Bytes)
	}}
}

// arraysOf is how many arrays a bandwidth kernel touches: 16 bytes of
// each per vector.
func arraysOf(k ptx.Kernel) uint64 { return uint64(k.Bytes / 16) }

func (r *run) memory(ctx context.Context, l level) (roofline.GPUMemoryRoof, error) {
	r.o.progress("gpu: %s bandwidth", l.name)
	ws := l.workingSet(r.s.Info, r.arrayN*16)
	var configs []config
	for _, k := range ptx.Kernels {
		if k.Kind != ptx.Bandwidth {
			continue
		}
		n := min(ws/16/arraysOf(k), r.arrayN)
		for _, g := range r.grids() {
			configs = append(configs, r.bandwidthConfig(k, g, n, l.name == roofline.LevelDRAM))
		}
	}
	i, m, err := r.search(ctx, configs, false)
	if err != nil {
		return roofline.GPUMemoryRoof{}, fmt.Errorf("%s bandwidth: %w", l.name, err)
	}
	c := configs[i]
	p, _, _ := c.params(1)
	ci, unknown := interval(m.res)
	roof := roofline.GPUMemoryRoof{Level: l.name, Kernel: c.kernel.Op, GBytesPerS: m.res.Estimate.Value, CI: ci,
		IntervalUnknown: unknown, WorkingSetBytes: int64(p[3] * 16 * arraysOf(c.kernel)),
		Launch: launchOf(c.grid), Clocks: r.clocks}
	if l.name == roofline.LevelDRAM {
		roof.TheoreticalGBytesPerS = dramPeak(r.clocks.MemClockMHz, r.dev.BusWidthBits)
	}
	return roof, nil
}

// ladder runs the ERT-style kernels over DRAM's arrays on DRAM's launch
// shape, one evaluation each.
func (r *run) ladder(ctx context.Context, launch roofline.GPULaunch) ([]roofline.GPULadderStep, error) {
	r.o.progress("gpu: FLOPs-per-byte ladder")
	g := cuda.Grid{Blocks: uint32(launch.Blocks), Threads: uint32(launch.Threads)}
	var out []roofline.GPULadderStep
	for _, k := range ptx.Kernels {
		if k.Kind != ptx.Ladder {
			continue
		}
		c := config{kernel: k, grid: g, params: func(passes uint64) ([]uint64, float64, float64) {
			e := float64(r.arrayN) * float64(passes)
			return []uint64{uint64(r.arrays[0]), r.arrayN, passes}, e * float64(k.Flops), e * float64(k.Bytes)
		}}
		m, err := r.evaluate(ctx, c, 0, true)
		if err != nil {
			return nil, fmt.Errorf("ladder %s: %w", k.Name, err)
		}
		ci, _ := interval(m.res)
		out = append(out, roofline.GPULadderStep{FlopsPerByte: float64(k.Flops) / float64(k.Bytes),
			GFlops: m.res.Estimate.Value, GBytesPerS: m.gbytes, CI: ci})
	}
	return out, nil
}

// checkPeaks flags roofs without a theoretical peak, and roofs above it
// (the SM clock boosted past the attribute's, or the table is wrong).
func (r *run) checkPeaks(g *roofline.GPURoofs) []roofline.Flag {
	var flags []roofline.Flag
	for _, c := range g.Compute {
		switch {
		case c.TheoreticalGFlops == 0:
			flags = append(flags, roofline.Flag{Code: roofline.FlagGPUNoPeak, Subject: c.Name,
				Message: fmt.Sprintf("compute capability %s is not in rprof's table of FMA rates: %s has no theoretical peak", g.Device.ComputeCapability, c.Name)})
		case c.CI.Lo > c.TheoreticalGFlops:
			flags = append(flags, roofline.Flag{Code: roofline.FlagAboveTheory, Subject: c.Name,
				Message: fmt.Sprintf("%s measured above its theoretical peak at the recorded %.0f MHz: the SM clock ran faster, or the table's rate is wrong", c.Name, c.Clocks.SMClockMHz)})
		}
	}
	return flags
}
