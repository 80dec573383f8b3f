package roofline

import (
	"fmt"
	"strings"
)

// GPURoofs are one GPU's measured ceilings (rprof roofs --gpu): FMA roofs
// per precision, memory roofs per level, the ERT-style ladder, each with
// the clocks recorded beside it.
type GPURoofs struct {
	Device  GPUDevice        `json:"device"`
	Compute []GPUComputeRoof `json:"compute"`
	Memory  []GPUMemoryRoof  `json:"memory"`
	Ladder  []GPULadderStep  `json:"ladder,omitempty"`
	Flags   []Flag           `json:"flags,omitempty"`
}

// GPUDevice is what the driver says of the device measured.
type GPUDevice struct {
	Index int    `json:"index"`
	Name  string `json:"name"`
	// ComputeCapability is "major.minor", e.g. "9.0".
	ComputeCapability string `json:"compute_capability"`
	SMs               int    `json:"sms"`
	// SMClockMHz and MemClockMHz are the driver's peak clocks
	// (CU_DEVICE_ATTRIBUTE_CLOCK_RATE, MEMORY_CLOCK_RATE), not the
	// clocks the benchmark ran at.
	SMClockMHz   float64 `json:"sm_clock_mhz"`
	MemClockMHz  float64 `json:"mem_clock_mhz"`
	BusWidthBits int     `json:"bus_width_bits"`
	L2Bytes      int64   `json:"l2_bytes"`
	MemoryBytes  int64   `json:"memory_bytes"`
	// Driver is the CUDA driver API version, "12.4".
	Driver string `json:"driver"`
}

// GPULaunch is a launch configuration.
type GPULaunch struct {
	Blocks  int `json:"blocks"`
	Threads int `json:"threads"` // per block
}

// GPUClocks are the clocks recorded beside a roof, with where they came
// from: ClockSourceAttribute (the driver's peak clocks: the device may
// have run slower, or, boosting, faster) or ClockSourceMeasured (the SM
// clock measured by the roof's own kernel; the memory clock the
// driver's).
type GPUClocks struct {
	SMClockMHz  float64 `json:"sm_clock_mhz"`
	MemClockMHz float64 `json:"mem_clock_mhz"`
	Source      string  `json:"source"`
}

// Sources of GPUClocks.
const (
	// ClockSourceAttribute: the clocks are the driver's device
	// attributes.
	ClockSourceAttribute = "attribute"
	// ClockSourceMeasured: the SM clock is the cycles of the kernel's SM
	// over the global timer's nanoseconds around its loop, on the roof's
	// own configuration; the memory clock is the attribute.
	ClockSourceMeasured = "measured-sm"
)

// GPUComputeRoof is an FMA ceiling of one precision.
type GPUComputeRoof struct {
	Name      string   `json:"name"`      // "gpu-fma-fp64"
	Precision string   `json:"precision"` // fp64, fp32, fp16
	GFlops    float64  `json:"gflops"`
	CI        Interval `json:"ci"`
	// IntervalUnknown: too few samples for an interval.
	IntervalUnknown bool `json:"interval_unknown,omitempty"`
	// TheoreticalGFlops is SMs x FMA per SM per clock x 2 x the SM clock
	// recorded; absent when rprof's table lacks the compute capability.
	TheoreticalGFlops float64 `json:"theoretical_gflops,omitempty"`
	// PeakSource says where the FMA rate per SM per clock came from.
	PeakSource string `json:"peak_source,omitempty"`
	// Kernel and Launch are the configuration that reached the roof: the
	// PTX kernel (ILP, unroll) and its grid.
	Kernel string    `json:"kernel"`
	ILP    int       `json:"ilp"`
	Launch GPULaunch `json:"launch"`
	Clocks GPUClocks `json:"clocks"`
}

// GPUMemoryRoof is a bandwidth ceiling of one memory level: DRAM (HBM or
// GDDR), L2, or L1 (the SMs' L1 and shared memory).
type GPUMemoryRoof struct {
	Level      string   `json:"level"`  // DRAM, L2, L1
	Kernel     string   `json:"kernel"` // read, copy, triad
	GBytesPerS float64  `json:"gbytes_per_s"`
	CI         Interval `json:"ci"`
	// IntervalUnknown: too few samples for an interval.
	IntervalUnknown bool `json:"interval_unknown,omitempty"`
	// WorkingSetBytes is what the kernel touched, all arrays together.
	WorkingSetBytes int64 `json:"working_set_bytes"`
	// TheoreticalGBytesPerS (DRAM only): 2 x memory clock x bus width
	// (double data rate).
	TheoreticalGBytesPerS float64   `json:"theoretical_gbytes_per_s,omitempty"`
	Launch                GPULaunch `json:"launch"`
	Clocks                GPUClocks `json:"clocks"`
}

// GPULadderStep is one rung of the ERT-style ladder: a kernel reading and
// writing DRAM with FlopsPerByte FLOPs per byte moved.
type GPULadderStep struct {
	FlopsPerByte float64  `json:"flops_per_byte"`
	GFlops       float64  `json:"gflops"`
	GBytesPerS   float64  `json:"gbytes_per_s"`
	CI           Interval `json:"ci"` // of GFlops
}

// GPUKernel says which GPU kernel a point is and where it ran: the device
// and the clocks the profiler saw (rprof import ncu).
type GPUKernel struct {
	// Kernel is the kernel's name as the profiler gives it; Launches is
	// how many launches the point sums.
	Kernel   string `json:"kernel"`
	Launches int    `json:"launches"`
	// Device is the profiler's device index, DeviceName its name where the
	// report gives it, ComputeCapability "major.minor".
	Device            int    `json:"device"`
	DeviceName        string `json:"device_name,omitempty"`
	ComputeCapability string `json:"compute_capability,omitempty"`
	// SMClockMHz and MemClockMHz are the clocks the profiler measured
	// (their mean over the launches, weighted by time); 0 when the
	// report lacks them.
	SMClockMHz  float64 `json:"sm_clock_mhz,omitempty"`
	MemClockMHz float64 `json:"mem_clock_mhz,omitempty"`
	// ClockSource is "" when the profiler measured the clocks, or
	// ClockSourceAttribute when they are the driver's peak clocks (rprof
	// run --gpu without counters).
	ClockSource string `json:"clock_source,omitempty"`
	// LevelBytes are the bytes moved at each level, the hierarchical
	// roofline's Q: "L1" (SMs to L1), "L2" (L1 to L2), "DRAM" (L2 to
	// memory); a level the report lacks is absent.
	LevelBytes map[string]float64 `json:"level_bytes,omitempty"`
	// Tool is what measured the point: "ncu" (Nsight Compute's report) or
	// "cupti" (rprof run --gpu).
	Tool string `json:"tool"`
}

// FlagGPUTimesOnly: a GPU kernel's point has its time but no W or Q, and
// the message says why (rprof run --gpu without counters).
const FlagGPUTimesOnly = "gpu-times-only"

// FlagUnverifiedLayout: the GPU kernels were read from CUPTI records of
// a version newer than the one whose layout rprof checked.
const FlagUnverifiedLayout = "unverified-layout"

// KernelLabel is a GPU kernel's name without its parameter list, for a
// point's label: "triad" for "triad(double *, const double *)".
func KernelLabel(name string) string {
	if i := strings.IndexByte(name, '('); i > 0 {
		return name[:i]
	}
	return name
}

// GPUThreads is the thread scope a GPU's roofs take in the roofs view
// (Roofs.GPUView): a GPU is one scope, the whole device.
const GPUThreads = 1

// GPU returns the roofs of the GPU of index i.
func (r *Roofs) GPU(i int) (*GPURoofs, bool) {
	for k := range r.GPUs {
		if r.GPUs[k].Device.Index == i {
			return &r.GPUs[k], true
		}
	}
	return nil, false
}

// GPUView is a roofs document whose compute and bandwidth roofs are the
// GPU's (one thread scope, GPUThreads), so that whatever draws and places
// under roofs draws and places under the GPU's.
func (r *Roofs) GPUView(g *GPURoofs) *Roofs {
	v := &Roofs{Schema: r.Schema, Created: r.Created, Machine: r.Machine, Flags: g.Flags}
	for _, c := range g.Compute {
		v.Compute = append(v.Compute, ComputeRoof{Name: c.Name, ISA: "gpu", Precision: c.Precision, Threads: GPUThreads,
			GFlops: c.GFlops, CI: c.CI, IntervalUnknown: c.IntervalUnknown, TheoreticalGFlops: c.TheoreticalGFlops,
			FrequencyGHz: c.Clocks.SMClockMHz / 1000})
	}
	for _, m := range g.Memory {
		v.Bandwidth = append(v.Bandwidth, BandwidthRoof{Level: m.Level, Kernel: m.Kernel, Threads: GPUThreads,
			GBytesPerS: m.GBytesPerS, CI: m.CI, IntervalUnknown: m.IntervalUnknown, WorkingSetBytes: m.WorkingSetBytes})
	}
	return v
}

// validateGPUs checks every GPU roof's figure and interval.
func validateGPUs(path string, gs []GPURoofs) error {
	for i, g := range gs {
		for j, c := range g.Compute {
			f := fmt.Sprintf("gpus[%d].compute[%d] (%s)", i, j, c.Name)
			if err := figures(path, f, field{".gflops", c.GFlops}, field{".ci.lo", c.CI.Lo}, field{".ci.hi", c.CI.Hi}, field{".theoretical_gflops", c.TheoreticalGFlops}); err != nil {
				return err
			}
		}
		for j, m := range g.Memory {
			f := fmt.Sprintf("gpus[%d].memory[%d] (%s)", i, j, m.Level)
			if err := figures(path, f, field{".gbytes_per_s", m.GBytesPerS}, field{".ci.lo", m.CI.Lo}, field{".ci.hi", m.CI.Hi}, field{".theoretical_gbytes_per_s", m.TheoreticalGBytesPerS}); err != nil {
				return err
			}
		}
	}
	return nil
}
