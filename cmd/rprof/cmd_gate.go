package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/rprof/rprof/cluster"
	"github.com/rprof/rprof/cmd/rprof/internal/flagval"
	"github.com/rprof/rprof/cmd/rprof/internal/gate"
	"github.com/rprof/rprof/cmd/rprof/internal/render"
	"github.com/rprof/rprof/internal/docfile"
	"github.com/rprof/rprof/internal/lock"
	"github.com/rprof/rprof/internal/unit"
	"github.com/rprof/rprof/measure"
	"github.com/rprof/rprof/roofline"
)

var cmdGate = &command{
	Name:      "gate",
	UsageLine: "rprof gate --baseline FILE [--max-slowdown PCT] [flags] -- CMD [ARG...]",
	Short:     "fail CI when a kernel regresses against its baseline",
	Long: `
Gate runs CMD as 'rprof run' does, repeating it until the confidence
interval of its time is within --ci of the mean (or --max-repeat or
--max-time is reached), compares the new point with the point of the same
label in the baseline file, and exits:

  0    pass: no significant change beyond the limits
  1    regression: a significant slowdown, or growth of W or Q, beyond a limit
  2    bad command line or input (no baseline, a baseline of another schema,
       no point of the label, unreadable roofs)
  3    could not decide (the command failed, too few repetitions, machines
       differ without roofs to compare)
  125  could not measure (no counters and no fallback, unwritable output)
  126  the command is not executable; 127 it was not found

with the reason on one line on stderr. A slowdown fails only when the
two-sample test (Welch's t on the per-repetition times, or Mann-Whitney U
with --test) finds it significant at --alpha and it exceeds --max-slowdown,
so noise passes. W and Q are counted figures and are compared to their
limits directly.

When the machine differs from the baseline's, the gate compares fractions
of attainable performance (which need W and --roofs on both runs) instead
of time, and says so; counted traffic is not compared across machines. On
the same machine under roofs measured again, a regression must show in
both time and fraction. A changed roof is never a kernel regression.

Without hardware counters (most hosted CI runners), the gate works on time
alone, or on analytic W and Q given with --work and --traffic, and lists the
checks it could not make.

CMD's standard output is discarded (rprof's is the report); its standard
error passes through.

--update-baseline measures and writes (or replaces, in a point set) the
baseline point instead of gating; concurrent updates of one file (a CI
matrix) take turns, and every point is kept. An interrupted gate judges
and writes nothing (exit 130).

CI outputs: --markdown FILE (and, when GITHUB_STEP_SUMMARY is set, the same
appended there), --junit FILE, --benchfmt FILE (baseline and new samples in
Go benchmark format: 'benchstat -col run FILE'), and GitHub Actions
annotations on stdout when GITHUB_ACTIONS=true.

`,
	Run: runGate,
}

// runGate gates, and on GitHub Actions also annotates the failures that
// came before a verdict (which annotates itself), so that a missing baseline
// shows on the pull request, not only in the log.
func runGate(ctx context.Context, e *env, args []string) error {
	judged, err := gateOnce(ctx, e, args)
	if err != nil && !judged && !errors.Is(err, flag.ErrHelp) && os.Getenv("GITHUB_ACTIONS") == "true" {
		if werr := gate.WriteErrorAnnotation(e.stdout, "rprof gate", err.Error()); werr != nil {
			return werr
		}
	}
	return err
}

// gateOnce does the work of runGate; judged says whether it reached a
// verdict.
func gateOnce(ctx context.Context, e *env, args []string) (judged bool, err error) {
	fset := newFlagSet(e, "gate")
	baselinePath := fset.String("baseline", "", "baseline point or point set `FILE` (required)")
	update := fset.Bool("update-baseline", false, "write the new point to the baseline file (replacing its label's point in a point set) and exit, instead of gating")
	label := fset.String("label", "", "`NAME` of the point (default: CMD's base name)")
	limits := gate.DefaultLimits
	slowdown := flagval.Ratio{V: limits.MaxSlowdown, AllowOff: true}
	workGrowth := flagval.Ratio{V: limits.MaxWorkGrowth, AllowOff: true}
	trafficGrowth := flagval.Ratio{V: limits.MaxTrafficGrowth, AllowOff: true}
	minFraction := flagval.Ratio{V: limits.MinFraction}
	fset.Var(&slowdown, "max-slowdown", "largest slowdown accepted, `PCT` (5% or 0.05 alike) or off")
	fset.Var(&workGrowth, "max-work-growth", "largest growth of W accepted, `PCT` or off")
	fset.Var(&trafficGrowth, "max-traffic-growth", "largest growth of Q accepted, `PCT` or off")
	fset.Var(&minFraction, "min-fraction", "lowest fraction of attainable accepted, `PCT` (0: off)")
	opts := gate.DefaultOptions
	fset.StringVar(&opts.Test, "test", opts.Test, "the two-sample `TEST` of the times: welch-t or mann-whitney-u")
	fset.Float64Var(&opts.Alpha, "alpha", opts.Alpha, "significance level `P` of the test")
	ci := flagval.CI{Ratio: flagval.Ratio{V: 0.02}}
	fset.Var(&ci, "ci", "repeat until the time's interval is within `PCT` of the mean (2% or 0.02 alike), or --max-repeat or --max-time is reached")
	var mf measureFlags
	mf.register(fset)
	jsonPath := fset.String("json", "", "also write the new point to `FILE`")
	mdPath := fset.String("markdown", "", "write a Markdown summary to `FILE`")
	junitPath := fset.String("junit", "", "write JUnit XML to `FILE`")
	benchPath := fset.String("benchfmt", "", "write the baseline's and the new samples to `FILE` in Go benchmark format, for 'benchstat -col run FILE'")
	if err := parseFlags(fset, args); err != nil {
		return false, err
	}
	cmd := fset.Args()
	switch {
	case *baselinePath == "":
		return false, usagef("--baseline is required")
	case len(cmd) == 0:
		return false, usagef("no command to gate: put it after --")
	}
	if err := checkTest(opts.Test); err != nil {
		return false, err
	}
	limits = gate.Limits{MaxSlowdown: slowdown.V, MaxWorkGrowth: workGrowth.V, MaxTrafficGrowth: trafficGrowth.V, MinFraction: minFraction.V}
	if *label == "" {
		*label = filepath.Base(cmd[0])
	}

	outs := []string{*jsonPath, *mdPath, *junitPath, *benchPath}
	ins := []string{docfile.RoofsInput(mf.roofs)}
	if *update {
		// The baseline is read and rewritten: an output of its own, but
		// no other output may name it.
		if err := checkOutputs(outs, *baselinePath); err != nil {
			return false, err
		}
		outs = append(outs, *baselinePath)
	} else {
		ins = append(ins, *baselinePath)
	}
	if err := checkOutputs(outs, ins...); err != nil {
		return false, err
	}

	// Read the baseline before running anything: a missing one is the most
	// common mistake and should not cost a measurement.
	var baseline []roofline.Point
	var base roofline.Point
	if !*update {
		var err error
		if baseline, err = readBaseline(*baselinePath); err != nil {
			return false, err
		}
		if base, err = gate.Baseline(baseline, *label); err != nil {
			return false, &exitError{code: exitUsage, err: fmt.Errorf("baseline %s %w; pass --label, or add it with --update-baseline", *baselinePath, err)}
		}
	}

	roofs, err := docfile.LoadRoofs(mf.roofs)
	if err != nil {
		return false, &exitError{code: exitUsage, err: err}
	}
	cfg := measure.Config{
		Target:     measure.Target{Command: cmd, Label: *label, Stderr: e.stderr},
		Counting:   measure.Counting{Host: e.machine()},
		Repetition: measure.Repetition{CI: ci.V, MaxRepeat: mf.maxRepeat, MaxTime: mf.maxTime},
		Placement:  measure.Placement{Roofs: roofs.Roofs, RoofsPath: roofs.Path},
	}
	if err := mf.apply(&cfg, fset); err != nil {
		return false, err
	}
	var timeOnly string
	req, notes := machineRequest(e, "gate", lock.Shared, mf.lockTimeout)
	p, err := cluster.Measure(ctx, cfg, cluster.Run{Machine: req, Notes: notes, Measure: e.measure,
		OrTime: func(nc *measure.NoCountersError) {
			timeOnly = fmt.Sprintf("W and Q cannot be counted here (%v): gated on time only; give --work and --traffic to check them", nc.Err)
		}})
	var me *cluster.MachineError
	switch {
	case errors.As(err, &me):
		return false, machineFailure(me.Err)
	case err != nil:
		return false, measureFailure(err, "could not measure")
	}
	if ctx.Err() != nil {
		// Too few repetitions to judge or to be a baseline.
		return false, &exitError{code: exitInterrupted, err: errors.New("interrupted while measuring: nothing was judged or written")}
	}
	if *jsonPath != "" {
		if err := docfile.Write(ctx, *jsonPath, e.stdout, p); err != nil {
			return false, writeFailure(err)
		}
	}
	if *update {
		return false, updateBaseline(ctx, e, *baselinePath, p, ci.V)
	}

	v, err := gate.Decide(base, *p, limits, opts)
	if err != nil {
		return false, &exitError{code: exitUsage, err: err}
	}
	if timeOnly != "" {
		v.Notes = append(v.Notes, timeOnly)
	}
	to := gate.Outputs{Annotate: os.Getenv("GITHUB_ACTIONS") == "true", Markdown: *mdPath, JUnit: *junitPath,
		Benchfmt: *benchPath, StepSummary: os.Getenv("GITHUB_STEP_SUMMARY")}
	if err := gate.WriteOutputs(ctx, e.stdout, to, v, base, *p); err != nil {
		return false, writeFailure(err)
	}
	switch v.Outcome {
	case gate.Regression:
		return true, &exitError{code: exitFailure, err: errors.New(v.Reason)}
	case gate.Undecided:
		return true, &exitError{code: exitUndecided, err: errors.New(v.Reason)}
	}
	fmt.Fprintf(e.stderr, "rprof gate: %s\n", v.Reason)
	return true, nil
}

// readBaseline reads the baseline; every failure is one line saying what to
// do (exit 2).
func readBaseline(path string) ([]roofline.Point, error) {
	ps, err := docfile.ReadPoints(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, &exitError{code: exitUsage, err: fmt.Errorf("baseline %s does not exist; create it with --update-baseline", path)}
	case errors.Is(err, roofline.ErrSchema):
		return nil, &exitError{code: exitUsage, err: fmt.Errorf("baseline %w; regenerate it with --update-baseline", err)}
	case err != nil:
		return nil, &exitError{code: exitUsage, err: fmt.Errorf("baseline: %w", err)}
	}
	return ps, nil
}

// updateBaseline writes p as the baseline: alone, or replacing (or joining)
// the point of its label when the file holds a point set. It says when the
// time's interval stayed wider than ci (--ci), which every later gate's
// resolution inherits.
func updateBaseline(ctx context.Context, e *env, path string, p *roofline.Point, ci float64) error {
	if p.Exit.Code != 0 || p.Exit.Signal != "" {
		return &exitError{code: exitUndecided, err: fmt.Errorf("could not measure: the command %s; baseline %s not written", render.ExitText(p.Exit), path)}
	}
	if p.Seconds <= 0 {
		return &exitError{code: exitUndecided, err: fmt.Errorf("could not measure: the time is not positive after the overhead run's subtraction (the overhead took as long as the command; give the command more work); baseline %s not written", path)}
	}
	if err := docfile.UpdatePoint(ctx, path, e.stdout, *p); err != nil {
		return &exitError{code: exitInternal, err: err}
	}
	wide := ""
	if p.Seconds > 0 && p.CI.N >= 2 && (p.CI.Seconds.Hi-p.CI.Seconds.Lo)/2/p.Seconds > ci {
		wide = fmt.Sprintf("; wider than --ci %s: --max-repeat or --max-time ended the repetitions first, and gates against it cannot tell changes within about that width from noise (measure it on a quieter machine, or allow more repetitions)", unit.Relative(ci))
	}
	fmt.Fprintf(e.stderr, "rprof gate: wrote baseline %s: %q, %.4g s ± %s over %d repetitions%s\n",
		path, p.Label, p.Seconds, render.RelHalf(p), len(p.Samples.Seconds), wide)
	return nil
}
