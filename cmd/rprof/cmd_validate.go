package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/rprof/rprof/cmd/rprof/internal/advice"
	"github.com/rprof/rprof/cmd/rprof/internal/render"
	"github.com/rprof/rprof/measure"
	"github.com/rprof/rprof/validate"
)

var cmdValidate = &command{
	Name:      "validate",
	UsageLine: "rprof validate [--count BACKEND] [--cache-model SPEC]",
	Short:     "check the counting backends on kernels of known work and traffic",
	Long: `
Validate runs rprof's own kernels, whose work W and DRAM traffic Q are known
exactly, under every counting backend available here (or the one --count
names), and compares the counted W and Q with the analytic values: the FMA
and mul+add chains of 'rprof roofs' at each ISA the backend can run (W), and
the bandwidth kernels (TRIAD, non-temporal TRIAD, DAXPY, load, update) over
a working set four times the last-level cache (W and Q). It prints one row
per kernel and backend with its verdict.

Tolerances: emulate, W exact and Q within 5%; pmu, W within 1% and Q within
5% (there it is the hardware-truth check of the counters). Under emulate, W
and Q are those of the kernel's own functions (the function table); under
pmu, a run of the same kernel with no iterations is subtracted as the
overhead.


Exit status: 0 when every row that ran holds, 1 when one does not, 125
when no backend could run.
`,
	Run: runValidate,
}

// kernelRole runs one roofs kernel in a process of its own, for validate.
const kernelRole = "__rprof_kernel"

func runValidate(ctx context.Context, e *env, args []string) error {
	fset := newFlagSet(e, "validate")
	only := fset.String("count", "", "validate only this `BACKEND` (pmu or emulate)")
	cacheSpec := fset.String("cache-model", "", "the cache model of --count emulate, `SIZE/WAYS,...` from L1 down (default: this machine's)")
	if err := parseFlags(fset, args); err != nil {
		return err
	}
	model := measure.HostCacheModel(e.machine())
	if *cacheSpec != "" {
		m, err := measure.ParseCacheModel(*cacheSpec)
		if err != nil || !m.Enabled() {
			return usagef("--cache-model %q: %v (validate needs a model with levels)", *cacheSpec, err)
		}
		model = m
	}
	backends := []string{measure.DefaultBackend, measure.BackendEmulate}
	if *only != "" {
		if _, ok := validate.Tolerances[*only]; !ok {
			return usagef("--count %q: validate knows pmu and emulate", *only)
		}
		backends = []string{*only}
	}
	self, err := os.Executable()
	if err != nil {
		return &exitError{code: exitInternal, err: err}
	}
	rows, err := validate.Run(ctx, validate.Options{Kernel: []string{self, kernelRole}, Backends: backends, Model: model, Host: e.machine()})
	switch {
	case err != nil && err == ctx.Err():
		return &exitError{code: exitInterrupted, err: err}
	case err != nil && !errors.Is(err, validate.ErrNothingRan):
		return &exitError{code: exitInternal, err: err}
	}
	render.WriteValidation(e.stdout, rows, model, advice.Line)
	switch {
	case err != nil:
		return &exitError{code: exitInternal, err: err}
	case validate.Failed(rows):
		return &exitError{code: exitFailure}
	}
	return nil
}

// kernelMain is the kernel role: validate.RunKernel on the arguments after
// the role. It exits 0, or 2 for bad arguments.
func kernelMain(args []string) int {
	if len(args) < 2 || validate.RunKernel(args[2:]) != nil {
		fmt.Fprintf(os.Stderr, "%s: bad arguments %q\n", kernelRole, args)
		return 2
	}
	return 0
}
