package measure

import (
	"fmt"
	"strings"
	"time"

	"github.com/rprof/rprof/measure/emulate"
	"github.com/rprof/rprof/pmu"
	"github.com/rprof/rprof/roofline"
)

// emulatedRun is the one run of the target under emulation that gives an
// emulated point its W and Q.
type emulatedRun struct {
	result emulate.Result
	qemu   emulate.QEMU
	wall   time.Duration
	exit   int
	signal string
}

// killed reports whether a signal ended the emulated run: a Ctrl-C there
// must not be followed by native runs (a target that merely exits nonzero
// is still timed, as `rprof run` times failing targets).
func (e *emulatedRun) killed() bool { return e.signal != "" }

// emulatedISA is what QEMU 7.2's TCG offers an x86-64 guest.
const emulatedISA = "x86-64 up to AVX2 and FMA (no AVX-512)"

// maxFunctions bounds the function table of a point: those with at least
// 0.1% of W or Q, most FLOPs first.
const maxFunctions = 25

// emulationNotes are the flags known before an emulated run.
func emulationNotes(cpu pmu.CPUInfo, cfg Config) []roofline.Flag {
	var notes []roofline.Flag
	if cpu.HasFlag("avx512f") {
		notes = append(notes, roofline.Flag{Code: roofline.FlagEmulatedISA,
			Message: "W and Q were counted under QEMU, which emulates x86-64 up to AVX2 and FMA; this CPU has AVX-512, so the native runs that give T may take wider code paths than the counted one"})
	}
	if m := cacheModel(cfg); m.Enabled() {
		notes = append(notes, roofline.Flag{Code: roofline.FlagModelled,
			Message: fmt.Sprintf("Q is modelled, not measured: an LRU write-back, write-allocate cache model (%s, sizes from %s) fed by every emulated access, each thread with its own caches; prefetchers and coherence traffic are not modelled", m, m.Source)})
	} else {
		notes = append(notes, roofline.Flag{Code: roofline.FlagNoUncore,
			Message: "no cache model (--cache-model none): Q and the intensity are unknown"})
	}
	return notes
}

func cacheModel(cfg Config) emulate.CacheModel {
	if cfg.CacheModel != nil {
		return *cfg.CacheModel
	}
	return emulate.DefaultCacheModel()
}

// describeEmulated fills an emulated point's work split, level traffic,
// function table and emulation block, and flags execs that ran uncounted.
func describeEmulated(p *roofline.Point, e *emulatedRun) {
	r := e.result
	w := float64(r.Flops())
	p.WorkByPrecision = map[string]float64{}
	for k, v := range r.Work {
		p.WorkByPrecision[k] = float64(v)
	}
	byWidth := map[string]float64{}
	for k, v := range r.WorkByWidth {
		byWidth[k] = float64(v)
	}
	if dram, ok := r.DRAM(); ok {
		p.ReadBytes, p.WriteBytes = ptr(float64(dram.Read)), ptr(float64(dram.Write))
		p.Levels = append(p.Levels, levelRow("core", "L1", r.Core, w))
		for _, l := range r.Levels {
			p.Levels = append(p.Levels, levelRow(l.Upper, l.Lower, l.Traffic, w))
		}
	}
	dram, _ := r.DRAM()
	for _, f := range r.Functions {
		// Functions below 0.1% of both W and Q would only bury the rest.
		if len(p.Functions) == maxFunctions {
			break
		}
		if float64(f.Flops) < w/1000 && float64(f.DRAM) < float64(dram.Total())/1000 || f.Flops == 0 && f.DRAM == 0 {
			continue
		}
		fc := roofline.FunctionCount{Name: f.Name, Object: f.Object, WorkFlops: float64(f.Flops),
			TrafficBytes: float64(f.DRAM), CoreBytes: float64(f.Core)}
		if f.DRAM > 0 && r.Model.Enabled() {
			fc.Intensity = ptr(float64(f.Flops) / float64(f.DRAM))
		}
		p.Functions = append(p.Functions, fc)
	}
	p.Emulation = &roofline.Emulation{
		Emulator:         fmt.Sprintf("%s %s", emulate.QEMUBinary, e.qemu.Version),
		PluginAPI:        e.qemu.PluginAPI,
		ISA:              emulatedISA,
		CacheModel:       r.Model.String(),
		CacheModelSource: r.Model.Source,
		WorkByWidth:      byWidth,
		Images:           r.Images,
		Threads:          r.Threads,
		Seconds:          e.wall.Seconds(),
	}
	if len(r.NotCounted) > 0 {
		p.Flags = append(p.Flags, roofline.Flag{Code: roofline.FlagNotCounted,
			Message: fmt.Sprintf("the target exec'd programs that ran natively and were not counted (%s): W and Q leave out their work", strings.Join(r.NotCounted, ", "))})
	}
	if r.SharedSlot {
		p.Flags = append(p.Flags, roofline.Flag{Code: roofline.FlagMissingCounter,
			Message: "more threads were alive at once than the emulation plugin has counter slots (1024): some threads shared counters, which may have lost updates"})
	}
	if r.Unattributed {
		p.Flags = append(p.Flags, roofline.Flag{Code: roofline.FlagMissingCounter,
			Message: "QEMU placed the guest away from host addresses: functions could not be named and execs were not followed"})
	}
}

// untimed clears the time and rates of a point whose target was killed
// under emulation and not run natively.
func untimed(p *roofline.Point) {
	p.Seconds, p.CI.Seconds, p.CI.GFlops = 0, roofline.Interval{}, nil
	p.GFlops, p.GBytesPerS, p.Samples.Seconds = nil, nil, nil
	p.Flags = append(p.Flags, roofline.Flag{Code: roofline.FlagNoTime,
		Message: "the target was killed by a signal under emulation, so it was not run natively: T, GFLOP/s and GB/s are unknown, and W and Q cover the partial run"})
}

func levelRow(upper, lower string, t emulate.Traffic, w float64) roofline.LevelTraffic {
	row := roofline.LevelTraffic{Upper: upper, Lower: lower, ReadBytes: float64(t.Read), WriteBytes: float64(t.Write)}
	if t.Total() > 0 {
		row.Intensity = ptr(w / float64(t.Total()))
	}
	return row
}
