package measure

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/rprof/rprof/internal/launch"
	"github.com/rprof/rprof/machine"
	"github.com/rprof/rprof/pmu"
	"github.com/rprof/rprof/roofline"
)

func init() { Register(DefaultBackend, newPMUBackend) }

// pmuBackend counts with perf_event_open: the catalogue's FP-work events
// per process and its memory-controller events system-wide, plus the
// user's -e events. Like perf stat, it falls back to user-mode-only
// per-process counting once the kernel refuses kernel-mode counting
// (perf_event_paranoid=2 without CAP_PERFMON), and keeps to it so that
// every repetition counts the same.
type pmuBackend struct {
	// host is the machine whose trees plan the counters; they are opened
	// on the running kernel.
	host *machine.Host
	// diagnose diagnoses host, whose PMUs are given.
	diagnose func(*machine.Host, pmu.PMUs) (pmu.Diagnosis, error)
	probe    func(pmu.Event) error
	// count runs one target with specs counted (per-process ones in user
	// mode only when userOnly); tests replace it.
	count func(ctx context.Context, target launch.Spec, specs []counterSpec, userOnly bool) (Outcome, error)

	specs    []counterSpec
	userOnly bool
}

func newPMUBackend(h *machine.Host) Backend {
	return &pmuBackend{host: h,
		diagnose: pmu.DiagnoseCounting, probe: pmu.Probe, count: countPMU}
}

// counterSpec is one counter of a run with what its count means.
type counterSpec struct {
	event pmu.Event
	kind  Kind
	// weight is FLOPs (work) or bytes (traffic) per count.
	weight float64
	// class is the precision of a work event or the direction of a traffic
	// event.
	class string
	// group is the per-process counter group the event is opened in, or -1
	// for a system-wide event.
	group int
}

// counter says what s's count means, for the shared arithmetic.
func (s counterSpec) counter() Counter {
	c := Counter{Name: s.event.Name, PMU: s.event.PMU, Kind: s.kind, Weight: s.weight, Background: s.event.SystemWide()}
	// A kernel alias's scale (MiB per count) is not applied to the count,
	// so its unit would mislabel it.
	if s.event.Scale == 0 || s.event.Scale == 1 {
		c.Unit = s.event.Unit
	}
	switch s.kind {
	case KindWork:
		c.Precision = s.class
	case KindTraffic:
		c.Direction, c.Level = s.class, roofline.LevelDRAM
	}
	return c
}

// resolved is what a run will count.
type resolved struct {
	source  string
	specs   []counterSpec
	notes   []roofline.Flag
	machine roofline.Machine
}

func (b *pmuBackend) Resolve(ctx context.Context, cfg Config) (Resolved, error) {
	res, err := resolve(cfg, b.host, b.diagnose, b.probe)
	if err != nil {
		return Resolved{}, err
	}
	owner, notes, err := ownsTraffic(ctx, cfg)
	if err != nil {
		return Resolved{}, err
	}
	if !owner {
		res.specs = slices.DeleteFunc(res.specs, func(s counterSpec) bool { return s.event.SystemWide() })
		res.notes = append(res.notes, notes...)
	}
	b.specs = res.specs
	c := Resolved{Source: res.source, Notes: res.notes, Machine: res.machine}
	for _, s := range res.specs {
		c.Counters = append(c.Counters, s.counter())
	}
	return c, nil
}

func (b *pmuBackend) Count(ctx context.Context, target launch.Spec) (Outcome, error) {
	o, err := b.count(ctx, target, b.specs, b.userOnly)
	var pe *pmu.PermissionError
	if err != nil && !b.userOnly && errors.As(err, &pe) && !pe.SystemWide {
		// The counters are opened before the target is released, so the
		// refused attempt ran nothing.
		b.userOnly = true
		o, err = b.count(ctx, target, b.specs, true)
	}
	if err == nil && b.userOnly {
		o.Notes = append(o.Notes, roofline.Flag{Code: roofline.FlagUserOnly,
			Message: "perf_event_paranoid refused kernel-mode counting, so per-process events count user mode only (as perf stat's :u): work or faults in the kernel on the target's behalf are left out"})
	}
	return o, err
}

// Idle counts the system-wide specs (memory controllers and system-wide
// user events) for d with nothing launched.
// Capabilities: the memory controllers count the whole node's traffic,
// which one rank counts for all.
func (b *pmuBackend) Capabilities() Capabilities { return Capabilities{SharedTraffic: true} }

func (b *pmuBackend) Idle(ctx context.Context, d time.Duration) (Outcome, error) {
	var sys []counterSpec
	for _, s := range b.specs {
		if s.event.SystemWide() {
			sys = append(sys, s)
		}
	}
	o, err := countIdle(ctx, sys, d)
	if err != nil {
		return Outcome{}, err
	}
	return spread(b.specs, o), nil
}

// vmNote flags a point measured in a virtual machine.
var vmNote = roofline.Flag{Code: roofline.FlagVM,
	Message: "measured in a virtual machine: other guests share the memory and caches, and counters, if any, are virtualised"}

// resolve picks where W and Q come from, in this order: analytic values,
// the catalogue's counters when the diagnosis finds work countable, or only
// the user's events when each of them opens here. Otherwise it refuses with
// the diagnosis, before anything is run. Traffic that cannot be counted
// leaves W and GFLOP/s measured and the intensity unknown, with a flag.
func resolve(cfg Config, h *machine.Host, diagnose func(*machine.Host, pmu.PMUs) (pmu.Diagnosis, error), probe func(pmu.Event) error) (resolved, error) {
	// Only the PMUs a run can count with are read in full: the core and
	// memory-controller ones, and those of the user's pmu/terms/ events.
	var named []string
	for _, s := range cfg.Counting.Events {
		if name, _, ok := strings.Cut(s, "/"); ok {
			named = append(named, name)
		}
	}
	pmus, err := pmu.DiscoverCountingPMUs(h.Sysfs, named)
	if err != nil {
		return resolved{}, err
	}
	var user []counterSpec
	for _, s := range cfg.Counting.Events {
		ev, err := pmu.ParseEvent(s, pmus)
		if err != nil {
			return resolved{}, fieldErr(err, "Counting.Events")
		}
		user = append(user, counterSpec{event: ev, kind: KindEvent})
	}
	d, err := diagnose(h, pmus)
	if err != nil {
		return resolved{}, err
	}
	res := resolved{machine: machine.Describe(d.CPU, d.Topology, h.Sysfs, h.Procfs)}
	if d.VM {
		res.notes = append(res.notes, vmNote)
	}
	switch {
	case cfg.Counting.Work != nil || cfg.Counting.Traffic != nil:
		res.source = roofline.SourceAnalytic
		res.notes = append(res.notes, analyticNote(cfg))
	case d.Work.Usable:
		res.source = roofline.SourceCounters
		res.specs, res.notes = planSpecs(d, res.notes)
	case len(user) > 0 || len(cfg.Counting.Regions) > 0 || cfg.Counting.LikwidMarkers:
		for _, u := range user {
			if err := probe(u.event); err != nil {
				return resolved{}, fmt.Errorf("event %q cannot be counted here: %w", u.event.Name, err)
			}
		}
		res.source = roofline.SourceEvents
		names := make([]string, len(user))
		for i, u := range user {
			names[i] = u.event.Name
		}
		// Name them: the gate asks for task-clock itself, so "the events
		// asked for" would be news to its user.
		verb := "were"
		if len(user) == 1 {
			verb = "was"
		}
		what := fmt.Sprintf("only %s %s counted", strings.Join(names, ", "), verb)
		if len(user) == 0 {
			// Regions are timed without counters.
			what = "only the time and the regions were measured"
		}
		res.notes = append(res.notes, roofline.Flag{Code: roofline.FlagMissingCounter,
			Message: fmt.Sprintf("work and traffic were not measured (%v): %s", d.Work.Err, what)})
	default:
		return resolved{}, &NoCountersError{Err: d.Work.Err, Diagnosis: d}
	}
	res.specs = append(res.specs, user...)
	layout(res.specs)
	return res, nil
}

func analyticNote(cfg Config) roofline.Flag {
	var given []string
	if cfg.Counting.Work != nil {
		given = append(given, "work")
	}
	if cfg.Counting.Traffic != nil {
		given = append(given, "traffic")
	}
	msg := "analytic point: " + strings.Join(given, " and ") + " given by the user, not counted; only the time was measured"
	if cfg.Counting.Work == nil || cfg.Counting.Traffic == nil {
		msg += "; without both, intensity is unknown"
	}
	if cfg.Counting.Overhead == nil {
		msg += "; T is the whole run of the command, its start and set-up (allocation, first touch of memory) included, which W and Q given for a kernel do not cover: an overhead run doing all but the kernel subtracts them"
	}
	return roofline.Flag{Code: roofline.FlagAnalytic, Message: msg}
}

// planSpecs turns the plan's work groups and, when countable, its traffic
// events into specs, and the diagnosis's problems into flags (the plan
// lists its unverified events there, grouped by reason).
func planSpecs(d pmu.Diagnosis, notes []roofline.Flag) ([]counterSpec, []roofline.Flag) {
	var specs []counterSpec
	for g, group := range d.Plan.Groups() {
		for _, w := range group {
			specs = append(specs, counterSpec{event: w.Event, kind: KindWork, weight: w.FlopsPerCount,
				class: w.Precision, group: g})
		}
	}
	if d.Traffic.Usable {
		for _, t := range d.Plan.Traffic {
			specs = append(specs, counterSpec{event: t.Event, kind: KindTraffic, weight: t.BytesPerCount,
				class: t.Direction, group: -1})
		}
	}
	for _, pr := range d.Problems {
		var code string
		switch pr.Code {
		case pmu.ProblemNoWorkEvent, pmu.ProblemECoreUnmeasured, pmu.ProblemEncode:
			code = roofline.FlagMissingCounter
		case pmu.ProblemUnverified, pmu.ProblemKernelAlias:
			code = roofline.FlagUnverified
		case pmu.ProblemNoTrafficPMU:
			code = roofline.FlagNoUncore
		default:
			// Multiplexing is flagged from the counts themselves; the rest
			// (permissions, the NMI watchdog, eBPF) is for the doctor, and
			// what it costs here shows in the checks below or the counts.
			continue
		}
		notes = append(notes, roofline.Flag{Code: code, Message: pr.What})
	}
	if !d.Traffic.Usable && !slices.ContainsFunc(notes, func(f roofline.Flag) bool { return f.Code == roofline.FlagNoUncore }) {
		notes = append(notes, roofline.Flag{Code: roofline.FlagNoUncore,
			Message: fmt.Sprintf("DRAM traffic not counted (%v): work and GFLOP/s are reported, intensity is unknown", d.Traffic.Err)})
	}
	return specs, notes
}

// layout gives each per-process spec its counter group: the plan's work
// groups as numbered, and each user event a group of its own (as perf stat
// -e opens them). System-wide specs take no group.
func layout(specs []counterSpec) {
	next := 0
	for i := range specs {
		s := &specs[i]
		switch {
		case s.event.SystemWide() || s.kind == KindTraffic:
			s.group = -1
		case s.kind == KindWork:
			next = max(next, s.group+1)
		default:
			s.group = next
			next++
		}
	}
}

// countPMU runs target once with the specs counted and puts the readings
// back in spec order. System-wide events are opened before the target
// starts, so that a refusal runs nothing; per-process groups are opened on
// the held target (enable-on-exec when it has not exec'd yet), then the
// system-wide events are enabled, before target's own hooks attach; they
// are disabled after target's own hooks were reaped.
func countPMU(ctx context.Context, target launch.Spec, specs []counterSpec, userOnly bool) (_ Outcome, err error) {
	var groups [][]pmu.Event
	var sysEvents []pmu.Event
	var taskIdx, sysIdx []int
	for i, s := range specs {
		if s.group < 0 {
			sysEvents = append(sysEvents, s.event)
			sysIdx = append(sysIdx, i)
			continue
		}
		for len(groups) <= s.group {
			groups = append(groups, nil)
		}
		groups[s.group] = append(groups[s.group], s.event)
	}
	for g := range groups {
		for i, s := range specs {
			if s.group == g {
				taskIdx = append(taskIdx, i)
			}
		}
	}

	var sys, task *pmu.Counters
	if len(sysEvents) > 0 {
		if sys, err = pmu.OpenSystemWide(sysEvents); err != nil {
			return Outcome{}, err
		}
		defer closeInto(&err, sys)
	}
	defer func() { closeInto(&err, task) }()
	openTask := launch.Hook{Attach: func(h launch.Held) error {
		if len(groups) == 0 {
			return nil
		}
		c, err := pmu.OpenTask(h.PID, groups, pmu.TaskOptions{EnableOnExec: !h.Execed, ExcludeKernel: userOnly})
		if err != nil {
			return err
		}
		task = c
		if h.Execed {
			// Held after its exec and before its first instruction:
			// counting from now on counts the target alone.
			return task.Enable()
		}
		return nil
	}}
	enableSys := launch.Hook{
		Attach: func(launch.Held) error {
			if sys == nil {
				return nil
			}
			return sys.Enable()
		},
		Reap: func(int) error {
			if sys == nil {
				return nil
			}
			return sys.Disable()
		},
	}
	// The target's own hooks (a rank's node, probes) attach once every
	// counter counts, and are reaped before the system-wide counters stop.
	target.Hooks = append([]launch.Hook{openTask, enableSys}, target.Hooks...)
	r, err := launch.Run(ctx, target)
	if err != nil {
		return Outcome{}, err
	}

	var rs, ss []pmu.Reading
	if task != nil {
		if rs, err = task.Read(); err != nil {
			return Outcome{}, err
		}
	}
	if sys != nil {
		if ss, err = sys.Read(); err != nil {
			return Outcome{}, err
		}
	}
	if len(rs) != len(taskIdx) || len(ss) != len(sysIdx) {
		return Outcome{}, fmt.Errorf("measure: %d+%d readings for %d+%d events", len(rs), len(ss), len(taskIdx), len(sysIdx))
	}
	o := Outcome{Counts: make([]pmu.Count, len(specs)), Wall: r.Wall, CPU: r.CPU, ExitCode: r.ExitCode, Signal: r.Signal, Outlived: r.Outlived}
	for j, r := range rs {
		o.Counts[taskIdx[j]] = r.Count
	}
	for j, r := range ss {
		o.Counts[sysIdx[j]] = r.Count
	}
	return o, nil
}

// closeInto closes c and keeps the first error.
func closeInto(err *error, c *pmu.Counters) {
	if cerr := c.Close(); cerr != nil && *err == nil {
		*err = cerr
	}
}

// countIdle counts the system-wide specs for d with nothing launched.
func countIdle(ctx context.Context, specs []counterSpec, d time.Duration) (Outcome, error) {
	events := make([]pmu.Event, len(specs))
	for i, s := range specs {
		events[i] = s.event
	}
	c, err := pmu.OpenSystemWide(events)
	if err != nil {
		return Outcome{}, err
	}
	defer c.Close()
	start := time.Now()
	if err := c.Enable(); err != nil {
		return Outcome{}, err
	}
	t := time.NewTimer(d)
	select {
	case <-ctx.Done():
		t.Stop()
		return Outcome{}, ctx.Err()
	case <-t.C:
	}
	if err := c.Disable(); err != nil {
		return Outcome{}, err
	}
	wall := time.Since(start)
	rs, err := c.Read()
	if err != nil {
		return Outcome{}, err
	}
	o := Outcome{Wall: wall}
	for _, r := range rs {
		o.Counts = append(o.Counts, r.Count)
	}
	return o, c.Close()
}

// spread places the counts of an idle run over the system-wide specs back
// at their positions among all specs (per-process ones count nothing).
func spread(specs []counterSpec, o Outcome) Outcome {
	out := o
	out.Counts = make([]pmu.Count, len(specs))
	j := 0
	for i, s := range specs {
		if s.event.SystemWide() {
			out.Counts[i] = o.Counts[j]
			j++
		}
	}
	return out
}

// regionSpecs are the per-process counters (FP work and -e events), which
// region probes read per CPU.
func (b *pmuBackend) regionSpecs() []counterSpec {
	var out []counterSpec
	for _, s := range b.specs {
		if !s.event.SystemWide() && s.kind != KindTraffic {
			out = append(out, s)
		}
	}
	return out
}
