package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rprof/rprof/cmd/rprof/internal/advice"
	"github.com/rprof/rprof/cmd/rprof/internal/flagval"
	"github.com/rprof/rprof/cmd/rprof/internal/render"
	"github.com/rprof/rprof/dnn"
	"github.com/rprof/rprof/dnnrun"
	"github.com/rprof/rprof/internal/badfield"
	"github.com/rprof/rprof/internal/docfile"
	"github.com/rprof/rprof/internal/lock"
	"github.com/rprof/rprof/measure"
	"github.com/rprof/rprof/roofline"
)

var cmdDNN = &command{
	Name:      "dnn",
	UsageLine: "rprof dnn [flags] [--] CMD [ARG...]\n       rprof dnn bench [flags] [EXPERIMENT|PROBLEM...]",
	Short:     "place oneDNN primitives on the roofline",
	Long: `
Dnn runs CMD, any program that uses oneDNN (a C or C++ program, PyTorch,
TensorFlow, OpenVINO), with oneDNN's verbose trace on (ONEDNN_VERBOSE=1,
DNNL_VERBOSE=1), and places each primitive it executed on the roofline.

CMD's stdout passes through byte for byte (to stderr with --json -, whose
stdout is the point set's alone); only the lines oneDNN prints there
(onednn_verbose,... and dnnl_verbose,...) are taken out. Executions
are grouped by kind, implementation, propagation kind, tensors (layouts and
data types), attributes, algorithm and problem. For each group the table on
stderr gives the calls, the mean time per call with its interval (oneDNN's
own wall time of each call), the analytic work W and compulsory traffic Q of
one call (W from the problem descriptor, an FMA counted as two; Q every
tensor read or written once, at its data type, with blocked layouts'
padding), GFLOP/s, GB/s, the binding roof and the fraction of it reached
(a primitive without work, such as a reorder, under the DRAM roof by its
GB/s). Groups are sorted by total time. Formulas with estimated constants (GELU,
normalisations, softmax), padded layouts and kinds without a formula (time
only) are flagged in numbered footnotes; docs/dnn.md has the formulas.

oneDNN versions 1.x to 3.x are read (three line grammars). A program that
prints no verbose line gets the reason.

--count counts every dnnl_primitive_execute call, joins each to its
execution line and puts the counts beside the analytic W and Q in a second
table, flagging gaps (counted-gap: W off by more than 1.25x either way, Q
over 2x the compulsory):

  pmu      uprobes time every call and read per-CPU counters at its entry
           and return (root, or CAP_BPF and CAP_PERFMON): probed calls and
           time, W counted per call (FP-work counters: needs a hardware
           PMU; otherwise the note says why W is missing), the -e events.
           Q per call is not counted. With OpenMP threads (nthr above 1) a
           call's counts are the calling thread's share only: run with
           OMP_NUM_THREADS=1, and under chrt -f 10 on a busy machine.
           It waits for other measurements as --lock-timeout says
  emulate  CMD runs natively for the time, then once more under QEMU
           (qemu-user) with rprof's plugin: W of each call exact (all
           threads), Q from a cache model, medians per call. QEMU emulates
           up to AVX2, so oneDNN may run other implementations or block
           sizes there: groups are paired by problem and the counted
           implementation is named (counted-other-implementation); no
           pair, no counts (not-counted). The emulated run's own output is
           not shown. --cache-model, --emulate-cpu and --qemu are as for
           'rprof run'

Exit status: CMD's own (128+N when signal N killed it); 2 bad command line;
125 no oneDNN execution to report or an output could not be written; 126
CMD not executable; 127 CMD not found; 130 interrupted (nothing written).

'rprof dnn bench' runs oneDNN primitives itself; see 'rprof help dnn bench'.
`,
	Run: runDNN,
}

func runDNN(ctx context.Context, e *env, args []string) error {
	if len(args) > 0 && args[0] == "bench" {
		return runDNNBench(ctx, e, args[1:])
	}
	o, err := parseDNNFlags(e, args)
	if err != nil {
		return err
	}
	if err := checkOutputs([]string{o.json}, docfile.RoofsInput(o.roofs)); err != nil {
		return err
	}
	roofs, err := docfile.LoadRoofs(o.roofs)
	if err != nil {
		return &exitError{code: exitUsage, err: err}
	}
	if o.count == dnnrun.CountPMU {
		release, err := holdMachine(ctx, e, "dnn", lock.Shared, o.lockTimeout)
		if err != nil {
			return err
		}
		defer release()
	}
	opts := o.options()
	opts.Stdin, opts.Stdout, opts.Stderr = e.stdin, targetStdout(e, o.json), e.stderr
	opts.Roofs, opts.RoofsPath = roofs.Roofs, roofs.Path
	opts.Machine, opts.Host, opts.Measure = e.machine().Describe(), e.machine(), e.measure
	opts.Counting = func(emulator string) {
		fmt.Fprintf(e.stderr, "rprof dnn: counting %s calls under %s (slower than native) ...\n", dnnrun.Execute, emulator)
	}
	r, err := dnnrun.Run(ctx, opts)
	if err != nil {
		return dnnFailure(e, err)
	}
	if r.StdoutErr != nil && ctx.Err() == nil {
		fmt.Fprintf(e.stderr, "rprof dnn: passing the program's stdout on: %v\n", r.StdoutErr)
	}
	if ctx.Err() != nil {
		fmt.Fprintln(e.stderr, "rprof dnn: interrupted: no table or point set written")
		return &exitError{code: exitInterrupted}
	}
	if len(r.Groups) == 0 {
		return noExecutions(e, r.Trace, r.ExitCode)
	}
	render.WriteDNNTable(e.stderr, o.command, r.Trace, r.Groups, r.Points, o.top)
	if r.Probed != nil {
		render.WriteDNNProbed(e.stderr, r.Probed, r.Groups, r.Points, o.top)
	}
	if r.Emulated != nil {
		render.WriteDNNEmulated(e.stderr, r.Emulated, r.Groups, o.top)
	}
	if o.json != "" {
		set := roofline.PointSet{Schema: roofline.PointSetSchema, Points: r.Points}
		if err := docfile.Write(ctx, o.json, e.stdout, set); err != nil {
			return writeFailure(err)
		}
	}
	if r.ExitCode != 0 {
		return &exitError{code: r.ExitCode}
	}
	return nil
}

// dnnFailure turns dnnrun.Run's errors into exit statuses, as run's are
// (measureFailure), after what an emulated run that failed printed.
func dnnFailure(e *env, err error) error {
	var ee *dnnrun.EmulatedRunError
	if errors.As(err, &ee) {
		e.stderr.Write(ee.Stderr)
	}
	return measureFailure(err, "")
}

// dnnOptions are rprof dnn's flags and command.
type dnnOptions struct {
	json, roofs, count, library string
	threads, top                int
	confidence                  float64
	events                      flagval.Events
	command                     []string
	lockTimeout                 time.Duration
	emulate                     emulateFlags
	emulation                   measure.EmulatorOptions
}

func parseDNNFlags(e *env, args []string) (dnnOptions, error) {
	var o dnnOptions
	fset := newFlagSet(e, "dnn")
	fset.StringVar(&o.json, "json", "", "write the groups as a point set (schema rprof.points/v1) to `FILE`, one labelled point each, for plot, report, compare, gate")
	fset.StringVar(&o.roofs, "roofs", "", "roofs document `FILE` to place the points under (default: the one 'rprof roofs' wrote, if any)")
	fset.IntVar(&o.threads, "threads", 0, "thread scope of the roofs, `N` threads (default: the largest measured scope not above the library's thread count)")
	fset.Float64Var(&o.confidence, "confidence", measure.DefaultConfidence, "`LEVEL` of the time intervals")
	fset.IntVar(&o.top, "top", 0, "print only the `N` groups of longest total time (the JSON keeps all)")
	fset.StringVar(&o.count, "count", "", "count every call's W and Q by `MODE`, pmu or emulate (above), beside the analytic ones")
	fset.Var(&o.events, "e", "with --count pmu, count `EVENT` per call too (perf syntax; repeatable)")
	fset.StringVar(&o.library, "library", "libdnnl.so", "with --count, the `FILE` holding dnnl_primitive_execute, found as the loader would")
	lockTimeoutVar(fset, &o.lockTimeout)
	o.emulate.register(fset)
	if err := parseFlags(fset, args); err != nil {
		return o, err
	}
	if err := o.emulate.apply(&o.emulation, o.count, fset); err != nil {
		return o, err
	}
	o.command = fset.Args()
	// Refused before any output is opened, as dnnrun.Run would.
	var be *badfield.Error
	if err := o.options().Validate(); errors.As(err, &be) {
		return o, usagef("%s", advice.Invalid(be))
	}
	if o.top < 0 {
		return o, usagef("--top %d: must not be negative", o.top)
	}
	return o, nil
}

// options are dnnrun's options of the flags and command; runDNN adds the
// streams, the roofs and the machine.
func (o dnnOptions) options() dnnrun.Options {
	return dnnrun.Options{Command: o.command, Count: o.count, Events: o.events, Library: o.library,
		Emulation: o.emulation, Threads: o.threads, Confidence: o.confidence}
}

// noExecutions says why the trace holds nothing to report.
func noExecutions(e *env, tr *dnn.Trace, code int) error {
	why := tr.Why()
	if why == "" {
		why = "the trace holds primitive creations but no executions"
	}
	fmt.Fprintf(e.stderr, "rprof dnn: no oneDNN primitive executions to report: %s\n", why)
	if code != 0 {
		return &exitError{code: code}
	}
	return &exitError{code: exitInternal}
}
