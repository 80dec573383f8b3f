package measure

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/rprof/rprof/internal/launch"
	"github.com/rprof/rprof/internal/unit"
	"github.com/rprof/rprof/machine"
	"github.com/rprof/rprof/measure/emulate"
	"github.com/rprof/rprof/pmu"
	"github.com/rprof/rprof/regions"
	"github.com/rprof/rprof/roofline"
)

// BackendEmulate counts by instrumentation under QEMU (rprof run --count
// emulate).
const BackendEmulate = "emulate"

func init() { Register(BackendEmulate, newEmulateBackend) }

// ErrIllegalInstruction: the target executed an instruction the emulator
// does not implement (AVX-512 under QEMU 7.2) and died of SIGILL.
var ErrIllegalInstruction = errors.New("the target died of SIGILL under emulation: it uses instructions QEMU does not emulate (AVX-512?)")

// EmulationKilledError: a signal (a Ctrl-C) killed the target under
// emulation before it wrote its counts; QEMU 7.2 runs no plugin exit
// callback on a fatal signal, so nothing was counted.
type EmulationKilledError struct {
	Signal   string
	ExitCode int // 128 + the signal's number, as shells report it
}

func (e *EmulationKilledError) Error() string {
	return fmt.Sprintf("the target was killed by %s under emulation, and QEMU 7.2 writes no counts then: nothing was measured", e.Signal)
}

// emulateBackend counts W exactly and models Q by running each command
// once under QEMU with rprof's plugin; every run of the command is also
// run natively, and that native run gives T. The counts of the emulated
// run are the same for every repetition: they are deterministic.
type emulateBackend struct {
	find func(ctx context.Context, path string) (emulate.QEMU, error)
	run  func(context.Context, launch.Spec) (launch.Result, error)
	// host is the machine the target runs on: its description and cache
	// model.
	host      *machine.Host
	diagnose  func(*machine.Host) (pmu.Diagnosis, error)
	hostModel func(*machine.Host) emulate.CacheModel

	qemu     emulate.QEMU
	model    emulate.CacheModel
	cpu      emulate.CPU
	calls    *CallCounting
	counters []Counter
	levels   []string // the traffic levels of counters, in order
	// done holds each command's emulated counts, by argv.
	done map[string]*emulatedCounts
}

// emulatedCounts is what the emulated run of one command gave.
type emulatedCounts struct {
	counts    []pmu.Count
	notes     []roofline.Flag
	functions []roofline.FunctionCount
	emulation *roofline.Emulation
	// signal is set when a signal (a Ctrl-C) ended the emulated run.
	signal string
	exit   int
}

func newEmulateBackend(h *machine.Host) Backend {
	return &emulateBackend{find: emulate.FindQEMUAt, run: launch.Run, diagnose: pmu.DiagnoseLive,
		hostModel: emulate.HostCacheModel,
		host:      h, done: map[string]*emulatedCounts{}}
}

// EmulatedISA is what QEMU 7.2's TCG offers an x86-64 guest.
const EmulatedISA = "x86-64 up to AVX2 and FMA (no AVX-512)"

// maxFunctions bounds the function table of a point: those with at least
// 0.1% of W or Q, most FLOPs first.
const maxFunctions = 25

func (b *emulateBackend) Resolve(ctx context.Context, cfg Config) (Resolved, error) {
	switch {
	case cfg.Counting.Work != nil || cfg.Counting.Traffic != nil:
		return Resolved{}, &ExclusionError{Backend: BackendEmulate}
	case len(cfg.Counting.Events) > 0:
		return Resolved{}, &ExclusionError{Backend: BackendEmulate, Events: true}
	}
	q, err := b.find(ctx, cfg.Counting.Emulator.QEMU)
	if err != nil {
		return Resolved{}, err
	}
	d, err := b.diagnose(b.host)
	if err != nil {
		return Resolved{}, err
	}
	b.qemu, b.calls = q, cfg.Hooks.EmulatedCalls
	if b.cpu, err = b.emulatedCPU(ctx, cfg.Counting.Emulator.CPU, d.CPU); err != nil {
		return Resolved{}, err
	}
	c := Resolved{Source: roofline.SourceEmulated, Machine: machine.Describe(d.CPU, d.Topology, b.host.Sysfs, b.host.Procfs)}
	switch host := b.hostModel(b.host); {
	case cfg.Counting.Emulator.CacheModel != nil:
		b.model = *cfg.Counting.Emulator.CacheModel
	case cfg.Placement.Roofs != nil && roofline.CompareMachines(cfg.Placement.Roofs.Machine, c.Machine).SameCPU():
		var ok bool
		if b.model, ok = RoofsCacheModel(cfg.Placement.Roofs, host.Line); !ok {
			b.model = host
		}
	default:
		b.model = host
	}
	if d.VM {
		c.Notes = append(c.Notes, vmNote)
	}
	notes := EmulationNotes(d.CPU, b.model)
	if b.cpu.Source == "flag" {
		// The host's identity was not presented: say what was instead.
		notes = slices.DeleteFunc(notes, func(f roofline.Flag) bool { return f.Code == roofline.FlagEmulatedISA })
		notes = append(notes, roofline.Flag{Code: roofline.FlagEmulatedISA, Subject: roofline.SubjectWork,
			Message: fmt.Sprintf("the target ran on QEMU's %s model, named by the user, not as this CPU: libraries that choose their code by CPU model may have counted another path than the native runs took", b.cpu.Option)})
	}
	c.Notes = append(c.Notes, notes...)
	for _, prec := range emulate.Precisions {
		c.Counters = append(c.Counters, Counter{Name: "emulated " + prec + " FLOPs", PMU: BackendEmulate,
			Kind: KindWork, Weight: 1, Precision: prec, Exact: true})
	}
	if b.model.Enabled() {
		b.levels = []string{roofline.LevelL1}
		for _, l := range b.model.Levels[1:] {
			b.levels = append(b.levels, l.Name)
		}
		b.levels = append(b.levels, roofline.LevelDRAM)
		for _, l := range b.levels {
			for _, dir := range []string{pmu.Read, pmu.Write} {
				c.Counters = append(c.Counters, Counter{Name: fmt.Sprintf("modelled %s %s bytes", l, dir), PMU: BackendEmulate,
					Unit: "B", Kind: KindTraffic, Weight: 1, Direction: dir, Level: l, Exact: true})
			}
		}
	}
	b.counters = c.Counters
	return c, nil
}

// RoofsCacheModel is the model of the effective cache sizes the roofs
// document r measured, as one thread sees them (each emulated thread has
// its own caches): sizes the sweep's edges showed where the host's
// declaration disagreed (an Intel guest's sysfs claiming a 480 MiB L3),
// else the declared ones. ok is false when r has none.
func RoofsCacheModel(r *roofline.Roofs, line int) (emulate.CacheModel, bool) {
	levels := r.CacheLevels(1)
	if len(levels) == 0 {
		return emulate.CacheModel{}, false
	}
	sizes := make([]int64, len(levels))
	from := make([]string, len(levels))
	for i, l := range levels {
		sizes[i] = l.Bytes
		from[i] = l.Level + " " + l.Source
		if l.Source == roofline.CacheSourceMeasured && l.DeclaredBytes > 0 {
			from[i] += fmt.Sprintf(" (%s declared %s)", l.DeclaredSource, unit.Bytes(l.DeclaredBytes))
		}
	}
	return emulate.SizedCacheModel(sizes, line, "the roofs document's effective sizes: "+strings.Join(from, ", ")), true
}

// emulatedCPU is the processor QEMU presents: the host's identity, or
// the QEMU model named (--emulate-cpu), which must be one this QEMU knows.
func (b *emulateBackend) emulatedCPU(ctx context.Context, name string, host machine.CPUInfo) (emulate.CPU, error) {
	if name == "" || name == "host" {
		return emulate.HostCPU(host), nil
	}
	help, err := b.qemu.CPUHelp(ctx)
	if err != nil {
		return emulate.CPU{}, err
	}
	cpu, err := emulate.NamedCPU(name, help)
	if err != nil {
		return emulate.CPU{}, fieldErr(err, "Counting.Emulator.CPU")
	}
	return cpu, nil
}

// Count runs target natively for its time, then, the first time it sees
// this command, once more under emulation for its counts. The native run
// comes first so that a target that cannot start fails as in any run, and
// so that its path is known for QEMU, which does not search PATH.
func (b *emulateBackend) Count(ctx context.Context, target launch.Spec) (Outcome, error) {
	var path string
	native := target
	native.Hooks = append(slices.Clone(target.Hooks), launch.Hook{Attach: func(h launch.Held) error {
		path = h.Path
		return nil
	}})
	r, err := b.run(ctx, native)
	if err != nil {
		return Outcome{}, err
	}
	o := Outcome{Wall: r.Wall, CPU: r.CPU, ExitCode: r.ExitCode, Signal: r.Signal}
	key := strings.Join(target.Argv, "\x00")
	e := b.done[key]
	if e == nil {
		if r.Signal != "" {
			// Killed natively (a Ctrl-C, a crash): no emulated run.
			o.Counts = make([]pmu.Count, len(b.counters))
			o.Notes = []roofline.Flag{{Code: roofline.FlagMissingCounter, Subject: roofline.SubjectWork,
				Message: fmt.Sprintf("the target was killed by %s in its native run, so it was not run under emulation: W and Q are unknown", r.Signal)}}
			return o, nil
		}
		if e, err = b.emulate(ctx, target, path); err != nil {
			return Outcome{}, err
		}
		b.done[key] = e
	}
	o.Counts, o.Notes, o.Functions, o.Emulation = e.counts, e.notes, e.functions, e.emulation
	if e.signal != "" {
		// The emulated run was stopped: repetition stops here.
		o.ExitCode, o.Signal = e.exit, e.signal
	}
	return o, nil
}

// Capabilities: QEMU runs the target, the plugin counts by function and
// counts calls one by one, and each process models its own traffic.
func (b *emulateBackend) Capabilities() Capabilities {
	return Capabilities{Emulates: true, AttributesFunctions: true, CountsCalls: true}
}

// emulator names the emulator and its version.
func (b *emulateBackend) emulator() string {
	return fmt.Sprintf("%s %s", emulate.QEMUBinary, b.qemu.Version)
}

func (b *emulateBackend) Idle(context.Context, time.Duration) (Outcome, error) {
	return Outcome{}, errors.New("emulate: no background counters: nothing to count idle")
}

// emulate runs target once under QEMU with the plugin and turns its output
// into counts parallel to b.counters.
func (b *emulateBackend) emulate(ctx context.Context, target launch.Spec, path string) (*emulatedCounts, error) {
	s, err := emulate.NewSession(b.qemu, b.model)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	s.CPU = b.cpu
	spec := target
	var counted CountedCalls
	if c := b.calls; c != nil {
		if counted.Path, err = b.countCalls(s, c.Function, path, target.Env); err != nil {
			return nil, err
		}
		spec.Stdout, spec.Stderr = c.Stdout, c.Stderr
	}
	argv, err := s.Argv(path, target.Argv)
	if err != nil {
		return nil, err
	}
	spec.Argv, spec.Hooks = argv, nil
	if b.calls != nil && b.calls.Started != nil {
		b.calls.Started(b.emulator())
	}
	r, err := b.run(ctx, spec)
	if err != nil {
		return nil, fmt.Errorf("emulate: %w", err)
	}
	if r.Signal == "SIGILL" {
		return nil, ErrIllegalInstruction
	}
	res, err := s.Result()
	if errors.Is(err, emulate.ErrNoOutput) && r.Signal != "" {
		return nil, &EmulationKilledError{Signal: r.Signal, ExitCode: r.ExitCode}
	}
	if errors.Is(err, emulate.ErrNoOutput) {
		return nil, fmt.Errorf("emulate: %s exited with status %d and wrote no counts (its message is above)", b.qemu.Path, r.ExitCode)
	}
	if err != nil {
		return nil, err
	}
	if b.calls != nil && b.calls.Done != nil {
		counted.Calls, counted.Mapped, counted.Images = res.Calls, res.CallMapped, res.CallImages
		b.calls.Done(counted)
	}
	e := &emulatedCounts{signal: r.Signal, exit: r.ExitCode, notes: resultNotes(res)}
	if r.Signal != "" {
		e.notes = append(e.notes, roofline.Flag{Code: roofline.FlagSignaled, Subject: roofline.SubjectWork,
			Message: fmt.Sprintf("the emulated run was killed by %s: W and Q cover part of the target's run", r.Signal)})
	}
	// An exact count: enabled and running alike, so never scaled.
	exact := func(v uint64) pmu.Count {
		return pmu.Count{Raw: v, Enabled: uint64(r.Wall), Running: uint64(r.Wall)}
	}
	traffic := map[string]emulate.Traffic{roofline.LevelL1: res.Core}
	for _, l := range res.Levels {
		traffic[l.Lower] = l.Traffic
	}
	for _, c := range b.counters {
		switch {
		case c.Kind == KindWork:
			e.counts = append(e.counts, exact(res.Work[c.Precision]))
		case c.Direction == pmu.Read:
			e.counts = append(e.counts, exact(traffic[c.Level].Read))
		default:
			e.counts = append(e.counts, exact(traffic[c.Level].Write))
		}
	}
	e.functions = functionTable(res)
	e.emulation = &roofline.Emulation{
		Emulator:         b.emulator(),
		PluginAPI:        b.qemu.PluginAPI,
		ISA:              EmulatedISA,
		CPU:              EmulatedCPU(b.cpu),
		CacheModel:       res.Model.String(),
		CacheModelSource: res.Model.Source,
		WorkByWidth:      map[string]float64{},
		Images:           res.Images,
		Threads:          res.Threads,
		ImageThreads:     res.ImageThreads,
		EnvironmentBytes: environmentBytes(target.Argv, target.Env),
		Seconds:          r.Wall.Seconds(),
	}
	for k, v := range res.WorkByWidth {
		e.emulation.WorkByWidth[k] = float64(v)
	}
	return e, nil
}

// environmentBytes is the size of the block the target's argv and
// environment (nil: rprof's own) take above its initial stack pointer:
// the strings and their pointers.
func environmentBytes(argv, env []string) int64 {
	if env == nil {
		env = os.Environ()
	}
	n := int64(8 * (len(argv) + len(env) + 2))
	for _, s := range append(slices.Clone(argv), env...) {
		n += int64(len(s) + 1)
	}
	return n
}

// countCalls has session s count the calls of function, resolved against
// the target at path, and returns the file that holds it.
func (b *emulateBackend) countCalls(s *emulate.Session, function, path string, env []string) (string, error) {
	spec, err := regions.ParseSpec(function)
	if err != nil {
		return "", regionInvalid(err)
	}
	probes, err := regions.Resolver{Target: path, Env: env}.Resolve([]regions.Spec{spec})
	if err != nil {
		return "", regionInvalid(err)
	}
	p := probes[0]
	return p.Path, s.CountCalls(p.Path, p.Addr, p.Size)
}

// functionTable keeps the functions with at least 0.1% of W or Q (fewer
// would only bury the rest), most FLOPs first, at most maxFunctions.
func functionTable(r emulate.Result) []roofline.FunctionCount {
	w := float64(r.Flops())
	dram, _ := r.DRAM()
	q := float64(dram.Total())
	var out []roofline.FunctionCount
	for _, f := range r.Functions {
		if len(out) == maxFunctions {
			break
		}
		fw, fq := float64(f.Flops), float64(f.DRAM)
		if fw == 0 && fq == 0 || fw < w/1000 && fq < q/1000 {
			continue
		}
		fc := roofline.FunctionCount{Name: f.Name, Object: f.Object, WorkFlops: fw, TrafficBytes: fq, CoreBytes: float64(f.Core)}
		if fq > 0 && r.Model.Enabled() {
			fc.Intensity = ptr(fw / fq)
		}
		out = append(out, fc)
	}
	return out
}

// EmulatedCPU is the point's record of the processor QEMU presented.
func EmulatedCPU(c emulate.CPU) *roofline.EmulatedCPU {
	return &roofline.EmulatedCPU{QEMUOption: c.Option, Source: c.Source, Vendor: c.Vendor,
		Family: c.Family, Model: c.Model, Stepping: c.Stepping, Brand: c.Brand,
		Off: c.Off, NotEmulated: c.NotEmulated}
}

// EmulationNotes are the flags of every count made under emulation with
// model m on this CPU, known before the run: a narrower ISA than the
// CPU's (emulated-isa), a modelled Q (modelled-traffic).
func EmulationNotes(cpu machine.CPUInfo, m emulate.CacheModel) []roofline.Flag {
	var notes []roofline.Flag
	if missing := emulate.HostCPU(cpu).NotEmulatedSummary(); missing != "" {
		notes = append(notes, roofline.Flag{Code: roofline.FlagEmulatedISA, Subject: roofline.SubjectWork,
			Message: fmt.Sprintf("W and Q were counted under QEMU, which emulates x86-64 up to AVX2 and FMA: the target saw this CPU's identity without %s (no QEMU release emulates them), so the native runs that give T may take wider code paths than the counted one", missing)})
	}
	if m.Enabled() {
		notes = append(notes, roofline.Flag{Code: roofline.FlagModelled, Subject: roofline.SubjectTraffic,
			Message: fmt.Sprintf("Q is modelled, not measured: an LRU write-back, write-allocate cache model (%s, sizes from %s) fed by every emulated access, each thread with its own caches; prefetchers and coherence traffic are not modelled", m, m.Source)})
	} else {
		notes = append(notes, roofline.Flag{Code: roofline.FlagNotModelled, Subject: roofline.SubjectTraffic,
			Message: "no cache model, as asked: Q and the intensity were not modelled"})
	}
	return notes
}

// InterleavingNote flags a modelled Q that depends on how the run's
// threads interleaved: a process image ran guest code on several threads,
// each with its own modelled caches.
func InterleavingNote(r emulate.Result) (roofline.Flag, bool) {
	if r.ImageThreads <= 1 || !r.Model.Enabled() {
		return roofline.Flag{}, false
	}
	return roofline.Flag{Code: roofline.FlagInterleaved, Subject: roofline.SubjectTraffic,
		Message: fmt.Sprintf("the emulated run had up to %d threads in one process, each with its own modelled caches: which thread touched which data (scheduling, spin-waits) changes Q between identical runs, so Q is not exact (W is)", r.ImageThreads)}, true
}

// resultNotes flags what an emulated run could not count.
func resultNotes(r emulate.Result) []roofline.Flag {
	var notes []roofline.Flag
	if len(r.NotCounted) > 0 {
		notes = append(notes, roofline.Flag{Code: roofline.FlagNotCounted, Subject: roofline.SubjectWork,
			Message: fmt.Sprintf("the target exec'd programs that ran natively and were not counted (%s): W and Q leave out their work", strings.Join(r.NotCounted, ", "))})
	}
	if f, ok := InterleavingNote(r); ok {
		notes = append(notes, f)
	}
	if r.SharedSlot {
		notes = append(notes, roofline.Flag{Code: roofline.FlagMissingCounter, Subject: roofline.SubjectWork,
			Message: "more threads were alive at once than the emulation plugin has counter slots (1024): some threads shared counters, which may have lost updates"})
	}
	if r.Unattributed {
		notes = append(notes, roofline.Flag{Code: roofline.FlagMissingCounter,
			Message: "QEMU placed the guest away from host addresses: functions could not be named and execs were not followed"})
	}
	return notes
}
