package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/rprof/rprof/internal/unit"
	"github.com/rprof/rprof/measure"
	"github.com/rprof/rprof/measure/emulate"
	"github.com/rprof/rprof/roofs/kernels"
)

var cmdValidate = &command{
	Name:      "validate",
	UsageLine: "rprof validate [--count BACKEND] [--cache-model SPEC]",
	Short:     "check the counting backends against kernels of known work and traffic",
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

  --count BACKEND     validate only this backend (pmu or emulate)
  --cache-model SPEC  the model of --count emulate (default: this machine's)

Exit status: 0 when every row that ran holds, 1 when one does not, 125
when no backend could run.
`,
	Run: runValidate,
}

// kernelRole runs one roofs kernel in a process of its own, for validate.
const kernelRole = "__rprof_kernel"

// Validation tolerances: relative error allowed on W and Q.
var tolerances = map[string]struct{ work, traffic float64 }{
	measure.BackendEmulate: {work: 0, traffic: 0.05},
	measure.DefaultBackend: {work: 0.01, traffic: 0.05},
}

// check is one kernel run of validate with its analytic W and Q (Q < 0:
// not checked).
type check struct {
	name        string
	args        []string // the kernel role's arguments
	empty       []string // the same with no work (the pmu overhead run)
	work, bytes float64
}

// validationRow is one row of the table.
type validationRow struct {
	backend, kernel       string
	work, gotWork         float64
	bytes, gotBytes       float64
	workKnown, bytesKnown bool
	verdict, why          string
}

func runValidate(ctx context.Context, e *env, args []string) error {
	fset := newFlagSet(e, "validate")
	only := fset.String("count", "", "validate only this `BACKEND`")
	cacheSpec := fset.String("cache-model", "", "cache model of the emulate backend: `SIZE/WAYS,...`")
	if err := parseFlags(fset, args); err != nil {
		return err
	}
	model := emulate.HostCacheModel()
	if *cacheSpec != "" {
		m, err := emulate.ParseCacheModel(*cacheSpec)
		if err != nil || !m.Enabled() {
			return usagef("--cache-model %q: %v (validate needs a model with levels)", *cacheSpec, err)
		}
		model = m
	}
	backends := []string{measure.DefaultBackend, measure.BackendEmulate}
	if *only != "" {
		if _, ok := tolerances[*only]; !ok {
			return usagef("--count %q: validate knows pmu and emulate", *only)
		}
		backends = []string{*only}
	}
	self, err := os.Executable()
	if err != nil {
		return &exitError{code: exitInternal, err: err}
	}
	var rows []validationRow
	ran := false
	for _, b := range backends {
		checks, skipped := validationChecks(b, model)
		for _, s := range skipped {
			rows = append(rows, validationRow{backend: b, kernel: s.Name, verdict: "skipped", why: s.Reason})
		}
		for _, c := range checks {
			r, err := validateOne(ctx, self, b, model, c)
			var nc *measure.NoCountersError
			switch {
			case errors.As(err, &nc), errors.Is(err, emulate.ErrNoQEMU), errorsAsUnsupported(err):
				rows = append(rows, validationRow{backend: b, kernel: "all kernels", verdict: "skipped", why: advice(err)})
			case err != nil:
				return &exitError{code: exitInternal, err: fmt.Errorf("validate %s %s: %w", b, c.name, err)}
			default:
				rows = append(rows, r)
				ran = true
				continue
			}
			break
		}
		if ctx.Err() != nil {
			return &exitError{code: exitInterrupted, err: ctx.Err()}
		}
	}
	writeValidation(e.stdout, rows, model)
	switch {
	case !ran:
		return &exitError{code: exitInternal, err: errors.New("no backend could run here")}
	case failed(rows):
		return &exitError{code: exitFailure}
	}
	return nil
}

func errorsAsUnsupported(err error) bool {
	var u *emulate.UnsupportedQEMUError
	return errors.As(err, &u)
}

func failed(rows []validationRow) bool {
	for _, r := range rows {
		if r.verdict == "FAIL" {
			return true
		}
	}
	return false
}

// validationChecks are the kernels backend runs here: every compute kernel
// and every bandwidth kernel of an ISA this CPU (and, for emulate, QEMU)
// runs, the bandwidth ones over four times the last level of the model.
func validationChecks(backend string, model emulate.CacheModel) (checks []check, skipped []kernels.Skipped) {
	compute, cs := kernels.ComputeKernels()
	bandwidth, bs := kernels.BandwidthKernels()
	skipped = append(cs, bs...)
	caps, _ := measure.BackendCapabilities(backend)
	emulated := caps.Emulates
	const computeFlops = 4e6
	for _, k := range compute {
		if emulated && k.ISA == "avx512" {
			skipped = append(skipped, kernels.Skipped{Name: k.Name, Reason: "QEMU 7.2 does not emulate AVX-512"})
			continue
		}
		iters := int64(math.Ceil(computeFlops / k.FlopsPerIter))
		checks = append(checks, check{name: k.Name, work: float64(iters) * k.FlopsPerIter, bytes: -1,
			args: []string{"compute", k.Name, strconv.FormatInt(iters, 10)}, empty: []string{"compute", k.Name, "0"}})
	}
	llc := model.Levels[len(model.Levels)-1].Size
	const passes = 3
	for _, k := range bandwidth {
		name := k.ISA + " " + k.Name
		if emulated && k.ISA == "avx512" {
			skipped = append(skipped, kernels.Skipped{Name: name, Reason: "QEMU 7.2 does not emulate AVX-512"})
			continue
		}
		n := int64(math.Ceil(float64(4*llc)/k.WorkingSetPerElement()/64)) * 64
		c := check{name: name, args: []string{"bandwidth", k.ISA, k.Name, strconv.FormatInt(n, 10), strconv.Itoa(passes)},
			empty: []string{"bandwidth", k.ISA, k.Name, strconv.FormatInt(n, 10), "0"},
			work:  k.FlopsPerElement * float64(n*passes), bytes: k.MovedPerElement * float64(n*passes)}
		if k.Name == "load" {
			c.work = -1 // the sum's final reduction adds a few FLOPs per pass
		}
		checks = append(checks, c)
	}
	return checks, skipped
}

// validateOne counts one check under backend and judges it.
func validateOne(ctx context.Context, self, backend string, model emulate.CacheModel, c check) (validationRow, error) {
	cfg := measure.Config{Command: append([]string{self, kernelRole}, c.args...), Count: backend, Repeat: 1,
		Stdout: io.Discard, Stderr: io.Discard}
	caps, err := measure.BackendCapabilities(backend)
	if err != nil {
		return validationRow{}, err
	}
	if caps.Emulates {
		cfg.CacheModel = &model
	} else {
		cfg.Overhead = append([]string{self, kernelRole}, c.empty...)
	}
	p, err := measure.Run(ctx, cfg)
	if err != nil {
		return validationRow{}, err
	}
	if p.Exit.Code != 0 {
		return validationRow{}, fmt.Errorf("the kernel exited with status %d", p.Exit.Code)
	}
	r := validationRow{backend: backend, kernel: c.name, work: c.work, bytes: c.bytes}
	r.gotWork, r.workKnown = figure(p.WorkFlops)
	r.gotBytes, r.bytesKnown = figure(p.TrafficBytes)
	if caps.AttributesFunctions {
		// The kernel's own functions: not the Go runtime, nor the
		// kernels package's initialisation.
		r.gotWork, r.gotBytes = 0, 0
		for _, f := range p.Functions {
			if strings.HasPrefix(f.Name, "github.com/rprof/rprof/roofs/kernels.") && !strings.Contains(f.Name, ".init") {
				r.gotWork += f.WorkFlops
				r.gotBytes += f.TrafficBytes
			}
		}
	}
	tol := tolerances[backend]
	var why []string
	if c.work >= 0 && (!r.workKnown || math.Abs(r.gotWork-c.work) > tol.work*c.work) {
		why = append(why, "W")
	}
	if c.bytes >= 0 && (!r.bytesKnown || math.Abs(r.gotBytes-c.bytes) > tol.traffic*c.bytes) {
		why = append(why, "Q")
	}
	r.verdict = "ok"
	if len(why) > 0 {
		r.verdict, r.why = "FAIL", strings.Join(why, " and ")+" out of tolerance"
	}
	return r, nil
}

func figure(v *float64) (float64, bool) {
	if v == nil {
		return 0, false
	}
	return *v, true
}

func writeValidation(w io.Writer, rows []validationRow, model emulate.CacheModel) {
	fmt.Fprintf(w, "Validation: counted W and Q of kernels of known work and traffic (emulate: W exact, Q within 5%%; pmu: W within 1%%, Q within 5%%; model %s)\n\n", model)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "backend\tkernel\tW analytic\tW counted\tW error\tQ analytic B\tQ counted B\tQ error\tverdict")
	for _, r := range rows {
		if r.verdict == "skipped" {
			fmt.Fprintf(tw, "%s\t%s\t\t\t\t\t\t\tskipped: %s\n", r.backend, r.kernel, r.why)
			continue
		}
		wa, wc, we := "-", "-", "-"
		if r.work >= 0 {
			wa, wc, we = unit.Count(r.work), unit.Count(r.gotWork), relErr(r.gotWork, r.work)
		} else if r.workKnown {
			wc = unit.Count(r.gotWork)
		}
		qa, qc, qe := "-", "-", "-"
		if r.bytes >= 0 {
			qa, qc, qe = unit.Count(r.bytes), unit.Count(r.gotBytes), relErr(r.gotBytes, r.bytes)
		}
		v := r.verdict
		if r.why != "" {
			v += ": " + r.why
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.backend, r.kernel, wa, wc, we, qa, qc, qe, v)
	}
	tw.Flush()
}

func relErr(got, want float64) string {
	if want == 0 {
		return "-"
	}
	return fmt.Sprintf("%+.2f%%", 100*(got/want-1))
}

// kernelMain is the kernel role: compute NAME ITERS, or bandwidth ISA NAME
// N PASSES (arrays of N float64). It exits 0, or 2 for bad arguments.
func kernelMain(args []string) int {
	bad := func() int {
		fmt.Fprintf(os.Stderr, "%s: bad arguments %q\n", kernelRole, args)
		return 2
	}
	if len(args) < 5 {
		return bad()
	}
	switch args[2] {
	case "compute":
		iters, err := strconv.ParseInt(args[4], 10, 64)
		if err != nil {
			return bad()
		}
		ks, _ := kernels.ComputeKernels()
		for _, k := range ks {
			if k.Name == args[3] {
				// Calls of at most 1e5 iterations: assembly is not
				// preemptible.
				for left := iters; left > 0; left -= 100000 {
					k.Run(min(left, 100000))
				}
				return 0
			}
		}
	case "bandwidth":
		if len(args) < 7 {
			return bad()
		}
		n, err1 := strconv.Atoi(args[5])
		passes, err2 := strconv.Atoi(args[6])
		if err1 != nil || err2 != nil {
			return bad()
		}
		ks, _ := kernels.BandwidthKernels()
		for _, k := range ks {
			if k.ISA == args[3] && k.Name == args[4] {
				var a, c []float64
				if k.Arrays > 1 {
					a, c = kernels.Alloc(n), kernels.Alloc(n)
				}
				b := kernels.Alloc(n)
				for range passes {
					k.Run(a, b, c, 3)
				}
				return 0
			}
		}
	}
	return bad()
}
