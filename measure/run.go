package measure

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"time"

	"github.com/rprof/rprof/internal/launch"
	"github.com/rprof/rprof/internal/stats"
	"github.com/rprof/rprof/machine"
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
// *OverheadError, and errors matching ErrNotFound and ErrNotExecutable.
func Run(ctx context.Context, cfg Config) (*roofline.Point, error) {
	// The CPU times are this kernel's, whatever tree Config.Counting.Host reads:
	// they say how busy the machine running the target is.
	return run(ctx, cfg, deps{now: time.Now, cpus: OnlineCPUs(), cpuTimes: func() (machine.CPUTimes, error) {
		return machine.ReadCPUTimes(os.DirFS(machine.DefaultProcfs))
	}})
}

// deps are Run's boundaries, so that tests drive Run with a backend of
// recorded counts and a fixed clock.
type deps struct {
	// backend counts; nil means the one Config.Counting.Backend names.
	backend Backend
	now     func() time.Time
	cpus    int
	// cpuTimes reads the machine's CPU times (nil: not known).
	cpuTimes func() (machine.CPUTimes, error)
}

// errStop ends the repetition loop after a target that failed.
var errStop = errors.New("target failed")

// backendFor is the backend of cfg (d's in tests), which must be able to
// do what cfg asks beyond counting.
func backendFor(cfg Config, d deps) (Backend, error) {
	b := d.backend
	if b == nil {
		var err error
		if b, err = newBackend(cfg.Counting.Backend, cfg.Counting.Host.OrLive()); err != nil {
			return nil, err
		}
	}
	if cfg.Hooks.EmulatedCalls != nil && !b.Capabilities().CountsCalls {
		return nil, fieldErr(errors.New("calls are counted one by one under emulation only"), "Hooks.EmulatedCalls", "Counting.Backend")
	}
	return b, nil
}

func run(ctx context.Context, cfg Config, d deps) (*roofline.Point, error) {
	cfg, specs, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	b, err := backendFor(cfg, d)
	if err != nil {
		return nil, err
	}
	c, err := b.Resolve(ctx, cfg)
	if err != nil {
		return nil, err
	}
	var plan *regionPlan
	if len(cfg.Counting.Regions) > 0 || cfg.Counting.LikwidMarkers {
		var counters []counterSpec
		if rc, ok := b.(regionCounter); ok {
			counters = rc.regionSpecs()
		}
		if plan, err = planRegions(cfg, specs, b.Capabilities(), counters); err != nil {
			return nil, err
		}
	}
	in := inputs{cfg: cfg, plan: plan, source: c.Source, counters: c.Counters, notes: c.Notes,
		machine: c.Machine, roofs: cfg.Placement.Roofs, created: d.now(), cpus: d.cpus, stdinOnce: readOnce(cfg.Target.Stdin)}

	if err := idleBaseline(ctx, b, c.Counters, &in); err != nil {
		return nil, err
	}

	rule := repetitionRule(cfg)
	x := &executor{b: b, cfg: cfg, plan: plan}
	busy := busyMeter(d.cpuTimes, d.cpus)
	if cfg.Counting.Node != nil {
		x.hooks = []launch.Hook{{
			Attach: func(launch.Held) error { return cfg.Counting.Node.Started() },
			Reap:   func(int) error { return cfg.Counting.Node.Ended(ctx) },
		}}
	}
	_, err = stats.Iterate(ctx, rule, 0, func() (float64, time.Duration, error) {
		r, err := x.repetition(ctx)
		if err != nil {
			return 0, 0, err
		}
		in.reps = append(in.reps, r)
		took := r.kernel.Wall
		secs := took.Seconds()
		if r.overhead != nil {
			took += r.overhead.Wall
			secs -= r.overhead.Wall.Seconds()
		}
		if r.kernel.ExitCode != 0 || r.kernel.Signal != "" {
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
	in.notes = append(in.notes, x.notes...)
	if ctx.Err() != nil {
		in.notes = append(in.notes, interruptedFlag(cfg, in.reps))
	}
	in.idleCPUs = busy()
	return buildPoint(in)
}

// idleBaseline counts the idle baseline into in when one is asked for and
// there is background traffic to count, and says so when there is none.
func idleBaseline(ctx context.Context, b Backend, counters []Counter, in *inputs) error {
	switch {
	case in.cfg.Counting.IdleBaseline > 0 && hasBackgroundTraffic(counters):
		o, err := b.Idle(ctx, in.cfg.Counting.IdleBaseline)
		if err != nil {
			return fmt.Errorf("idle baseline: %w", err)
		}
		in.idle = &o
	case in.cfg.Counting.IdleBaseline > 0:
		in.notes = append(in.notes, roofline.Flag{Code: roofline.FlagNoUncore,
			Message: "the idle baseline was not measured: no DRAM traffic is counted here"})
	}
	return nil
}

// repetitionRule is --repeat's fixed count, or --ci's adaptive rule.
func repetitionRule(cfg Config) stats.StopRule {
	if cfg.Repetition.CI > 0 {
		return stats.StopRule{MaxTime: cfg.Repetition.MaxTime, MaxCount: cfg.Repetition.MaxRepeat, Confidence: cfg.Repetition.Confidence,
			RelError: cfg.Repetition.CI, MinCount: minAdaptive, Method: stats.MethodMean}
	}
	return stats.Fixed(cfg.Repetition.Repeat, cfg.Repetition.Confidence, stats.MethodMean)
}

// interruptedFlag says that the point holds only the repetitions run before
// an interruption.
func interruptedFlag(cfg Config, reps []rep) roofline.Flag {
	of := ""
	if cfg.Repetition.Repeat > 1 {
		of = fmt.Sprintf(" of the %d asked for", cfg.Repetition.Repeat)
	}
	last := ""
	if s := reps[len(reps)-1].kernel.Signal; s != "" {
		last = fmt.Sprintf("; the last was cut short (the target was killed by %s)", s)
	}
	return roofline.Flag{Code: roofline.FlagInterrupted, Subject: roofline.SubjectExit,
		Message: fmt.Sprintf("rprof was interrupted while measuring: the point holds the %d repetition(s) run%s%s", len(reps), of, last)}
}

// busyMeter starts measuring how many of the machine's cpus stay idle; the
// function it returns says how many did on average since, or nil when the
// CPU times cannot be read.
func busyMeter(read func() (machine.CPUTimes, error), cpus int) func() *float64 {
	if read == nil {
		return func() *float64 { return nil }
	}
	start, err := read()
	return func() *float64 {
		end, err2 := read()
		if err != nil || err2 != nil {
			return nil
		}
		d := end.Sub(start)
		if d.Busy+d.Idle+d.Steal == 0 {
			return nil
		}
		idle := d.IdleShare() * float64(cpus)
		return &idle
	}
}

// executor runs the repetitions and keeps the backend's notes, each once.
type executor struct {
	b   Backend
	cfg Config
	// plan is the regions every run of the target attaches (nil: none).
	plan *regionPlan
	// hooks attach to every run, after the backend's own (a rank's
	// node: see Config.Counting.Node).
	hooks []launch.Hook
	notes []roofline.Flag
}

// repetition runs the overhead command (which must succeed), then the
// target.
func (x *executor) repetition(ctx context.Context) (rep, error) {
	var r rep
	if x.cfg.Counting.Overhead != nil {
		o, err := x.count(ctx, x.cfg.Counting.Overhead)
		if err != nil {
			return r, &OverheadError{Command: x.cfg.Counting.Overhead, Err: err}
		}
		if o.ExitCode != 0 || o.Signal != "" {
			return r, &OverheadError{Command: x.cfg.Counting.Overhead, Exit: o.ExitCode, Signal: o.Signal}
		}
		r.overhead = &o
	}
	var hooks []launch.Hook
	var pr *probedRun
	if x.plan != nil {
		// Only the target is probed, not the overhead command.
		pr = &probedRun{plan: x.plan}
		defer pr.close()
		hooks = append(hooks, pr.hook())
	}
	k, err := x.count(ctx, x.cfg.Target.Command, hooks...)
	if err != nil {
		return r, err
	}
	r.kernel = k
	if pr != nil {
		r.regions = pr.result
	}
	return r, nil
}

// count runs argv once with the executor's hooks and more.
func (x *executor) count(ctx context.Context, argv []string, more ...launch.Hook) (Outcome, error) {
	o, err := x.b.Count(ctx, launch.Spec{Argv: argv, Env: x.cfg.Target.Env, Dir: x.cfg.Target.Dir,
		Stdin: x.cfg.Target.Stdin, Stdout: x.cfg.Target.Stdout, Stderr: x.cfg.Target.Stderr, Hooks: append(slices.Clone(x.hooks), more...)})
	for _, n := range o.Notes {
		if !slices.Contains(x.notes, n) {
			x.notes = append(x.notes, n)
		}
	}
	return o, err
}

// ownsTraffic runs the election of a rank of a parallel job (Config.Counting.Node):
// whether it counts its node's Background counters for all local ranks. A
// lone process owns its traffic. A rank that does not gets the flag to
// report.
func ownsTraffic(ctx context.Context, cfg Config) (bool, []roofline.Flag, error) {
	if cfg.Counting.Node == nil {
		return true, nil, nil
	}
	owner, err := cfg.Counting.Node.Elect(ctx)
	if err != nil {
		return false, nil, fmt.Errorf("traffic owner election: %w", err)
	}
	if owner {
		return true, nil, nil
	}
	return false, []roofline.Flag{{Code: roofline.FlagTrafficElsewhere, Subject: roofline.SubjectTraffic,
		Message: "this rank did not count DRAM traffic: one process per node and job counts the node's memory controllers for all its ranks (rprof merge sums the owners' counts into the job's Q)"}}, nil
}

func hasBackgroundTraffic(counters []Counter) bool {
	return slices.ContainsFunc(counters, func(c Counter) bool { return c.Kind == KindTraffic && c.Background })
}

// OnlineCPUs is the CPU count the default thread scope of the roofs is
// chosen against: the CPUs this process may run on.
func OnlineCPUs() int { return runtime.NumCPU() }
