package measure

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"time"

	"github.com/rprof/rprof/internal/stats"
	"github.com/rprof/rprof/pmu"
	"github.com/rprof/rprof/roofline"
)

// Run does everything `rprof run` does except rendering: it resolves the
// events, refuses (before running anything) when neither counters nor
// analytic values nor user events can be counted, runs the target the
// configured number of times under counters, subtracts overhead and idle
// traffic, computes the statistics and validity flags, and places the point
// under the roofs.
//
// A target that ran but failed is not an error: the point records its exit
// status and carries a flag, and repetition stops there. Errors are rprof's
// own failures and bad input: ErrInvalidConfig, *NoCountersError,
// *OverheadError, roofs-file errors (*roofline.SchemaError
// among them) and the launcher's typed not-found and not-executable errors.
func Run(ctx context.Context, cfg Config) (*roofline.Point, error) {
	return run(ctx, cfg, systemDeps())
}

// deps are the boundaries of Run to the kernel, so that tests drive Run
// with recorded runs.
type deps struct {
	// resolve decides the source of W and Q and the counters to open, or
	// refuses with *NoCountersError.
	resolve func(cfg Config) (resolved, error)
	// exec runs argv once with specs counted (per-process ones in user
	// mode only when userOnly).
	exec func(ctx context.Context, cfg Config, argv []string, specs []counterSpec, userOnly bool) (outcome, error)
	// idle counts the system-wide specs for d with no target running.
	idle func(ctx context.Context, specs []counterSpec, d time.Duration) (outcome, error)
	now  func() time.Time
	cpus int
}

// resolved is what a run will count.
type resolved struct {
	source  string
	specs   []counterSpec
	notes   []roofline.Flag
	machine roofline.Machine
}

// errStop ends the repetition loop after a target that failed.
var errStop = errors.New("target failed")

func run(ctx context.Context, cfg Config, d deps) (*roofline.Point, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	var roofs *roofline.Roofs
	if cfg.RoofsPath != "" {
		if roofs, err = roofline.ReadRoofs(cfg.RoofsPath); err != nil {
			return nil, fmt.Errorf("roofs: %w", err)
		}
	}
	res, err := d.resolve(cfg)
	if err != nil {
		return nil, err
	}
	if cfg.Node != nil {
		owner, err := cfg.Node.Elect(ctx)
		if err != nil {
			return nil, fmt.Errorf("traffic owner election: %w", err)
		}
		if !owner {
			res.specs = slices.DeleteFunc(res.specs, func(s counterSpec) bool { return s.event.SystemWide() })
			res.notes = append(res.notes, roofline.Flag{Code: roofline.FlagTrafficElsewhere,
				Message: "this rank did not count DRAM traffic: one process per node and job counts the node's memory controllers for all its ranks (rprof merge sums the owners' counts into the job's Q)"})
		}
	}
	in := inputs{cfg: cfg, source: res.source, specs: res.specs, notes: res.notes,
		machine: res.machine, roofs: roofs, created: d.now(), cpus: d.cpus, stdinOnce: readOnce(cfg.Stdin)}

	switch {
	case cfg.IdleBaseline > 0 && hasTraffic(res.specs):
		o, err := d.idle(ctx, systemWide(res.specs), cfg.IdleBaseline)
		if err != nil {
			return nil, fmt.Errorf("idle baseline: %w", err)
		}
		idle := spread(res.specs, o)
		in.idle = &idle
	case cfg.IdleBaseline > 0:
		in.notes = append(in.notes, roofline.Flag{Code: roofline.FlagNoUncore,
			Message: "the idle baseline was not measured: no DRAM traffic is counted here"})
	}

	rule := stats.Fixed(cfg.Repeat, cfg.Confidence, stats.MethodMean)
	if cfg.CI > 0 {
		rule = stats.StopRule{MaxTime: cfg.MaxTime, MaxCount: cfg.MaxRepeat, Confidence: cfg.Confidence,
			RelError: cfg.CI, MinCount: minAdaptive, Method: stats.MethodMean}
	}
	x := &executor{d: d, cfg: cfg, specs: res.specs}
	_, err = stats.Iterate(ctx, rule, 0, func() (float64, time.Duration, error) {
		r, err := x.repetition(ctx)
		if err != nil {
			return 0, 0, err
		}
		in.reps = append(in.reps, r)
		took := r.kernel.wall
		secs := took.Seconds()
		if r.overhead != nil {
			took += r.overhead.wall
			secs -= r.overhead.wall.Seconds()
		}
		if r.kernel.exit != 0 || r.kernel.signal != "" {
			return secs, took, errStop
		}
		return secs, took, nil
	})
	if err != nil && !errors.Is(err, errStop) {
		// Interrupted between repetitions: the completed ones still make a
		// point, as perf stat reports what it counted before Ctrl-C.
		if ctx.Err() == nil || len(in.reps) == 0 {
			return nil, err
		}
	}
	if x.userOnly {
		in.notes = append(in.notes, roofline.Flag{Code: roofline.FlagUserOnly,
			Message: "perf_event_paranoid refused kernel-mode counting, so per-process events count user mode only (as perf stat's :u): work or faults in the kernel on the target's behalf are left out"})
	}
	return buildPoint(in)
}

// executor runs the repetitions. Like perf stat, it falls back to
// user-mode-only per-process counting once the kernel refuses kernel-mode
// counting (perf_event_paranoid=2 without CAP_PERFMON), and keeps to it so
// that every repetition counts the same.
type executor struct {
	d        deps
	cfg      Config
	specs    []counterSpec
	userOnly bool
}

// repetition runs the overhead command (which must succeed), then the
// target.
func (x *executor) repetition(ctx context.Context) (rep, error) {
	var r rep
	if x.cfg.Overhead != nil {
		o, err := x.exec(ctx, x.cfg.Overhead)
		if err != nil {
			return r, &OverheadError{Command: x.cfg.Overhead, Err: err}
		}
		if o.exit != 0 || o.signal != "" {
			return r, &OverheadError{Command: x.cfg.Overhead, Exit: o.exit, Signal: o.signal}
		}
		r.overhead = &o
	}
	k, err := x.exec(ctx, x.cfg.Command)
	if err != nil {
		return r, err
	}
	r.kernel = k
	return r, nil
}

func (x *executor) exec(ctx context.Context, argv []string) (outcome, error) {
	o, err := x.d.exec(ctx, x.cfg, argv, x.specs, x.userOnly)
	var pe *pmu.PermissionError
	if err != nil && !x.userOnly && errors.As(err, &pe) && !pe.SystemWide {
		// The counters are opened before the target is released, so the
		// refused attempt ran nothing.
		x.userOnly = true
		return x.d.exec(ctx, x.cfg, argv, x.specs, true)
	}
	return o, err
}

// systemWide lists the specs counted per CPU (memory-controller boxes and
// system-wide user events).
func systemWide(specs []counterSpec) []counterSpec {
	var out []counterSpec
	for _, s := range specs {
		if s.event.SystemWide() {
			out = append(out, s)
		}
	}
	return out
}

func hasTraffic(specs []counterSpec) bool {
	for _, s := range specs {
		if s.kind == kindTraffic {
			return true
		}
	}
	return false
}

// spread places the counts of an idle run over the system-wide specs back
// at their positions among all specs (per-process ones count nothing).
func spread(specs []counterSpec, o outcome) outcome {
	out := o
	out.counts = make([]pmu.Count, len(specs))
	j := 0
	for i, s := range specs {
		if s.event.SystemWide() {
			out.counts[i] = o.counts[j]
			j++
		}
	}
	return out
}

// OnlineCPUs is the CPU count the default thread scope of the roofs is
// chosen against: the CPUs this process may run on.
func OnlineCPUs() int { return runtime.NumCPU() }
