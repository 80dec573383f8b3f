package cupti

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/ianlancetaylor/demangle"

	"github.com/rprof/rprof/gpu/metrics"
	"github.com/rprof/rprof/roofline"
)

// ErrNoCUDA: no process of the target initialised CUDA, so none loaded
// the injection library and there is nothing to place.
var ErrNoCUDA = errors.New("the target never initialised CUDA: no process loaded rprof's CUPTI library, so no kernel was recorded")

// ErrNoKernels: CUPTI recorded, but the target launched no kernel.
var ErrNoKernels = errors.New("CUPTI recorded no kernel: the target initialised CUDA but launched none")

// ErrInsufficientPrivileges matches an *UnavailableError whose CUPTI call
// was refused for want of privileges (NVreg_RestrictProfilingToAdminUsers).
var ErrInsufficientPrivileges = errors.New("profiling is restricted to administrators")

// UnavailableError is a run in which no process could record: CUPTI was
// not found, too old, or refused (Call).
type UnavailableError struct {
	PID int
	// Reason is one of the Reason constants, or "" when Call failed.
	Reason, Detail string
	Call           *CallError
}

func (e *UnavailableError) Error() string {
	switch {
	case e.Call != nil && e.Call.Code == ResultInsufficientPrivileges:
		return fmt.Sprintf("CUPTI refused: %v: %v", e.Call, ErrInsufficientPrivileges)
	case e.Call != nil:
		return fmt.Sprintf("CUPTI failed in the target: %v", e.Call)
	case e.Reason == ReasonNoLibrary:
		return "no CUPTI library: " + e.Detail
	case e.Reason == ReasonTooOld:
		return "CUPTI too old: " + e.Detail
	}
	return "CUPTI unusable: " + e.Detail
}

// Is makes a refusal for want of privileges match
// ErrInsufficientPrivileges.
func (e *UnavailableError) Is(target error) bool {
	return target == ErrInsufficientPrivileges && e.Call != nil && e.Call.Code == ResultInsufficientPrivileges
}

// Recording is what every process of one run recorded.
type Recording struct {
	Processes []Process
}

// Launches are every kernel launch recorded, or why there is none:
// ErrNoCUDA, *UnavailableError (from the first process that could not
// record), ErrNoKernels.
func (r Recording) Launches() ([]Kernel, error) {
	if len(r.Processes) == 0 {
		return nil, ErrNoCUDA
	}
	var out []Kernel
	recording := false
	for _, p := range r.Processes {
		recording = recording || p.Recording
		out = append(out, p.Kernels...)
	}
	if !recording {
		p := r.Processes[0]
		e := &UnavailableError{PID: p.PID, Reason: p.Unavailable, Detail: p.Detail}
		if len(p.Errors) > 0 {
			e.Call = &p.Errors[0]
		}
		return nil, e
	}
	if len(out) == 0 {
		return nil, ErrNoKernels
	}
	return out, nil
}

// Version is the CUPTI API version the processes opened (0: none).
func (r Recording) Version() int {
	for _, p := range r.Processes {
		if p.Version > 0 {
			return p.Version
		}
	}
	return 0
}

// Flags are what the points of the run should carry beyond their tier:
// records lost (dropped by CUPTI, or a process that did not exit and
// flush), and a CUPTI newer than the record layout was checked against.
func (r Recording) Flags() []roofline.Flag {
	var lost []string
	var flags []roofline.Flag
	unverified := false
	for _, p := range r.Processes {
		if p.Dropped > 0 {
			lost = append(lost, fmt.Sprintf("CUPTI dropped %d records in process %d", p.Dropped, p.PID))
		}
		if p.Untimed > 0 {
			lost = append(lost, fmt.Sprintf("%d kernel records in process %d ended no later than they started and are left out", p.Untimed, p.PID))
		}
		if p.Recording && !p.Complete {
			lost = append(lost, fmt.Sprintf("process %d did not exit normally, so its last records were not flushed", p.PID))
		}
		if p.UnverifiedLayout && !unverified {
			unverified = true
			flags = append(flags, roofline.Flag{Code: roofline.FlagUnverifiedLayout, Subject: roofline.SubjectSeconds,
				Message: fmt.Sprintf("CUPTI API version %d is newer than %d, the last whose kernel record layout rprof checked (docs/gpu.md)", p.Version, p.CheckedVersion)})
		}
	}
	if len(lost) > 0 {
		flags = append(flags, roofline.Flag{Code: roofline.FlagLostRecords, Subject: roofline.SubjectSeconds,
			Message: strings.Join(lost, "; ") + ": kernels are missing"})
	}
	return flags
}

// Group is one kernel's launches on one device, summed.
type Group struct {
	Name     string
	Device   int
	Launches int
	// Nanoseconds is the launches' GPU time, summed.
	Nanoseconds uint64
}

// Seconds is the launches' GPU time, summed.
func (g Group) Seconds() float64 { return float64(g.Nanoseconds) / 1e9 }

// Groups sums launches by kernel name and device, in the order of their
// first launch.
func Groups(ks []Kernel) []Group {
	var out []Group
	for _, launches := range metrics.ByKernel(ks, func(k Kernel) (int, string) { return k.Device, k.Name }) {
		g := Group{Name: launches[0].Name, Device: launches[0].Device, Launches: len(launches)}
		for _, k := range launches {
			g.Nanoseconds += k.End - k.Start
		}
		out = append(out, g)
	}
	return out
}

// ProfilerNeeds is what tier (a) needs, said alike by the points of
// rprof run --gpu and by rprof doctor.
const ProfilerNeeds = "W and Q per kernel (tier a) need CUPTI's range profiler"

// TimesOnly is why the points carry no W or Q when no process ran the
// range profiler and none said why: it was started but no CUDA context
// creation reached it.
const TimesOnly = "kernel times only (tier c): " + ProfilerNeeds + ", which saw no CUDA context created"

// Profile is what the range profiler gave a group: its W and Q, or why
// it has none (the reason its point carries).
type Profile struct {
	Figures *metrics.Figures
	Why     string
}

// Profile sums the ranges of g's kernel on g's device. It has figures
// only when the profiler measured every launch the activity API timed,
// each with every metric W and Q need (a finite value, not negative);
// the L2 and L1 bytes are kept where every range has them.
func (r Recording) Profile(g Group) Profile {
	n, sums, counts := 0, map[string]float64{}, map[string]int{}
	for _, p := range r.Processes {
		for _, rg := range p.Ranges {
			if rg.Device != g.Device || rg.Name != g.Name {
				continue
			}
			n++
			for m, v := range rg.Values {
				if !math.IsNaN(v) && !math.IsInf(v, 0) && v >= 0 {
					sums[m] += v
					counts[m]++
				}
			}
		}
	}
	if n != g.Launches {
		why := fmt.Sprintf("kernel times only (tier c): CUPTI's range profiler measured %d of its %d launches", n, g.Launches)
		if d := r.rangesDropped(); d > 0 {
			why += fmt.Sprintf("; it dropped %d launches past the ranges a session holds", d)
		}
		if off := r.profilerOff(); off != "" {
			why += "; " + off
		} else if n == 0 && !r.profiling() {
			why = TimesOnly
		}
		return Profile{Why: why}
	}
	for _, m := range metrics.Required() {
		if counts[m] != n {
			return Profile{Why: fmt.Sprintf("kernel times only (tier c): CUPTI's range profiler gave %s for %d of its %d launches", m, counts[m], n)}
		}
	}
	for m, c := range counts {
		if c != n {
			delete(sums, m)
		}
	}
	f := metrics.Evaluate(sums)
	return Profile{Figures: &f}
}

func (r Recording) rangesDropped() uint64 {
	var n uint64
	for _, p := range r.Processes {
		n += p.RangesDropped
	}
	return n
}

func (r Recording) profiling() bool {
	for _, p := range r.Processes {
		if p.Profiling {
			return true
		}
	}
	return false
}

// profilerOff is why the range profiler did not run in the first process
// where it failed ("": it failed in none).
func (r Recording) profilerOff() string {
	for _, p := range r.Processes {
		if e := p.ProfilerOff; e != nil {
			why := fmt.Sprintf("the range profiler failed in process %d: %v", p.PID, e)
			if e.Code == ResultInsufficientPrivileges {
				why += ": " + ErrInsufficientPrivileges.Error()
			}
			return why
		}
	}
	return ""
}

// Device is what the driver says of the device a kernel ran on; its
// clocks are the driver's peak clocks.
type Device struct {
	Name                    string
	ComputeCapability       string
	SMClockMHz, MemClockMHz float64
}

// Point is the group's point: T its summed GPU time from the activity
// API, with W and Q by level from prof where it has them, else flagged
// gpu-times-only with prof's reason; with the device and its clocks where
// dev is known (nil: the device index alone).
func (g Group) Point(dev *Device, prof Profile, here roofline.Machine, created time.Time) roofline.Point {
	// CUPTI names kernels as compiled (C++ names mangled); Nsight Compute
	// and the points show them demangled.
	k := &roofline.GPUKernel{Kernel: demangle.Filter(g.Name), Launches: g.Launches, Device: g.Device, Tool: "cupti"}
	if dev != nil {
		k.DeviceName, k.ComputeCapability = dev.Name, dev.ComputeCapability
		k.SMClockMHz, k.MemClockMHz, k.ClockSource = dev.SMClockMHz, dev.MemClockMHz, roofline.ClockSourceAttribute
	}
	p := metrics.Point(k, roofline.KernelLabel(demangle.Filter(g.Name, demangle.NoParams)), g.Seconds(), here, created)
	if prof.Figures == nil {
		p.Flags = append(p.Flags, roofline.Flag{Code: roofline.FlagGPUTimesOnly, Subject: roofline.SubjectPlacement, Message: prof.Why})
		return p
	}
	k.Tool = ToolProfiler
	prof.Figures.Set(&p)
	return p
}

// ToolProfiler names CUPTI's range profiler as a point's GPU tool.
const ToolProfiler = "cupti-profiler"
