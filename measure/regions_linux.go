package measure

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"

	"github.com/rprof/rprof/internal/launch"
	"github.com/rprof/rprof/regions"
	"github.com/rprof/rprof/roofline"
)

// planRegions resolves the regions of cfg against the target before
// anything runs, checks that probes can be attached here, and picks the
// counters read per CPU at every probe.
// specs are cfg.Counting.Regions, parsed by withDefaults.
func planRegions(cfg Config, specs []regions.Spec, caps Capabilities, counters []counterSpec) (*regionPlan, error) {
	// A target exec would refuse fails as in a run without regions,
	// wherever probes could be attached.
	path, err := launch.ResolveTarget(cfg.Target.Command[0], cfg.Target.Dir)
	if err != nil {
		return nil, err
	}
	if err := checkExecutable(cfg.Target.Command[0], path); err != nil {
		return nil, err
	}
	if err := regions.Supported(); err != nil {
		return nil, err
	}
	r := regions.Resolver{Target: path, Env: cfg.Target.Env}
	if len(specs) > regions.MaxRegions {
		return nil, fieldErr(&regions.TooManyRegionsError{N: len(specs)}, "Counting.Regions")
	}
	plan := &regionPlan{opts: regions.Options{KeepCalls: cfg.Hooks.CallGroups != nil}}
	if plan.probes, err = r.Resolve(specs); err != nil {
		return nil, regionInvalid(err)
	}
	if cfg.Counting.LikwidMarkers {
		m, err := r.Markers()
		if err != nil {
			return nil, regionInvalid(err)
		}
		plan.probes = append(plan.probes, m...)
	}
	hasWork := false
	for _, s := range counters {
		if len(plan.counters) == regions.MaxCounters-1 {
			plan.notes = append(plan.notes, roofline.Flag{Subject: roofline.SubjectRegions, Code: roofline.FlagMissingCounter,
				Message: fmt.Sprintf("regions: %s and later events are not counted per region: at most %d counters are read per probe", s.event.Name, regions.MaxCounters-1)})
			break
		}
		hasWork = hasWork || s.kind == KindWork
		plan.counters = append(plan.counters, s.counter())
		plan.opts.Counters = append(plan.opts.Counters, s.event)
	}
	if err := calibrate(plan); err != nil {
		return nil, err
	}
	if caps.AttributesFunctions {
		plan.attributed = true
		plan.notes = append(plan.notes, roofline.Flag{Subject: roofline.SubjectRegions, Code: roofline.FlagModelled,
			Message: "regions: a function region's W (exact) and Q (modelled) are its own instructions' in the emulated run, not its callees'; its calls and times come from uprobes on the native runs, so its GFLOP/s is its own work over its inclusive time"})
		return plan, nil
	}
	if !hasWork {
		plan.notes = append(plan.notes, roofline.Flag{Subject: roofline.SubjectRegions, Code: roofline.FlagMissingCounter,
			Message: "regions: work is not counted per region: there are no FP-work counters here (see rprof doctor); region times are measured"})
	}
	plan.notes = append(plan.notes, roofline.Flag{Subject: roofline.SubjectRegions, Code: roofline.FlagNoRegionTraffic,
		Message: "regions: DRAM traffic is not attributed to regions: memory-controller counters count per socket and cannot be read in eBPF off their own CPU (EINVAL), so region intensity is unknown and regions are not placed under the roofs; the whole-program point keeps Q"})
	return plan, nil
}

func attachRegions(pid int, plan *regionPlan) (session, error) {
	return regions.Attach(pid, plan.probes, plan.opts)
}

// calibrationCalls is how many calls of each probed empty function
// calibration times: enough for a steady mean, and a fraction of a second
// at the dearest kinds (docs/regions.md gives their cost per call).
const calibrationCalls = 1000

// calibrate measures the probes' cost here and gives each region the cost
// of its first instruction's kind; where that cannot be measured, nothing
// is subtracted and a note says so.
func calibrate(plan *regionPlan) error {
	cal, err := regions.Calibrate(calibrationCalls)
	if errors.Is(err, regions.ErrNotSupported) {
		plan.notes = append(plan.notes, roofline.Flag{Subject: roofline.SubjectRegions, Code: roofline.FlagProbeCost,
			Message: fmt.Sprintf("regions: the probes' cost was not calibrated (%v): region times include it", err)})
		return nil
	}
	if err != nil {
		return err
	}
	for _, p := range plan.probes {
		switch p.Kind {
		case regions.Function:
			plan.opts.Costs = append(plan.opts.Costs, cal.For(p.First))
		case regions.MarkerStart:
			plan.opts.MarkerCost = cal.For(p.First)
		}
	}
	return nil
}

// checkExecutable refuses, as exec(2) would (ENOEXEC), a target that is
// neither an ELF program nor a script, before its symbols are read: the
// run fails as one without regions does, not on the ELF reader's "bad
// magic number".
func checkExecutable(name, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return &launch.Error{Name: name, Kind: launch.ErrNotExecutable, Err: err}
	}
	defer f.Close()
	head := make([]byte, 4)
	n, _ := io.ReadFull(f, head)
	head = head[:n]
	if bytes.Equal(head, []byte(elf.ELFMAG)) || bytes.HasPrefix(head, []byte("#!")) {
		return nil
	}
	return &launch.Error{Name: name, Kind: launch.ErrNotExecutable, Err: syscall.ENOEXEC}
}
