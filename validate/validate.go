// Package validate checks the counting backends against kernels of known
// work and traffic: rprof's own roofs kernels, run in a process of their own
// under measure.Run, their counted W and Q compared with the analytic values
// within each backend's tolerance.
package validate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/rprof/rprof/machine"
	"github.com/rprof/rprof/measure"
	"github.com/rprof/rprof/measure/emulate"
	"github.com/rprof/rprof/roofs/kernels"
)

// Tolerance is the relative error allowed on W and Q.
type Tolerance struct{ Work, Traffic float64 }

// Tolerances are each backend's: emulate counts W exactly and models Q;
// pmu is the hardware-truth check of the counters.
var Tolerances = map[string]Tolerance{
	measure.BackendEmulate: {Work: 0, Traffic: 0.05},
	measure.DefaultBackend: {Work: 0.01, Traffic: 0.05},
}

// Verdicts of a Row.
const (
	OK      = "ok"
	Fail    = "FAIL"
	Skipped = "skipped"
)

// Check is one kernel run with its analytic W and Q (below 0: not checked).
type Check struct {
	Name        string
	Args        []string // the kernel's arguments (RunKernel's)
	Empty       []string // the same with no work (the pmu overhead run)
	Work, Bytes float64
}

// Row is one kernel under one backend, judged. Err is why a backend could
// not run here (Verdict Skipped); Why says which figure failed, or why a
// kernel was skipped.
type Row struct {
	Backend, Kernel       string
	Work, GotWork         float64
	Bytes, GotBytes       float64
	WorkKnown, BytesKnown bool
	Verdict, Why          string
	Err                   error
}

// Options are what Run validates.
type Options struct {
	// Kernel starts the process that runs a kernel: RunKernel's arguments
	// are appended to it.
	Kernel   []string
	Backends []string
	Model    emulate.CacheModel
	// Host is the machine the backends describe (nil: this machine).
	Host *machine.Host
}

// ErrNothingRan: no backend could run here.
var ErrNothingRan = errors.New("no backend could run here")

// Run validates every backend of o. A backend that cannot count here (no
// counters, no usable QEMU) gives one skipped row whose Err says why;
// other errors end the run. ErrNothingRan comes with the rows when no
// kernel ran.
func Run(ctx context.Context, o Options) ([]Row, error) {
	var rows []Row
	ran := false
	for _, b := range o.Backends {
		checks, skipped := Checks(b, o.Model)
		for _, s := range skipped {
			rows = append(rows, Row{Backend: b, Kernel: s.Name, Verdict: Skipped, Why: s.Reason})
		}
		for _, c := range checks {
			r, err := One(ctx, o.Host, o.Kernel, b, o.Model, c)
			if err != nil && cannotCount(err) {
				rows = append(rows, Row{Backend: b, Kernel: "all kernels", Verdict: Skipped, Err: err})
				break
			}
			if err != nil {
				return rows, fmt.Errorf("validate %s %s: %w", b, c.Name, err)
			}
			rows = append(rows, r)
			ran = true
		}
		if ctx.Err() != nil {
			return rows, ctx.Err()
		}
	}
	if !ran {
		return rows, ErrNothingRan
	}
	return rows, nil
}

// cannotCount is whether err says the backend cannot count here at all.
func cannotCount(err error) bool {
	var nc *measure.NoCountersError
	var u *emulate.UnsupportedQEMUError
	return errors.As(err, &nc) || errors.Is(err, emulate.ErrNoQEMU) || errors.As(err, &u)
}

// Failed is whether a row that ran does not hold.
func Failed(rows []Row) bool {
	for _, r := range rows {
		if r.Verdict == Fail {
			return true
		}
	}
	return false
}

// Checks are the kernels backend runs here: every compute kernel and every
// bandwidth kernel of an ISA this CPU (and, for emulate, QEMU) runs, the
// bandwidth ones over four times the last level of the model.
func Checks(backend string, model emulate.CacheModel) (checks []Check, skipped []kernels.Skipped) {
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
		checks = append(checks, Check{Name: k.Name, Work: float64(iters) * k.FlopsPerIter, Bytes: -1,
			Args: []string{"compute", k.Name, strconv.FormatInt(iters, 10)}, Empty: []string{"compute", k.Name, "0"}})
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
		c := Check{Name: name, Args: []string{"bandwidth", k.ISA, k.Name, strconv.FormatInt(n, 10), strconv.Itoa(passes)},
			Empty: []string{"bandwidth", k.ISA, k.Name, strconv.FormatInt(n, 10), "0"},
			Work:  k.FlopsPerElement * float64(n*passes), Bytes: k.MovedPerElement * float64(n*passes)}
		if k.Name == "load" {
			c.Work = -1 // the sum's final reduction adds a few FLOPs per pass
		}
		checks = append(checks, c)
	}
	return checks, skipped
}

// One counts one check under backend on h, the kernel started as kernel
// plus the check's arguments, and judges it.
func One(ctx context.Context, h *machine.Host, kernel []string, backend string, model emulate.CacheModel, c Check) (Row, error) {
	cfg := measure.Config{
		Target:     measure.Target{Command: append(append([]string{}, kernel...), c.Args...), Stdout: io.Discard, Stderr: io.Discard},
		Counting:   measure.Counting{Backend: backend, Host: h},
		Repetition: measure.Repetition{Repeat: 1},
	}
	caps, err := measure.BackendCapabilities(backend)
	if err != nil {
		return Row{}, err
	}
	if caps.Emulates {
		cfg.Counting.Emulator.CacheModel = &model
	} else {
		cfg.Counting.Overhead = append(append([]string{}, kernel...), c.Empty...)
	}
	p, err := measure.Run(ctx, cfg)
	if err != nil {
		return Row{}, err
	}
	if p.Exit.Code != 0 {
		return Row{}, fmt.Errorf("the kernel exited with status %d", p.Exit.Code)
	}
	r := Row{Backend: backend, Kernel: c.Name, Work: c.Work, Bytes: c.Bytes}
	r.GotWork, r.WorkKnown = figure(p.WorkFlops)
	r.GotBytes, r.BytesKnown = figure(p.TrafficBytes)
	if caps.AttributesFunctions {
		// The kernel's own functions: not the Go runtime, nor the
		// kernels package's initialisation.
		r.GotWork, r.GotBytes = 0, 0
		for _, f := range p.Functions {
			if strings.HasPrefix(f.Name, "github.com/rprof/rprof/roofs/kernels.") && !strings.Contains(f.Name, ".init") {
				r.GotWork += f.WorkFlops
				r.GotBytes += f.TrafficBytes
			}
		}
	}
	tol := Tolerances[backend]
	var why []string
	if c.Work >= 0 && (!r.WorkKnown || math.Abs(r.GotWork-c.Work) > tol.Work*c.Work) {
		why = append(why, "W")
	}
	if c.Bytes >= 0 && (!r.BytesKnown || math.Abs(r.GotBytes-c.Bytes) > tol.Traffic*c.Bytes) {
		why = append(why, "Q")
	}
	r.Verdict = OK
	if len(why) > 0 {
		r.Verdict, r.Why = Fail, strings.Join(why, " and ")+" out of tolerance"
	}
	return r, nil
}

func figure(v *float64) (float64, bool) {
	if v == nil {
		return 0, false
	}
	return *v, true
}

// ErrBadArguments: RunKernel's arguments name no kernel or are malformed.
var ErrBadArguments = errors.New("bad arguments")

// RunKernel runs one kernel: compute NAME ITERS, or bandwidth ISA NAME N
// PASSES (arrays of N float64).
func RunKernel(args []string) error {
	bad := fmt.Errorf("%q: %w", args, ErrBadArguments)
	if len(args) < 3 {
		return bad
	}
	switch args[0] {
	case "compute":
		iters, err := strconv.ParseInt(args[2], 10, 64)
		if err != nil {
			return bad
		}
		ks, _ := kernels.ComputeKernels()
		for _, k := range ks {
			if k.Name == args[1] {
				// Calls of at most 1e5 iterations: assembly is not
				// preemptible.
				for left := iters; left > 0; left -= 100000 {
					k.Run(min(left, 100000))
				}
				return nil
			}
		}
	case "bandwidth":
		if len(args) < 5 {
			return bad
		}
		n, err1 := strconv.Atoi(args[3])
		passes, err2 := strconv.Atoi(args[4])
		if err1 != nil || err2 != nil {
			return bad
		}
		ks, _ := kernels.BandwidthKernels()
		for _, k := range ks {
			if k.ISA == args[1] && k.Name == args[2] {
				var a, c []float64
				if k.Arrays > 1 {
					a, c = kernels.Alloc(n), kernels.Alloc(n)
				}
				b := kernels.Alloc(n)
				k.Run(a, b, c, 3, passes)
				return nil
			}
		}
	}
	return bad
}
