package measure

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rprof/rprof/internal/launch"
	"github.com/rprof/rprof/machine"
	"github.com/rprof/rprof/measure/emulate"
	"github.com/rprof/rprof/pmu"
	"github.com/rprof/rprof/roofline"
)

// fakeEmulation is an emulate backend whose runs are recorded: a native run
// takes 0.1 s; an emulated run writes the plugin output recorded from a
// real run of a TRIAD kernel (2 passes over 100,000 fp64 elements, under a
// 32K/8,1M/16 model) and ends with signal; with vcpus set, the output
// says the run used that many thread slots (the recorded run used one).
type fakeEmulation struct {
	native, emulated int
	cpuOption        string // the -cpu option of the emulated run
	nativeSignal     string
	emulatedSignal   string
	vcpus            int
}

func (f *fakeEmulation) backend(cpuFlags ...string) *emulateBackend {
	b := newEmulateBackend(machine.LiveHost()).(*emulateBackend)
	b.find = func(context.Context, string) (emulate.QEMU, error) {
		return emulate.Identify("/usr/bin/qemu-x86_64", "qemu-x86_64 version 7.2.22 (Debian 1:7.2+dfsg-7+deb12u18+b3)\n")
	}
	b.diagnose = func(*machine.Host) (pmu.Diagnosis, error) {
		return pmu.Diagnosis{CPU: machine.CPUInfo{Vendor: "AuthenticAMD", Family: 26, Model: 2, ModelName: "AMD EPYC", Flags: cpuFlags}}, nil
	}
	b.hostModel = func(*machine.Host) emulate.CacheModel { return emulate.DefaultCacheModel() }
	b.run = func(ctx context.Context, s launch.Spec) (launch.Result, error) {
		if !strings.HasSuffix(s.Argv[0], emulate.QEMUBinary) {
			f.native++
			for _, h := range s.Hooks {
				if h.Attach != nil {
					if err := h.Attach(launch.Held{PID: 1, Path: "/opt/k"}); err != nil {
						return launch.Result{}, err
					}
				}
			}
			return launch.Result{Wall: 100 * time.Millisecond, Signal: f.nativeSignal}, nil
		}
		f.emulated++
		if i := slices.Index(s.Argv, "-cpu"); i > 0 {
			f.cpuOption = s.Argv[i+1]
		}
		if i := slices.Index(s.Argv, "-0"); i < 0 || s.Argv[i+2] != "/opt/k" {
			return launch.Result{}, errors.New("emulated run not given the native run's path")
		}
		var out string
		for _, a := range strings.Split(s.Argv[2], ",") {
			if v, ok := strings.CutPrefix(a, "out="); ok {
				out = v
			}
		}
		rec, err := os.ReadFile("testdata/emulate/triad-plugin-output.txt")
		if err != nil {
			return launch.Result{}, err
		}
		if f.vcpus != 0 {
			rec = []byte(strings.Replace(string(rec), "\nvcpus 1\n", fmt.Sprintf("\nvcpus %d\n", f.vcpus), 1))
		}
		if err := os.WriteFile(filepath.Join(out, "1.0.txt"), rec, 0o644); err != nil {
			return launch.Result{}, err
		}
		return launch.Result{Wall: 2 * time.Second, Signal: f.emulatedSignal}, nil
	}
	return b
}

func emulatedConfig(repeat int) Config {
	m, err := emulate.ParseCacheModel("32K/8,1M/16")
	if err != nil {
		panic(err)
	}
	return Config{Target: Target{Command: []string{"k"}}, Counting: Counting{Backend: BackendEmulate, Emulator: EmulatorOptions{CacheModel: &m}}, Repetition: Repetition{Repeat: repeat}}
}

func TestEmulatedPointTakesWAndQFromOneEmulatedRunAndTFromNativeRuns(t *testing.T) {
	f := &fakeEmulation{}
	p, err := run(context.Background(), emulatedConfig(3), deps{backend: f.backend("avx2", "avx512f"), now: time.Now, cpus: 2})
	if err != nil {
		t.Fatal(err)
	}
	if f.native != 3 || f.emulated != 1 {
		t.Errorf("%d native and %d emulated runs, want 3 and 1", f.native, f.emulated)
	}
	checkEmulatedWQT(t, p)
	checkEmulatedLevels(t, p)
	checkEmulatedFlags(t, p)
	if p.Emulation == nil || p.Emulation.CacheModel != "32K/8,1M/16,line=64" || p.Emulation.WorkByWidth["scalar"] != 400000 || len(p.Functions) == 0 {
		t.Errorf("emulation %+v functions %+v", p.Emulation, p.Functions)
	}
	if c := p.Emulation.CPU; c == nil || c.QEMUOption != f.cpuOption || c.Vendor != "AuthenticAMD" || c.Family != 26 || !slices.Equal(c.NotEmulated, []string{"avx512f"}) {
		t.Errorf("emulation.cpu %+v, QEMU ran with -cpu %q; want the host's identity, recorded as run, without avx512f", c, f.cpuOption)
	}
}

func TestAnEmulatedCPUNamedByTheUserReplacesTheHostsIdentity(t *testing.T) {
	f := &fakeEmulation{}
	b := f.backend("avx2", "avx512f")
	b.find = func(context.Context, string) (emulate.QEMU, error) {
		script := filepath.Join(t.TempDir(), "qemu-x86_64")
		help := "#!/bin/sh\necho 'Available CPUs:'; echo 'x86 Haswell  Intel Core Processor (Haswell)'; echo 'x86 max  all'\n"
		if err := os.WriteFile(script, []byte(help), 0o755); err != nil {
			return emulate.QEMU{}, err
		}
		return emulate.Identify(script, "qemu-x86_64 version 7.2.22\n")
	}
	cfg := emulatedConfig(1)
	cfg.Counting.Emulator.CPU = "Haswell"
	p, err := run(context.Background(), cfg, deps{backend: b, now: time.Now, cpus: 2})
	if err != nil {
		t.Fatal(err)
	}
	isa := slices.IndexFunc(p.Flags, func(f roofline.Flag) bool { return f.Code == roofline.FlagEmulatedISA })
	if f.cpuOption != "Haswell" || p.Emulation.CPU.Source != "flag" || isa < 0 || !strings.Contains(p.Flags[isa].Message, "Haswell") {
		t.Errorf("-cpu %q, emulation.cpu %+v, flags %+v; want Haswell, from the flag, and flagged", f.cpuOption, p.Emulation.CPU, p.Flags)
	}
	cfg.Counting.Emulator.CPU = "Zen9"
	var unknown *emulate.UnknownCPUError
	_, err = run(context.Background(), cfg, deps{backend: b, now: time.Now, cpus: 2})
	if !faultsFields("Counting.Emulator.CPU")(err) || !errors.As(err, &unknown) || !slices.Contains(unknown.Known, "Haswell") || !slices.Contains(unknown.Known, "max") {
		t.Errorf("CPU Zen9: %v, want a *ConfigError naming Counting.Emulator.CPU, of an unknown CPU listing Haswell and max", err)
	}
}

func TestEmulatedQIsExactOnlyOnOneThread(t *testing.T) {
	for _, tc := range []struct {
		vcpus       int
		exactQ      bool
		interleaved bool
	}{
		{vcpus: 1, exactQ: true},
		{vcpus: 2, interleaved: true},
		{vcpus: 8, interleaved: true},
	} {
		f := &fakeEmulation{vcpus: tc.vcpus}
		p, err := run(context.Background(), emulatedConfig(1), deps{backend: f.backend(), now: time.Now, cpus: 2})
		if err != nil {
			t.Fatal(err)
		}
		if !p.ExactWork() || p.ExactTraffic() != tc.exactQ || p.Emulation.ImageThreads != tc.vcpus || p.Emulation.Threads != tc.vcpus {
			t.Errorf("%d vCPUs: exact W %v, exact Q %v, emulation %+v; want exact W, exact Q %v, %d threads in one image",
				tc.vcpus, p.ExactWork(), p.ExactTraffic(), p.Emulation, tc.exactQ, tc.vcpus)
		}
		got := slices.IndexFunc(p.Flags, func(f roofline.Flag) bool {
			return f.Code == roofline.FlagInterleaved && f.Subject == roofline.SubjectTraffic
		}) >= 0
		if got != tc.interleaved {
			t.Errorf("%d vCPUs: flags %+v, want %s on Q: %v", tc.vcpus, p.Flags, roofline.FlagInterleaved, tc.interleaved)
		}
	}
}

// checkEmulatedWQT checks the fake emulation's W and Q (recorded: 2 x
// 100,000 x 2 FLOPs; DRAM 7,163,328 B read, 3,910,464 B written) and the
// native runs' T.
func checkEmulatedWQT(t *testing.T, p *roofline.Point) {
	t.Helper()
	if p.Source != roofline.SourceEmulated || *p.WorkFlops != 400000 || *p.TrafficBytes != 7163328+3910464 || !near(p.Seconds, 0.1) {
		t.Errorf("source %s W %v Q %v T %v", p.Source, *p.WorkFlops, *p.TrafficBytes, p.Seconds)
	}
	if *p.ReadBytes != 7163328 || *p.WriteBytes != 3910464 || len(p.WorkByPrecision) != 1 || p.WorkByPrecision[roofline.Double] != 400000 {
		t.Errorf("read %v write %v by precision %v", *p.ReadBytes, *p.WriteBytes, p.WorkByPrecision)
	}
}

// checkEmulatedLevels checks the fake emulation's cache levels: one
// per modelled boundary, each with an intensity, L1-L2 from the recorded
// fills and write-backs.
func checkEmulatedLevels(t *testing.T, p *roofline.Point) {
	t.Helper()
	want := []struct{ upper, lower string }{{"core", "L1"}, {"L1", "L2"}, {"L2", "DRAM"}}
	if len(p.Levels) != len(want) {
		t.Fatalf("levels %+v, want %v", p.Levels, want)
	}
	for i, w := range want {
		if l := p.Levels[i]; l.Upper != w.upper || l.Lower != w.lower || l.Intensity == nil {
			t.Errorf("level %d: %+v, want %s-%s with an intensity", i, l, w.upper, w.lower)
		}
	}
	if r := p.Levels[1]; r.ReadBytes != 114241*64 || r.WriteBytes != 63246*64 {
		t.Errorf("L1-L2 %+v, want the recorded fills and write-backs x 64 B", r)
	}
}

// checkEmulatedFlags checks an emulated point's events and flags: no
// events and no missing counters (exact counts), but the emulated-ISA and
// modelled flags.
func checkEmulatedFlags(t *testing.T, p *roofline.Point) {
	t.Helper()
	if len(p.Events) != 0 || hasFlagCode(p.Flags, roofline.FlagMissingCounter) {
		t.Errorf("events %+v flags %+v: exact counts are neither events nor missing when zero", p.Events, p.Flags)
	}
	for _, code := range []string{roofline.FlagEmulatedISA, roofline.FlagModelled} {
		if !hasFlagCode(p.Flags, code) {
			t.Errorf("flags %+v lack %s", p.Flags, code)
		}
	}
}

func TestInterruptedEmulatedRunStopsRepeating(t *testing.T) {
	f := &fakeEmulation{emulatedSignal: "SIGINT"}
	p, err := run(context.Background(), emulatedConfig(3), deps{backend: f.backend(), now: time.Now, cpus: 2})
	if err != nil {
		t.Fatal(err)
	}
	if f.native != 1 || p.Exit.Signal != "SIGINT" || !hasFlagCode(p.Flags, roofline.FlagSignaled) || !near(p.Seconds, 0.1) {
		t.Errorf("%d native runs, exit %+v, T %v, flags %+v: want one native run timed and the signal", f.native, p.Exit, p.Seconds, p.Flags)
	}
}

// A target killed in its native run (a crash, a Ctrl-C) is not emulated:
// W and Q are unknown, absent from the point, never 0.
func TestTargetKilledNativelyIsNotEmulated(t *testing.T) {
	for _, sig := range []string{"SIGSEGV", "SIGINT"} {
		t.Run(sig, func(t *testing.T) {
			f := &fakeEmulation{nativeSignal: sig}
			p, err := run(context.Background(), emulatedConfig(1), deps{backend: f.backend(), now: time.Now, cpus: 2})
			if err != nil {
				t.Fatal(err)
			}
			if f.emulated != 0 || !hasFlagCode(p.Flags, roofline.FlagMissingCounter) {
				t.Errorf("%d emulated runs, flags %+v: want none and W unknown", f.emulated, p.Flags)
			}
			if p.WorkFlops != nil || p.TrafficBytes != nil || p.Intensity != nil || p.Levels != nil {
				t.Errorf("W %v, Q %v, I %v, levels %v: want all unknown (nil), not 0", p.WorkFlops, p.TrafficBytes, p.Intensity, p.Levels)
			}
		})
	}
}

func TestEmulateRefusesWhatItCannotHonour(t *testing.T) {
	for _, tt := range []struct {
		cfg    Config
		events bool
	}{
		{Config{Target: Target{Command: []string{"k"}}, Counting: Counting{Backend: BackendEmulate, Work: ptr(1)}}, false},
		{Config{Target: Target{Command: []string{"k"}}, Counting: Counting{Backend: BackendEmulate, Events: []string{"page-faults"}}}, true},
	} {
		f := &fakeEmulation{}
		_, err := run(context.Background(), tt.cfg, deps{backend: f.backend(), now: time.Now, cpus: 2})
		var ex *ExclusionError
		if !errors.Is(err, ErrInvalidConfig) || !errors.As(err, &ex) || ex.Backend != BackendEmulate || ex.Events != tt.events {
			t.Errorf("%+v: err %v, want an ExclusionError (events %v) matching ErrInvalidConfig", tt.cfg, err, tt.events)
		}
	}
}

func TestEmulationNotesFlagAWiderCPUAndTheModel(t *testing.T) {
	wide := machine.CPUInfo{Flags: []string{"avx2", "fma", "avx512f"}}
	notes := EmulationNotes(wide, emulate.DefaultCacheModel())
	if !hasFlagCode(notes, roofline.FlagEmulatedISA) || !hasFlagCode(notes, roofline.FlagModelled) {
		t.Errorf("notes %+v, want emulated-isa and modelled-traffic", notes)
	}
	narrow := machine.CPUInfo{Flags: []string{"avx2", "fma"}}
	notes = EmulationNotes(narrow, emulate.CacheModel{Line: 64})
	if hasFlagCode(notes, roofline.FlagEmulatedISA) || hasFlagCode(notes, roofline.FlagModelled) || !hasFlagCode(notes, roofline.FlagNotModelled) || hasFlagCode(notes, roofline.FlagNoUncore) {
		t.Errorf("notes %+v, want only no-uncore without a model on an AVX2 CPU", notes)
	}
}

func TestCacheModelComesFromTheFlagThenTheRoofsThenTheHost(t *testing.T) {
	caches := []roofline.CacheLevel{
		{Level: "L1", Threads: 1, Bytes: 48 << 10, Source: roofline.CacheSourceSysfs},
		{Level: "L2", Threads: 2, Bytes: 4 << 20, Source: roofline.CacheSourceSysfs},
		{Level: "L2", Threads: 1, Bytes: 2 << 20, Source: roofline.CacheSourceSysfs},
		{Level: "L3", Threads: 1, Bytes: 32 << 20, Source: roofline.CacheSourceMeasured, DeclaredBytes: 480 << 20, DeclaredSource: roofline.CacheSourceSysfs},
	}
	here := &roofline.Roofs{Caches: caches, Machine: roofline.Machine{CPU: roofline.CPU{ModelName: "AMD EPYC"}}}
	foreign := &roofline.Roofs{Caches: caches, Machine: roofline.Machine{CPU: roofline.CPU{ModelName: "Intel Xeon"}}}
	flag, _ := emulate.ParseCacheModel("32K/8")
	for _, tt := range []struct {
		name       string
		flag       *emulate.CacheModel
		roofs      *roofline.Roofs
		model, src string
	}{
		{"flag over roofs", &flag, here, "32K/8,line=64", "flag"},
		{"roofs over the host", nil, here, "48K/12,2M/16,32M/16,line=64", "the roofs document's effective sizes: L1 sysfs, L2 sysfs, L3 measured (sysfs declared 480 MiB)"},
		{"roofs of another machine", nil, foreign, "48K/12,1M/16,32M/16,line=64", "default"},
		{"no roofs", nil, nil, "48K/12,1M/16,32M/16,line=64", "default"},
	} {
		f := &fakeEmulation{}
		cfg := emulatedConfig(1)
		cfg.Counting.Emulator.CacheModel, cfg.Placement.Roofs = tt.flag, tt.roofs
		p, err := run(context.Background(), cfg, deps{backend: f.backend(), now: time.Now, cpus: 2})
		if err != nil {
			t.Fatal(err)
		}
		if p.Emulation.CacheModel != tt.model || p.Emulation.CacheModelSource != tt.src {
			t.Errorf("%s: model %s from %q, want %s from %q", tt.name, p.Emulation.CacheModel, p.Emulation.CacheModelSource, tt.model, tt.src)
		}
	}
}

// A function whose calls are counted one by one is resolved against the
// native run's target, its emulated run's streams are the caller's, and
// the caller is told as the run starts and given the calls at its end; a
// backend without an emulated run refuses it.
func TestEmulatedCallsAreCountedOnlyUnderEmulation(t *testing.T) {
	// A sized function of a shared library: getpid in the C library.
	libc := ""
	for _, dir := range []string{"/lib", "/lib64", "/usr/lib", "/usr/lib64"} {
		if m, _ := filepath.Glob(filepath.Join(dir, "*", "libc.so.6")); len(m) > 0 {
			libc = m[0]
			break
		}
		if _, err := os.Stat(filepath.Join(dir, "libc.so.6")); err == nil {
			libc = filepath.Join(dir, "libc.so.6")
			break
		}
	}
	if libc == "" {
		t.Skip("no libc.so.6 in the usual directories")
	}
	var started string
	var done *CountedCalls
	var out, errOut strings.Builder
	cfg := emulatedConfig(1)
	cfg.Hooks.EmulatedCalls = &CallCounting{Function: libc + ":getpid", Stdout: &out, Stderr: &errOut,
		Started: func(e string) { started = e }, Done: func(c CountedCalls) { done = &c }}
	f := &fakeEmulation{}
	b := f.backend()
	run0 := b.run
	b.run = func(ctx context.Context, s launch.Spec) (launch.Result, error) {
		if strings.HasSuffix(s.Argv[0], emulate.QEMUBinary) && (s.Stdout != &out || s.Stderr != &errOut || !strings.Contains(s.Argv[2], "call=")) {
			return launch.Result{}, fmt.Errorf("emulated run %q with other streams or no counted function", s.Argv)
		}
		return run0(ctx, s)
	}
	if _, err := run(context.Background(), cfg, deps{backend: b, now: time.Now, cpus: 2}); err != nil {
		t.Fatal(err)
	}
	if started != "qemu-x86_64 7.2.22" || done == nil || done.Path == "" {
		t.Errorf("started %q, done %+v; want the emulator named and the calls handed over", started, done)
	}
	if _, err := run(context.Background(), Config{Target: Target{Command: []string{"k"}}, Hooks: Hooks{EmulatedCalls: cfg.Hooks.EmulatedCalls}}, deps{backend: plainBackend{}, now: time.Now, cpus: 2}); !faultsFields("Hooks.EmulatedCalls", "Counting.Backend")(err) {
		t.Errorf("a backend without an emulated run: %v, want ErrInvalidConfig", err)
	}
}

// plainBackend counts nothing, and no calls.
type plainBackend struct{ Backend }

func (plainBackend) Capabilities() Capabilities { return Capabilities{} }
