package measure

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/rprof/rprof/measure/emulate"
	"github.com/rprof/rprof/pmu"
	"github.com/rprof/rprof/roofline"
)

// recordedEmulation is an emulated run of a TRIAD-like kernel as the
// plugin reports it.
func recordedEmulation(exit int, signal string) *emulatedRun {
	return &emulatedRun{
		qemu: emulate.QEMU{Path: "/usr/bin/qemu-x86_64", Version: "7.2.22", PluginAPI: 1},
		wall: 3 * time.Second, exit: exit, signal: signal,
		result: emulate.Result{
			Work:        map[string]uint64{"fp64": 2_000_000},
			WorkByWidth: map[string]uint64{"256": 2_000_000},
			Core:        emulate.Traffic{Read: 16_000_000, Write: 8_000_000},
			Levels: []emulate.LevelTraffic{
				{Upper: "L1", Lower: "L2", Traffic: emulate.Traffic{Read: 24_000_000, Write: 8_000_000}},
				{Upper: "L2", Lower: "DRAM", Traffic: emulate.Traffic{Read: 24_000_000, Write: 8_000_000}},
			},
			Model:  emulate.CacheModel{Line: 64, Source: "flag", Levels: []emulate.Level{{Name: "L1", Size: 32 << 10, Ways: 8}, {Name: "L2", Size: 1 << 20, Ways: 16}}},
			Images: 1, Threads: 1,
			Functions: []emulate.Function{
				{Name: "triad", Object: "k", Flops: 2_000_000, DRAM: 30_000_000, Core: 24_000_000},
				{Name: "[exit write-back]", DRAM: 2_000_000},
				{Name: "tiny", Object: "k", Flops: 1, DRAM: 64},
			},
			NotCounted: []string{"/bin/true"},
		},
	}
}

func emulatedDeps(f *fakeDeps, e *emulatedRun) deps {
	d := f.deps()
	d.emulate = func(ctx context.Context, cfg Config) (*emulatedRun, error) { return e, nil }
	return d
}

func TestEmulatedPointTakesWAndQFromOneEmulatedRunAndTFromNativeRuns(t *testing.T) {
	f := &fakeDeps{res: resolved{source: roofline.SourceEmulated}, outs: timed(0.5, 0.5, 0.5)}
	cfg := Config{Command: []string{"k"}, Repeat: 3, Count: CountEmulate}
	p, err := run(context.Background(), cfg, emulatedDeps(f, recordedEmulation(0, "")))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.ran) != 3 {
		t.Errorf("ran natively %d times, want 3", len(f.ran))
	}
	if p.Source != roofline.SourceEmulated || *p.WorkFlops != 2e6 || *p.TrafficBytes != 32e6 || !near(p.Seconds, 0.5) {
		t.Errorf("source %s W %v Q %v T %v, want emulated 2e6, 32e6, 0.5", p.Source, *p.WorkFlops, *p.TrafficBytes, p.Seconds)
	}
	if *p.ReadBytes != 24e6 || *p.WriteBytes != 8e6 || p.WorkByPrecision["fp64"] != 2e6 {
		t.Errorf("read %v write %v by precision %v", *p.ReadBytes, *p.WriteBytes, p.WorkByPrecision)
	}
	if len(p.Levels) != 3 || p.Levels[0].Upper != "core" || p.Levels[2].Lower != "DRAM" || !near(*p.Levels[0].Intensity, 2e6/24e6) {
		t.Errorf("levels %+v, want core-L1, L1-L2, L2-DRAM with W over each", p.Levels)
	}
	if len(p.Functions) != 2 || p.Functions[0].Name != "triad" || !near(*p.Functions[0].Intensity, 2e6/30e6) {
		t.Errorf("functions %+v, want triad and the exit write-back, not the negligible one", p.Functions)
	}
	if p.Emulation == nil || p.Emulation.Emulator != "qemu-x86_64 7.2.22" || p.Emulation.CacheModel != "32K/8,1M/16,line=64" {
		t.Errorf("emulation %+v", p.Emulation)
	}
	if !hasFlagCode(p.Flags, roofline.FlagNotCounted) {
		t.Errorf("flags %+v, want %s for the uncounted exec", p.Flags, roofline.FlagNotCounted)
	}
	if !p.ExactCounts() {
		t.Error("an emulated point's counts are exact")
	}
}

func TestTargetFailingUnderEmulationIsNotRunNatively(t *testing.T) {
	f := &fakeDeps{res: resolved{source: roofline.SourceEmulated}, outs: timed(0.5)}
	cfg := Config{Command: []string{"k"}, Count: CountEmulate}
	p, err := run(context.Background(), cfg, emulatedDeps(f, recordedEmulation(130, "SIGINT")))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.ran) != 0 {
		t.Errorf("ran natively %v after the emulated run was interrupted", f.ran)
	}
	if p.Exit.Signal != "SIGINT" || p.Seconds != 0 || p.GFlops != nil || !hasFlagCode(p.Flags, roofline.FlagSignaled) {
		t.Errorf("exit %+v T %v GFLOP/s %v flags %+v: want the signal, T unknown", p.Exit, p.Seconds, p.GFlops, p.Flags)
	}
}

func TestEmulateRefusesWhatItCannotHonour(t *testing.T) {
	for _, cfg := range []Config{
		{Command: []string{"k"}, Count: CountEmulate, Work: ptr(1)},
		{Command: []string{"k"}, Count: CountEmulate, Overhead: []string{"o"}},
		{Command: []string{"k"}, Count: CountEmulate, IdleBaseline: time.Second},
		{Command: []string{"k"}, Count: "pin"},
	} {
		if _, err := cfg.withDefaults(); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%+v: err %v, want ErrInvalidConfig", cfg, err)
		}
	}
}

func TestEmulationNotesFlagAWiderCPUAndTheModel(t *testing.T) {
	wide := pmu.CPUInfo{Flags: []string{"avx2", "fma", "avx512f"}}
	notes := emulationNotes(wide, Config{})
	if !hasFlagCode(notes, roofline.FlagEmulatedISA) || !hasFlagCode(notes, roofline.FlagModelled) {
		t.Errorf("notes %+v, want emulated-isa and modelled-traffic", notes)
	}
	narrow := pmu.CPUInfo{Flags: []string{"avx2", "fma"}}
	notes = emulationNotes(narrow, Config{CacheModel: &emulate.CacheModel{Line: 64}})
	if hasFlagCode(notes, roofline.FlagEmulatedISA) || hasFlagCode(notes, roofline.FlagModelled) || !hasFlagCode(notes, roofline.FlagNoUncore) {
		t.Errorf("notes %+v, want only no-uncore without a model on an AVX2 CPU", notes)
	}
}
