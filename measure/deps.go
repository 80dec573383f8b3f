package measure

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/rprof/rprof/pmu"
	"github.com/rprof/rprof/roofline"
)

// systemDeps are Run's boundaries on the running machine.
func systemDeps() deps {
	sysfs, procfs := os.DirFS("/sys"), os.DirFS("/proc")
	return deps{
		resolve: func(cfg Config) (resolved, error) {
			return resolve(cfg, sysfs, procfs, pmu.DiagnoseLive, pmu.Probe)
		},
		exec: runCounted,
		idle: countIdle,
		now:  time.Now,
		cpus: OnlineCPUs(),
	}
}

// resolve picks where W and Q come from, in this order: analytic values,
// the catalogue's counters when the diagnosis finds work countable, or only
// the user's events when each of them opens here. Otherwise it refuses with
// the diagnosis, before anything is run. Traffic that cannot be counted
// leaves W and GFLOP/s measured and the intensity unknown, with a flag.
func resolve(cfg Config, sysfs, procfs fs.FS, diagnose func() (pmu.Diagnosis, error), probe func(pmu.Event) error) (resolved, error) {
	pmus, err := pmu.DiscoverPMUs(sysfs)
	if err != nil {
		return resolved{}, err
	}
	var user []counterSpec
	for _, s := range cfg.Events {
		ev, err := pmu.ParseEvent(s, pmus)
		if err != nil {
			return resolved{}, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
		}
		user = append(user, counterSpec{event: ev, kind: kindUser})
	}
	d, err := diagnose()
	if err != nil {
		return resolved{}, err
	}
	res := resolved{machine: pmu.DescribeMachine(d.CPU, d.Topology, sysfs, procfs)}
	if d.VM {
		res.notes = append(res.notes, roofline.Flag{Code: roofline.FlagVM,
			Message: "measured in a virtual machine: other guests share the memory and caches, and counters, if any, are virtualised"})
	}
	switch {
	case cfg.Work != nil || cfg.Traffic != nil:
		res.source = roofline.SourceAnalytic
		res.notes = append(res.notes, analyticNote(cfg))
	case d.Work.Usable:
		res.source = roofline.SourceCounters
		res.specs, res.notes = planSpecs(d, res.notes)
	case len(user) > 0:
		for _, u := range user {
			if err := probe(u.event); err != nil {
				return resolved{}, fmt.Errorf("event %q cannot be counted here: %w", u.event.Name, err)
			}
		}
		res.source = roofline.SourceEvents
		res.notes = append(res.notes, roofline.Flag{Code: roofline.FlagMissingCounter,
			Message: fmt.Sprintf("work and traffic were not measured (%v): only the events asked for were counted", d.Work.Err)})
	default:
		return resolved{}, &NoCountersError{Err: d.Work.Err, Diagnosis: d}
	}
	res.specs = append(res.specs, user...)
	layout(res.specs)
	return res, nil
}

func analyticNote(cfg Config) roofline.Flag {
	var given []string
	if cfg.Work != nil {
		given = append(given, "work (--work)")
	}
	if cfg.Traffic != nil {
		given = append(given, "traffic (--traffic)")
	}
	msg := "analytic point: " + strings.Join(given, " and ") + " given by the user, not counted; only the time was measured"
	if cfg.Work == nil || cfg.Traffic == nil {
		msg += "; without both, intensity is unknown"
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
			specs = append(specs, counterSpec{event: w.Event, kind: kindWork, weight: w.FlopsPerCount,
				class: w.Precision, group: g})
		}
	}
	if d.Traffic.Usable {
		for _, t := range d.Plan.Traffic {
			specs = append(specs, counterSpec{event: t.Event, kind: kindTraffic, weight: t.BytesPerCount,
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
		notes = append(notes, roofline.Flag{Code: code, Message: pr.String()})
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
		case s.event.SystemWide() || s.kind == kindTraffic:
			s.group = -1
		case s.kind == kindWork:
			next = max(next, s.group+1)
		default:
			s.group = next
			next++
		}
	}
}

// runCounted runs argv once through the launcher with the specs counted and
// puts the readings back in spec order.
func runCounted(ctx context.Context, cfg Config, argv []string, specs []counterSpec, userOnly bool) (outcome, error) {
	spec := execSpec(cfg, argv, userOnly)
	var taskIdx, sysIdx []int
	for i, s := range specs {
		if s.group < 0 {
			spec.SystemWide = append(spec.SystemWide, s.event)
			sysIdx = append(sysIdx, i)
			continue
		}
		for len(spec.Groups) <= s.group {
			spec.Groups = append(spec.Groups, nil)
		}
		spec.Groups[s.group] = append(spec.Groups[s.group], s.event)
	}
	for g := range spec.Groups {
		for i, s := range specs {
			if s.group == g {
				taskIdx = append(taskIdx, i)
			}
		}
	}
	x, err := Execute(ctx, spec)
	if err != nil {
		return outcome{}, err
	}
	if len(x.Task) != len(taskIdx) || len(x.System) != len(sysIdx) {
		return outcome{}, fmt.Errorf("measure: %d+%d readings for %d+%d events", len(x.Task), len(x.System), len(taskIdx), len(sysIdx))
	}
	o := outcome{counts: make([]pmu.Count, len(specs)), wall: x.Wall, exit: x.ExitCode, signal: x.Signal, outlived: x.Outlived}
	for j, r := range x.Task {
		o.counts[taskIdx[j]] = r.Count
	}
	for j, r := range x.System {
		o.counts[sysIdx[j]] = r.Count
	}
	return o, nil
}

// execSpec is the run of argv with cfg's streams, and its node's hooks
// for a rank of a parallel job; the caller adds the counters.
func execSpec(cfg Config, argv []string, userOnly bool) ExecSpec {
	spec := ExecSpec{Argv: argv, Env: cfg.Env, Dir: cfg.Dir, Stdin: cfg.Stdin, Stdout: cfg.Stdout, Stderr: cfg.Stderr,
		ExcludeKernel: userOnly}
	if cfg.Node != nil {
		spec.BeforeRelease, spec.AfterReap = cfg.Node.Started, cfg.Node.Ended
	}
	return spec
}

// countIdle counts the system-wide specs for d with nothing launched.
func countIdle(ctx context.Context, specs []counterSpec, d time.Duration) (outcome, error) {
	events := make([]pmu.Event, len(specs))
	for i, s := range specs {
		events[i] = s.event
	}
	c, err := pmu.OpenSystemWide(events)
	if err != nil {
		return outcome{}, err
	}
	defer c.Close()
	start := time.Now()
	if err := c.Enable(); err != nil {
		return outcome{}, err
	}
	t := time.NewTimer(d)
	select {
	case <-ctx.Done():
		t.Stop()
		return outcome{}, ctx.Err()
	case <-t.C:
	}
	if err := c.Disable(); err != nil {
		return outcome{}, err
	}
	wall := time.Since(start)
	rs, err := c.Read()
	if err != nil {
		return outcome{}, err
	}
	o := outcome{wall: wall}
	for _, r := range rs {
		o.counts = append(o.counts, r.Count)
	}
	return o, c.Close()
}
