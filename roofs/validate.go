package roofs

import (
	"errors"
	"fmt"

	"github.com/rprof/rprof/dnnbench"
	"github.com/rprof/rprof/internal/badfield"
	"github.com/rprof/rprof/internal/stats"
	"github.com/rprof/rprof/internal/unit"
)

// ErrInvalidOptions is matched by every error about Options that cannot
// be measured (an *OptionError): the caller's input is wrong, nothing was
// measured.
var ErrInvalidOptions = errors.New("invalid options")

// OptionError says which fields of Options are wrong and why; its Kind
// is ErrInvalidOptions, which it matches.
type OptionError = badfield.Error

func invalid(err error, fields ...string) error {
	return badfield.New(ErrInvalidOptions, err, fields...)
}

// minMaxMemory is the least MaxMemory may be: below it the sweep could
// not even span L2.
const minMaxMemory = 1 << 20

// Validate checks o before anything is measured: each error is an
// *OptionError. Measure calls it; a caller that waits before measuring
// (for a lock, say) calls it first too. An explicit BLAS is loaded to
// check it is one.
func (o Options) Validate() error {
	if err := o.validateSearch(); err != nil {
		return err
	}
	for _, n := range o.Threads {
		if n < 1 {
			return invalid(fmt.Errorf("want thread counts of 1 or more, got %d", n), "Threads")
		}
	}
	if o.MaxMemory < 0 || (o.MaxMemory > 0 && o.MaxMemory < minMaxMemory) {
		return invalid(fmt.Errorf("want %s or more, got %s (the sweep could not even span L2)", unit.Bytes(minMaxMemory), unit.Bytes(o.MaxMemory)), "MaxMemory")
	}
	if o.BLAS != "" {
		if _, err := blasFor(o.BLAS); err != nil {
			return invalid(err, "BLAS")
		}
	}
	return o.validateDNN()
}

// validateSearch checks the options of the searches and their stop rules.
func (o Options) validateSearch() error {
	if o.Method != "" {
		if _, err := stats.ParseMethod(string(o.Method)); err != nil {
			return invalid(err, "Method")
		}
	}
	if _, err := DGEMMSpace(o.DGEMMSpace); err != nil {
		return invalid(err, "DGEMMSpace")
	}
	switch {
	case o.Fixed < 0:
		return invalid(fmt.Errorf("want a count of 1 or more, got %d", o.Fixed), "Fixed")
	case o.Invocations < 0:
		return invalid(fmt.Errorf("want a count of 1 or more, got %d", o.Invocations), "Invocations")
	case o.Fixed > 0 && o.Quick:
		return invalid(errors.New("do not go together"), "Fixed", "Quick")
	case o.DGEMMBudget != nil && *o.DGEMMBudget < 0:
		return invalid(fmt.Errorf("want a duration of 0 or more, got %v", *o.DGEMMBudget), "DGEMMBudget")
	}
	return nil
}

// validateDNN checks each oneDNN problem and that its jobs run in worker
// processes.
func (o Options) validateDNN() error {
	if len(o.DNN) == 0 {
		return nil
	}
	if _, ok := o.Invoker.(InProcess); ok || o.Invoker == nil {
		return invalid(errors.New("need worker processes (oneDNN runs on a worker's main thread, whose stack its kernels need)"), "DNN", "Invoker")
	}
	for _, arg := range o.DNN {
		if _, _, err := dnnbench.Resolve(arg, "", "", ""); err != nil {
			return invalid(fmt.Errorf("%s: %w", arg, err), "DNN")
		}
	}
	return nil
}
