package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/rprof/rprof/cluster"
	"github.com/rprof/rprof/cmd/rprof/internal/advice"
	"github.com/rprof/rprof/cmd/rprof/internal/chart"
	"github.com/rprof/rprof/cmd/rprof/internal/flagval"
	"github.com/rprof/rprof/cmd/rprof/internal/render"
	"github.com/rprof/rprof/internal/badfield"
	"github.com/rprof/rprof/internal/docfile"
	"github.com/rprof/rprof/internal/lock"
	"github.com/rprof/rprof/measure"
	"github.com/rprof/rprof/roofline"

	"github.com/rprof/rprof/internal/unit"
)

var cmdRun = &command{
	Name:      "run",
	UsageLine: "rprof run [flags] [--] CMD [ARG...]",
	Short:     "measure a program's roofline point",
	Long: `
Run runs CMD and places it on the roofline: it counts the floating-point
work W (FLOPs) and the DRAM traffic Q (bytes) with hardware counters, times
the run (T, wall seconds), and reports the arithmetic intensity W/Q, GFLOP/s
and GB/s, which roof binds the program and how far below that roof it is.
Counting starts at CMD's exec and covers all its threads and children;
children still running when CMD exits are flagged (children-outlived). CMD
dies with rprof, even when rprof is killed. Roofs measured on another
machine (another CPU or core count, or another host) are flagged
foreign-roofs. CMD owns stdin and stdout (a piped stdin reaches only the
first of several runs: flagged stdin-once); the summary goes to stderr, in
the style of perf stat. Validity warnings are numbered footnotes; a mean
time whose confidence interval is wider than 20% of it either way is
flagged wide-time-interval, with the repetitions far from the others.

Without hardware counters (a VM without a virtual PMU, an unsupported CPU)
run does not pretend: it refuses before running CMD and prints the same
diagnosis as 'rprof doctor', unless W and Q are given (--work, --traffic:
CMD is only timed and the point is marked analytic) or only -e events are
asked for (they are reported, as perf stat would, and W and Q are not).
Or count by instrumentation: --count emulate runs CMD once under QEMU
(qemu-user) with rprof's plugin, which counts W exactly and models Q and
the traffic between every pair of cache levels, with W and Q by function;
T still comes from native runs (docs/emulate.md).

The roofs' thread scope follows the program: its parallelism is its CPU
time (user plus system, its waited-for children's included) over its wall
time, and a parallelism p stands for ceil(p - 0.25) threads, at least 1
(1.1 is one thread: a runtime's helper threads and rprof's start-up; 1.3
is two). The point goes under the smallest measured scope not below that
count: a single-threaded program under the 1-thread roofs, two busy
processes under the 2-thread roofs. On a machine other programs keep busy
the parallelism reads lower than the threads the program ran. --threads N
overrides; the summary and the point (threads_rule) say which rule chose
the scope.

GPU kernels (NVIDIA): --gpu records every kernel CMD launches, from
inside it: CUDA loads rprof's CUPTI injection library into CMD
(CUDA_INJECTION64_PATH) and it writes each kernel's activity record.
Each kernel on each device is one point, its launches' GPU time summed,
with the device and the driver's peak clocks. Where CUPTI's range
profiler runs (libnvperf_host.so beside libcupti, counters not
restricted to administrators), it also counts each launch's FP
instructions and bytes by level (kernel replay: each kernel runs several
times), and the point gets W and Q and is placed under the device's GPU
roofs (--roofs); otherwise the points carry times only, flagged
gpu-times-only with why. The table goes to stderr and --json writes the
points (a point set). CUPTI is looked for in $RPROF_CUPTI_LIB,
$CUDA_HOME, $CUDA_PATH, /usr/local/cuda and the system's library
directories. No CUPTI, a CUPTI too old, profiling restricted to
administrators, or a CMD that never initialises CUDA is one line (exit
125). See docs/gpu.md.

Under mpirun or srun (mpirun -n 4 rprof run --json DIR/ -- ./app), each
rank counts its own W and T, and one process per node and job, elected
through lock files, counts the node's DRAM traffic for all its ranks.
--json DIR/ writes one file per rank, named by job and rank; 'rprof merge
DIR/*.json' makes the job's point. See docs/cluster.md.

Exit status: CMD's own (128+N when signal N killed it); rprof's failures:
2 bad command line or input (empty command, --repeat 0, unparsable event,
unreadable roofs file), 125 rprof could not measure (no counters, failing
overhead command, unwritable output, --lock-timeout passed), 126 CMD not
executable, 127 CMD not found, 130 interrupted (the point of the
repetitions that ended is written, flagged interrupted; before any ended,
nothing).
`,
	Run: runRun,
}

func runRun(ctx context.Context, e *env, args []string) error {
	fset := newFlagSet(e, "run")
	var mf measureFlags
	mf.register(fset)
	repeat := fset.Int("repeat", 1, "run `N` times")
	var ci flagval.CI
	fset.Var(&ci, "ci", "repeat until the interval of the mean time is within `PCT` of the mean (2% or 0.02 alike), at most --max-repeat times or --max-time of runs")
	confidence := fset.Float64("confidence", measure.DefaultConfidence, "`LEVEL` of every interval")
	jsonPath := fset.String("json", "", "write the point document (schema rprof.point/v2) to `FILE`; - writes it to standard output, and CMD's standard output then goes to standard error; under mpirun or srun, DIR/ writes one file per rank")
	plotPath := fset.String("plot", "", "draw the point under the roofs to `FILE` (.png, .svg or .pdf)")
	label := fset.String("label", "", "`NAME` of the point (default: CMD's base name)")
	lockDir := fset.String("lock-dir", cluster.DefaultLockDir(), "node-local `DIR` of the parallel job's traffic-owner election's lock files, private to the job's user: created with mode 0700, refused when another user owns it, others may enter it or it is a link; the default is $RPROF_LOCK_DIR, else the runtime directory ($XDG_RUNTIME_DIR/rprof, /run/rprof for root, else rprof-UID in the temporary directory)")
	jobName := fset.String("job", "", "the parallel job's `NAME` in the rank files (default: the launcher's job id; give one for MPICH across nodes)")
	onGPU := fset.Bool("gpu", false, "record CMD's GPU kernels with CUPTI instead (see GPU kernels above); only --json, --roofs and --lock-timeout apply with it")
	if err := parseFlags(fset, args); err != nil {
		return err
	}
	set := map[string]bool{}
	fset.Visit(func(f *flag.Flag) { set[f.Name] = true })

	cfg := measure.Config{
		Target:     measure.Target{Command: fset.Args(), Stdin: e.stdin, Stdout: e.stdout, Stderr: e.stderr, Label: *label},
		Counting:   measure.Counting{Host: e.machine()},
		Repetition: measure.Repetition{Confidence: *confidence},
	}
	if len(cfg.Target.Command) == 0 {
		return usagef("empty command: give the program to measure after the flags")
	}
	if l := cluster.LauncherIn(cfg.Target.Command); l != "" {
		return &exitError{code: exitUsage, err: fmt.Errorf("%s starts the ranks, not rprof, so rprof would count the launcher alone: put rprof after it (%s [OPTIONS] rprof run --json DIR/ -- CMD), then rprof merge DIR/*.json", l, l)}
	}
	if *onGPU {
		return runGPU(ctx, e, fset, cfg.Target, *jsonPath, mf.roofs, mf.lockTimeout)
	}
	id, isRank, err := cluster.Local(*jobName)
	if err != nil {
		return &exitError{code: exitInternal, err: fmt.Errorf("parallel job: %w", err)}
	}
	setRepetition(&cfg, set, *repeat, ci.V, mf)
	if err := mf.apply(&cfg, fset); err != nil {
		return err
	}
	// Refused before any output is opened or roofs read, as Run would.
	if err := cfg.Validate(); err != nil {
		return measureFailure(err, "")
	}
	if *jsonPath, err = runOutputs(&cfg, e, *jsonPath, *plotPath, mf.roofs, id, isRank); err != nil {
		return err
	}
	roofs, err := docfile.LoadRoofs(mf.roofs)
	if err != nil {
		return &exitError{code: exitUsage, err: err}
	}
	cfg.Placement.Roofs, cfg.Placement.RoofsPath = roofs.Roofs, roofs.Path

	req, notes := machineRequest(e, "run", lock.Shared, mf.lockTimeout)
	p, err := cluster.Measure(ctx, cfg, cluster.Run{Identity: id, Rank: isRank, LockDir: *lockDir, Machine: req, Notes: notes,
		Bystander: func(err error) { fmt.Fprintln(e.stderr, advice.Bystander(err, id)) },
		Measure:   e.measure, Roofs: roofs.Roofs, Version: rprofVersion()})
	var ee *cluster.ElectionError
	var me *cluster.MachineError
	switch {
	case errors.As(err, &ee):
		return &exitError{code: exitInternal, err: ee.Err}
	case errors.As(err, &me):
		return machineFailure(me.Err)
	case err != nil:
		return runFailure(e, err, cfg.Target.Command, args[:len(args)-len(fset.Args())], fset)
	}
	switch {
	case isRank && id.Size > 1:
		// Many ranks print at once: one line each.
		render.WriteRankSummary(e.stderr, p)
		if *jsonPath == "" && id.Rank == 0 {
			fmt.Fprintln(e.stderr, "rprof run: note: without --json DIR/ the ranks' points are not kept, and 'rprof merge' has nothing to make the job's point from")
		}
	default:
		render.WriteRunSummary(e.stderr, p, scopeWhy(p))
	}
	render.WriteRegions(e.stderr, p)
	return finishRun(ctx, e, cfg, p, *jsonPath, *plotPath, roofs.Roofs)
}

// runOutputs checks run's outputs before anything runs and returns the
// point's path: under a launcher, a directory takes one file per rank.
// With --json -, standard output is the document's alone (run --json - |
// jq): the target's goes to standard error.
func runOutputs(cfg *measure.Config, e *env, jsonPath, plotPath, roofsFlag string, id cluster.Identity, isRank bool) (string, error) {
	if plotPath != "" {
		if _, err := chart.FormatOf(plotPath); err != nil {
			return "", usagef("--plot %v", err)
		}
	}
	if st, err := os.Stat(jsonPath); isRank && jsonPath != "" && (strings.HasSuffix(jsonPath, "/") || err == nil && st.IsDir()) {
		jsonPath = cluster.RankFile(jsonPath, id)
	}
	cfg.Target.Stdout = targetStdout(e, jsonPath)
	return jsonPath, checkOutputs([]string{jsonPath, plotPath}, docfile.RoofsInput(roofsFlag))
}

// setRepetition applies --repeat and --ci (with --max-repeat,
// --max-time); measure refuses the two together.
func setRepetition(cfg *measure.Config, set map[string]bool, repeat int, ci float64, mf measureFlags) {
	if set["ci"] {
		cfg.Repetition.CI, cfg.Repetition.MaxRepeat, cfg.Repetition.MaxTime = ci, mf.maxRepeat, mf.maxTime
	}
	if set["repeat"] || !set["ci"] {
		cfg.Repetition.Repeat = repeat
	}
}

// finishRun says when --ci was not reached, writes the point and the
// chart asked for, and exits with the target's status.
func finishRun(ctx context.Context, e *env, cfg measure.Config, p *roofline.Point, jsonPath, plotPath string, roofs *roofline.Roofs) error {
	if cfg.Repetition.CI > 0 && p.Seconds > 0 {
		if h := (p.CI.Seconds.Hi - p.CI.Seconds.Lo) / 2; !(h <= cfg.Repetition.CI*p.Seconds) {
			fmt.Fprintf(e.stderr, "rprof run: note: the time's interval (±%s) did not narrow to ±%s within %d runs or %v (--max-repeat, --max-time)\n\n",
				unit.Percent(h/p.Seconds), unit.Relative(cfg.Repetition.CI), cfg.Repetition.MaxRepeat, cfg.Repetition.MaxTime)
		}
	}
	if jsonPath != "" {
		if err := docfile.Write(ctx, jsonPath, e.stdout, p); err != nil {
			return writeFailure(err)
		}
	}
	if plotPath != "" {
		notes, err := chart.Write(ctx, plotPath, roofs, append([]roofline.Point{*p}, p.RegionPoints()...), chart.Options{Threads: p.Threads})
		if err != nil {
			return writeFailure(fmt.Errorf("plot: %w", err))
		}
		for _, n := range notes {
			fmt.Fprintf(e.stderr, "rprof run: plot: %s\n", n)
		}
	}
	if ctx.Err() != nil {
		// The repetitions that ended are kept, flagged; the status says
		// the run did not finish, whatever the target's.
		written := ""
		if jsonPath != "" || plotPath != "" {
			written = "; their point was written, flagged " + roofline.FlagInterrupted
		}
		return &exitError{code: exitInterrupted, err: fmt.Errorf("interrupted after %d repetition(s)%s", len(p.Samples.Seconds), written)}
	}
	if p.Exit.Code != 0 {
		return &exitError{code: p.Exit.Code}
	}
	return nil
}

// runFailure turns Run's errors into exit statuses by measureFailure; a
// refusal for want of counters also prints the doctor's diagnosis and the
// ways to measure target anyway, with the flags given (flags, parsed by
// fset) but those that choose how to count.
func runFailure(e *env, err error, target, flags []string, fset *flag.FlagSet) error {
	var nc *measure.NoCountersError
	if errors.As(err, &nc) {
		fmt.Fprintf(e.stderr, "rprof run: %v\n\n", err)
		render.WriteRunDiagnosis(e.stderr, nc.Diagnosis, advice.Problem)
		qerr := measure.CheckQEMU(context.Background())
		keep := flagval.Without(flags, fset, "count", "e", "work", "traffic")
		render.WriteWays(e.stderr, advice.WaysForward(target, keep, "", "", qerr))
		return &exitError{code: exitInternal}
	}
	return measureFailure(err, "")
}

// measureFailure turns measure.Run's errors into exit statuses (run and
// gate): bad input 2, a target not found 127 or not executable 126, an
// interruption 130, anything else rprof could not do 125. prefix, when
// set, starts the message of the failures that are not bad input.
func measureFailure(err error, prefix string) error {
	var ex *measure.ExclusionError
	if errors.As(err, &ex) {
		return usagef("%s", advice.Exclusion(ex))
	}
	var be *badfield.Error
	if errors.As(err, &be) {
		return usagef("%s", advice.Invalid(be))
	}
	if errors.Is(err, measure.ErrInvalidConfig) {
		return usagef("%v", err)
	}
	if prefix != "" {
		err = fmt.Errorf("%s: %w", prefix, err)
	}
	var oe *measure.OverheadError
	var ke *measure.EmulationKilledError
	switch {
	case errors.As(err, &ke):
		return &exitError{code: ke.ExitCode, err: err}
	case errors.As(err, &oe):
		// Not the target: the overhead command's own failure.
		return &exitError{code: exitInternal, err: err}
	case errors.Is(err, measure.ErrNotFound):
		return &exitError{code: exitNotFound, err: err}
	case errors.Is(err, measure.ErrNotExecutable):
		return &exitError{code: exitNoExec, err: err}
	case errors.Is(err, context.Canceled):
		return &exitError{code: exitInterrupted, err: err}
	}
	return &exitError{code: exitInternal, err: err}
}
