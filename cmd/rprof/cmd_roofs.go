package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rprof/rprof/cluster"
	"github.com/rprof/rprof/cmd/rprof/internal/advice"
	"github.com/rprof/rprof/cmd/rprof/internal/flagval"
	"github.com/rprof/rprof/cmd/rprof/internal/render"
	"github.com/rprof/rprof/dnnbench"
	"github.com/rprof/rprof/gpu"
	"github.com/rprof/rprof/internal/badfield"
	"github.com/rprof/rprof/internal/docfile"
	"github.com/rprof/rprof/internal/lock"
	"github.com/rprof/rprof/internal/stats"
	"github.com/rprof/rprof/internal/unit"
	"github.com/rprof/rprof/machine"
	"github.com/rprof/rprof/roofs"
)

var cmdRoofs = &command{
	Name:      "roofs",
	UsageLine: "rprof roofs [-o FILE] [--threads LIST] [--quick | --fixed N] [flags]",
	Short:     "measure compute and bandwidth roofs",
	Long: `
Roofs measures this machine's ceilings: peak FLOP/s of FMA and mul+add
kernels for each ISA and precision, and the bandwidth of L1, L2, L3 and
DRAM from a working-set sweep, for each thread scope (1 thread, the cores
of one socket, all cores), and DGEMM through the vendor BLAS on the widest
scope. The sweep grows until DRAM's plateau is established, never placing
more than a quarter of MemAvailable; where the host's declared cache sizes
and the sweep's edges disagree, the measured edges win (the document keeps
both). Parameters are autotuned, and every evaluation stops as soon as it
may: at its time or count budget, once the half-width of its ` + unit.RoundPercent(roofs.Confidence) + `
interval is within 1% of the estimate, or once the interval lies below
the best configuration so far. Compute and DGEMM invocations run in fresh
worker processes. Each bandwidth roof, and each FMA roof far below its
scope's others as a share of theoretical peak, is measured again at the
end of the run (a one-thread bandwidth roof on another core where there
is one) and the higher figure kept; a disagreement over 10% is flagged
(bandwidth-moved, compute-moved), and so is a multi-thread cache roof one
of whose threads took 1.3 times as long over its share as another
(uneven-threads: a core ran slow). With --dnn, oneDNN primitives'
ceilings are measured too, as library roofs (docs/dnn.md). See
docs/roofs.md.

The table goes to stderr; the roofs document (docs/schema-roofs.md) is
written to -o, by default where 'rprof run' looks for it. Its directory
must exist (only the default cache directory is created).

Measurements at once spoil each other's figures: roofs waits for any
'rprof run' or other roofs of the same user to finish, and they wait for
it, saying whom they wait for, up to --lock-timeout (a lock in the user's
private runtime directory: $XDG_RUNTIME_DIR/rprof, /run/rprof for root,
else rprof-UID in the temporary directory). Ctrl-C stops every part
within a second.

Under srun or mpirun (srun -N 4 --ntasks-per-node=1 rprof roofs -o DIR/),
local rank 0 of each node measures it and writes DIR/roofs-NODE.json;
'rprof merge -o OUT/ DIR/roofs-*.json' then writes one document per node
type and the job's roofs (docs/cluster.md).

With --gpu, roofs measures an NVIDIA GPU instead, through its driver
(libcuda.so.1; no CUDA toolkit needed): FMA roofs in fp64, fp32 and fp16,
DRAM, L2 and L1 roofs, and an ERT-style FLOPs-per-byte ladder, each beside
the clocks it was measured at and its theoretical peak (docs/gpu.md). The
GPU's roofs are added to the document at -o when it holds this machine's
CPU roofs (replacing the same device's), else written as a new document.
Only -o, --device, --quick, --fixed, --method and --lock-timeout apply
with it. Without a driver or a GPU it says so in one line (exit 125).

`,
	Run: runRoofs,
}

func runRoofs(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "roofs")
	out := fs.String("o", "", "write the roofs document to `FILE` (default: the user cache dir, where 'rprof run' looks)")
	threads := fs.String("threads", "", "thread counts to measure, a `LIST` such as 1,2 (default: 1, one socket, all cores)")
	quick := fs.Bool("quick", false, "a fast, reduced roof set (seconds)")
	fixed := fs.Int("fixed", 0, "no early stopping: `N` iterations per invocation for every configuration (the fixed-sample baseline)")
	method := fs.String("method", string(stats.DefaultMethod), "the estimate `METHOD` of each evaluation: median, mean or bootstrap")
	lockTimeout := new(time.Duration)
	lockTimeoutVar(fs, lockTimeout)
	order := fs.String("order", "", "search `ORDER`, forward or reverse (default: compute forward, DGEMM shapes largest first)")
	invocations := fs.Int("invocations", 0, "outer-loop invocations per configuration, `N` (default 3, 1 with --quick)")
	blas := fs.String("blas", "", "the BLAS library `PATH` for DGEMM (default: search the usual places for OpenBLAS, MKL, BLIS)")
	blasArch := fs.String("blas-arch", "", "the kernel set `NAME` the BLAS must use: sets OPENBLAS_CORETYPE and BLIS_ARCH_TYPE for the workers (e.g. SkylakeX for OpenBLAS, skx or zen4 for BLIS)")
	space := fs.String("dgemm-space", "", "the DGEMM search `SPACE`: quick, default (then a climb past its edge) or seed (seed 000's 96 shapes)")
	var dgemmBudget *time.Duration
	flagval.OptionalDurationVar(fs, &dgemmBudget, "dgemm-budget", "wall time `D` the DGEMM search may take (default 25s; none with --fixed or --dgemm-space seed); 0 for no limit. Once spent, no further shape is started; the document says what was left out (dgemm-budget)")
	noDGEMM := fs.Bool("no-dgemm", false, "skip DGEMM")
	dnnList := fs.String("dnn", "", "also measure oneDNN library ceilings, one per problem and thread scope, a comma-separated `LIST` of seed 004 experiments (conv3x3-nChw16c, ip, ...; 'rprof dnn bench -h' lists them) or verbose problem descriptors. Opt-in, after the rest; each is a compute roof of kind library named after the implementation oneDNN chose (docs/dnn.md)")
	inProcess := fs.Bool("in-process", false, "run invocations in this process (no worker processes)")
	maxMemory := fs.String("max-memory", "", "the most a bandwidth sweep places, a `SIZE` such as 256M (default and upper bound: a quarter of MemAvailable); a sweep that cannot reach DRAM within it says so (dram-not-reached)")
	onGPU := fs.Bool("gpu", false, "measure the GPU's roofs (above), not the CPU's")
	device := fs.Int("device", 0, "with --gpu: the GPU, by the driver's index `N`")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := checkGPUFlags(fs, *onGPU); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	o := roofs.Options{Quick: *quick, Fixed: *fixed, Invocations: *invocations, BLAS: *blas, NoDGEMM: *noDGEMM,
		DGEMMSpace: *space, DGEMMBudget: dgemmBudget, Method: stats.Method(*method), DNN: splitList(*dnnList),
		Host: e.machine()}
	var err error
	if o.Threads, err = parseThreads(*threads); err != nil {
		return err
	}
	if *maxMemory != "" {
		if o.MaxMemory, err = machine.ParseSize(*maxMemory); err != nil || o.MaxMemory == 0 {
			return usagef("--max-memory %q: want a size of 1M or more, such as 256M or 2G", *maxMemory)
		}
	}
	if o.Order, err = stats.ParseOrder(*order); err != nil {
		return usagef("--order: %v", err)
	}
	if o.Invoker, err = roofsInvoker(*inProcess, *blasArch); err != nil {
		return err
	}
	var be *badfield.Error
	if err := o.Validate(); errors.As(err, &be) {
		return usagef("%s", advice.Invalid(be))
	} else if err != nil {
		return err
	}
	if err := checkDNNLoads(o.DNN); err != nil {
		return err
	}
	path, skip, err := roofsOutput(e, *out)
	if err != nil || skip {
		return err
	}
	if *onGPU {
		return gpuRoofs(ctx, e, path, gpu.Options{Device: *device, Quick: o.Quick, Fixed: o.Fixed, Method: o.Method}, *lockTimeout)
	}
	release, err := holdMachine(ctx, e, "roofs", lock.Exclusive, *lockTimeout)
	if err != nil {
		return err
	}
	defer release()
	p := render.NewProgress(e.stderr, isTerminal(e.stderr))
	o.Progress = p.Show
	// Every part stops within a second of an interrupt; say so at once.
	defer context.AfterFunc(ctx, func() {
		p.Say("rprof roofs: interrupted: stopping")
	})()
	measureRoofs := e.roofs
	if measureRoofs == nil {
		measureRoofs = roofs.Measure
	}
	rep, err := measureRoofs(ctx, o)
	p.Clear()
	switch {
	case ctx.Err() != nil:
		return &exitError{code: exitInterrupted, err: errors.New("interrupted; no roofs document written")}
	case errors.Is(err, roofs.ErrThreads):
		return usagef("--threads: %v", err)
	case err != nil:
		return err
	}
	advice.Roofs(rep)
	render.WriteRoofsTable(e.stderr, rep)
	if err := docfile.Write(ctx, path, e.stdout, rep.Roofs); err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "wrote %s\n", path)
	return nil
}

// roofsOutput is the document roofs writes: -o, or the default in the
// user's cache directory (created), or under a parallel launcher
// DIR/roofs-NODE.json; checked writable before anything is measured. skip
// is true on a rank that leaves the node's measurement to local rank 0.
func roofsOutput(e *env, out string) (path string, skip bool, err error) {
	path = out
	id, isRank, err := cluster.Local("")
	if err != nil {
		return "", false, &exitError{code: exitInternal, err: fmt.Errorf("parallel job: %w", err)}
	}
	if isRank {
		// One measurement per node: more would contend for its cores.
		if id.LocalRank != 0 {
			fmt.Fprintf(e.stderr, "rprof roofs: rank %d on %s: local rank 0 measures this node's roofs\n", id.Rank, id.Node)
			return "", true, nil
		}
		if st, err := os.Stat(path); path == "" || err != nil || !st.IsDir() {
			return "", false, usagef("under %s, -o must be a directory: each node writes DIR/roofs-NODE.json, and 'rprof merge DIR/roofs-*.json' makes one document per node type and the job's", id.Launcher)
		}
		path = cluster.NodeRoofsFile(path, id)
	}
	if path == "" {
		if path, err = docfile.MakeDefaultRoofsPath(); err != nil {
			return "", false, err
		}
	}
	// Fail before a minute of measuring, not after.
	return path, false, checkOutputs([]string{path})
}

// splitList is a comma-separated list's items, trimmed; nil for "".
func splitList(list string) []string {
	if list == "" {
		return nil
	}
	var out []string
	for _, s := range strings.Split(list, ",") {
		out = append(out, strings.TrimSpace(s))
	}
	return out
}

// checkDNNLoads checks that oneDNN loads when its ceilings are asked for,
// before anything is measured.
func checkDNNLoads(problems []string) error {
	if len(problems) == 0 {
		return nil
	}
	lib, err := dnnbench.Open()
	if err != nil {
		return &exitError{code: exitInternal, err: fmt.Errorf("--dnn: %w", dnnLibraryAdvice(err))}
	}
	lib.Close()
	return nil
}

// roofsInvoker runs the invocations in this process, or in fresh worker
// processes of this executable (with the BLAS kernel set of --blas-arch).
func roofsInvoker(inProcess bool, blasArch string) (roofs.Invoker, error) {
	if inProcess {
		if blasArch != "" {
			return nil, usagef("--blas-arch needs worker processes (the variable is read when the library loads); drop --in-process")
		}
		return roofs.InProcess{}, nil
	}
	w, err := roofs.Workers(blasArch)
	if err != nil {
		return nil, fmt.Errorf("%w (use --in-process)", err)
	}
	return w, nil
}

func parseThreads(s string) ([]int, error) {
	if s == "" {
		return nil, nil
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return nil, usagef("--threads %q: want thread counts like 1,2", s)
		}
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out, nil
}
