package measure

import (
	"context"
	"errors"
	"fmt"
	"runtime"
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
	// exec runs argv once with specs counted.
	exec func(ctx context.Context, cfg Config, argv []string, specs []counterSpec) (outcome, error)
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
	in := inputs{cfg: cfg, source: res.source, specs: res.specs, notes: res.notes,
		machine: res.machine, roofs: roofs, created: d.now(), cpus: d.cpus}

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
	_, err = stats.Iterate(ctx, rule, 0, func() (float64, time.Duration, error) {
		r, err := runOnce(ctx, cfg, d, res.specs)
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
	return buildPoint(in)
}

// runOnce is one repetition: the overhead command (which must succeed),
// then the target.
func runOnce(ctx context.Context, cfg Config, d deps, specs []counterSpec) (rep, error) {
	var r rep
	if cfg.Overhead != nil {
		o, err := d.exec(ctx, cfg, cfg.Overhead, specs)
		if err != nil {
			return r, &OverheadError{Command: cfg.Overhead, Err: err}
		}
		if o.exit != 0 || o.signal != "" {
			return r, &OverheadError{Command: cfg.Overhead, Exit: o.exit, Signal: o.signal}
		}
		r.overhead = &o
	}
	k, err := d.exec(ctx, cfg, cfg.Command, specs)
	if err != nil {
		return r, err
	}
	r.kernel = k
	return r, nil
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
