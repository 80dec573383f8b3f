package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/rprof/rprof/cmd/rprof/internal/flagval"
	"github.com/rprof/rprof/cmd/rprof/internal/render"
	"github.com/rprof/rprof/dnn"
	"github.com/rprof/rprof/dnnbench"
	"github.com/rprof/rprof/internal/docfile"
	"github.com/rprof/rprof/internal/stats"
	"github.com/rprof/rprof/measure"
	"github.com/rprof/rprof/roofline"
)

// cmdDNNBench is 'rprof dnn bench', a subcommand with help of its own.
var cmdDNNBench = &command{
	Name:      "dnn bench",
	UsageLine: "rprof dnn bench [flags] [EXPERIMENT|PROBLEM...]",
	Long:      fmt.Sprintf(dnnBenchLong, strings.Join(dnnbench.Libraries, ", "), experimentList()),
}

const dnnBenchLong = `
With no EXPERIMENT or PROBLEM, bench lists the experiments.

Bench runs oneDNN primitives itself, through the library's C API (oneDNN
2.x or 3.x, told by dnnl_version(); other versions are refused), and
places each on the roofline: the time of one execution (median of the
repetitions, with its interval), the analytic W and compulsory Q of the
problem, GFLOP/s, the share of the measured fp32 peak and the fraction of
the binding roof. Weights are in the layout the library chooses, and Q
counts them in it, padding included; activations are in the layout asked
for. The library loaded is --library's, else the first of these that
loads: %s.

EXPERIMENT is one of seed 004's experiments ('all' runs every one):
%s
PROBLEM is a oneDNN verbose problem descriptor, so a shape seen in a trace
('rprof dnn') can be replayed:
mb1_ic64oc64_ih56oh56kh3sh1dh0ph1_iw56ow56kw3sw1dw0pw1 (convolution),
mb128ic1024oc1024 (inner product), 128x1024:1024x1024 (matmul),
mb8ic64_ih112oh56kh3sh2dh0ph1_iw112ow56kw3sw2dw0pw1 (pooling),
64x3x227x227 (eltwise). The kind is told from the descriptor unless --kind
is given.
`

func runDNNBench(ctx context.Context, e *env, args []string) error {
	fset := newFlagSet(e, "dnn bench")
	kind := fset.String("kind", "", "the primitive `KIND` of the problems: convolution, inner_product, matmul, pooling or eltwise (default: told from the descriptor)")
	alg := fset.String("alg", "", "the algorithm `ALG`: for pooling max (the default), avg_include_padding or avg_exclude_padding; for eltwise gelu_erf (the default) or gelu_tanh")
	layout := fset.String("layout", "", "`LAYOUT` of the activations of 4D problems: nchw, nhwc, nChw16c (the default) or nChw8c")
	threads := fset.Int("threads", 0, "the library's threads, `N` (OpenMP runtime; default: its own), bound one to each of the first N CPUs the process may run on (OMP_PROC_BIND=close, OMP_PLACES), unless OMP_PROC_BIND, OMP_PLACES or GOMP_CPU_AFFINITY is set; the header says which")
	cold := fset.Bool("cold", false, "evict the caches (write --flush bytes) before every timed execution; without it, warm: executions back to back")
	flushBytes := new(int64)
	*flushBytes = 256 << 20
	fset.Var(flagval.Size{N: flushBytes}, "flush", "the `SIZE` written to evict the caches with --cold (256M, 2G or bytes; at least 1M)")
	ci := flagval.CI{Ratio: flagval.Ratio{V: 0.02}}
	fset.Var(&ci, "ci", "repeat until the interval of the time is within `PCT` of it (2% or 0.02 alike), at most --max-time per problem and --max-repeat samples")
	var maxTime time.Duration
	flagval.DurationVar(fset, &maxTime, "max-time", 3*time.Second, "time budget `D` per problem")
	maxRepeat := fset.Int("max-repeat", 200, "at most `N` samples per problem")
	repeat := fset.Int("repeat", 0, "exactly `N` samples instead of repeating by --ci")
	confidence := fset.Float64("confidence", measure.DefaultConfidence, "`LEVEL` of the intervals")
	noExec := fset.Bool("no-exec", false, "the overhead run: everything but the executions (load, create, allocate, fill), for rprof run --overhead")
	library := fset.String("library", "", "the oneDNN library `LIB` to load, a soname or a path")
	roofsPath := fset.String("roofs", "", "roofs document `FILE` (default: the one 'rprof roofs' wrote, if any)")
	jsonPath := fset.String("json", "", "write the results to `FILE` as a point set (rprof.points/v1)")
	if err := parseFlags(fset, args); err != nil {
		return err
	}
	if fset.NArg() == 0 {
		fmt.Fprintf(e.stdout, "rprof dnn bench EXPERIMENT|PROBLEM...: the experiments ('all' runs every one; 'rprof dnn bench -h' for problems and flags):\n%s", experimentList())
		return nil
	}
	switch {
	case *threads < 0 || *repeat < 0 || *maxRepeat < 1:
		return usagef("bench: --threads, --repeat and --max-repeat must be positive")
	case !(*confidence > 0 && *confidence < 1):
		return usagef("bench: --confidence must be in (0, 1)")
	case *cold && *flushBytes < 1<<20:
		return usagef("bench: --flush %s: at least 1M", flagval.Size{N: flushBytes})
	}
	problems, err := dnnbench.ResolveAll(fset.Args(), *kind, *alg, *layout)
	if err != nil {
		msg := err.Error()
		if errors.Is(err, dnnbench.ErrNoKind) {
			msg += "; give --kind"
		}
		return usagef("bench: %s (not an experiment either; see 'rprof dnn bench -h')", msg)
	}
	if err := checkOutputs([]string{*jsonPath}, docfile.RoofsInput(*roofsPath)); err != nil {
		return err
	}
	rd, err := docfile.LoadRoofs(*roofsPath)
	if err != nil {
		return &exitError{code: exitUsage, err: err}
	}
	roofs, roofsFile := rd.Roofs, rd.Path

	bind := dnnbench.Bind(*threads)
	lib, err := openDNN(*library)
	if err != nil {
		return &exitError{code: exitInternal, err: dnnLibraryAdvice(err)}
	}
	defer lib.Close()

	rule := stats.StopRule{MaxTime: maxTime, MaxCount: *maxRepeat, Confidence: *confidence, RelError: ci.V, MinCount: 5, Method: dnnbench.Method}
	if *repeat > 0 {
		rule = stats.Fixed(*repeat, *confidence, dnnbench.Method)
	}
	opts := dnnbench.Options{Threads: *threads, Cold: *cold, FlushBytes: *flushBytes, WarmUp: 3, Rule: rule, NoExec: *noExec}
	results, err := lib.RunAll(ctx, problems, opts)
	switch {
	case ctx.Err() != nil:
		fmt.Fprintln(e.stderr, "rprof dnn bench: interrupted: no table or point set written")
		return &exitError{code: exitInterrupted}
	case err != nil:
		return &exitError{code: exitInternal, err: err}
	}
	v := lib.Version()
	if *noExec {
		fmt.Fprintf(e.stderr, "rprof dnn bench: overhead run (oneDNN %s, threads %s): %d problems created, allocated and filled, none executed\n", v, bind.Describe(v), len(results))
		for _, r := range results {
			fmt.Fprintf(e.stderr, "  %-12s setup %s  %s\n", r.Implementation, r.Setup.Round(time.Microsecond), r.Problem)
		}
		return nil
	}
	points := benchPoints(results, roofs, roofsFile, *confidence, e.machine().Describe())
	render.WriteBenchTable(e.stderr, v, bind, results, points, roofs)
	if *jsonPath != "" {
		if err := docfile.Write(ctx, *jsonPath, e.stdout, roofline.PointSet{Schema: roofline.PointSetSchema, Points: points}); err != nil {
			return writeFailure(err)
		}
	}
	return nil
}

// dnnLibraryAdvice adds the package to install to a library that would
// not load.
func dnnLibraryAdvice(err error) error {
	if errors.Is(err, dnnbench.ErrNoLibrary) {
		return fmt.Errorf("%w; fix: apt-get install %s", err, dnnbench.Package)
	}
	return err
}

// openDNN loads the library named, or the first default one found.
func openDNN(name string) (*dnnbench.Library, error) {
	if name != "" {
		return dnnbench.OpenFile(name)
	}
	return dnnbench.Open()
}

func experimentList() string {
	var b strings.Builder
	for _, x := range dnnbench.Experiments {
		fmt.Fprintf(&b, "  %-18s %s\n", x.Name, x.Summary)
	}
	return b.String()
}

// benchPoints makes each result a labelled point (dnnbench.Points).
func benchPoints(results []dnnbench.Result, roofs *roofline.Roofs, roofsFile string, confidence float64, here roofline.Machine) []roofline.Point {
	return dnnbench.Points(results, dnn.PointOptions{
		Command: []string{"rprof", "dnn", "bench"}, Created: time.Now().UTC(), Confidence: confidence,
		Roofs: roofs, RoofsFile: roofsFile, Machine: here,
	})
}
