package render

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/rprof/rprof/internal/unit"
	"github.com/rprof/rprof/measure"
	"github.com/rprof/rprof/validate"
)

// WriteValidation prints validate's rows, the model the emulate backend
// used, and for a backend that could not run, fix's words for why.
func WriteValidation(w io.Writer, rows []validate.Row, model measure.CacheModel, fix func(error) string) {
	fmt.Fprintf(w, "Validation: counted W and Q of kernels of known work and traffic (%s: %s; %s: %s; model %s)\n\n",
		measure.BackendEmulate, tolerance(validate.Tolerances[measure.BackendEmulate]),
		measure.DefaultBackend, tolerance(validate.Tolerances[measure.DefaultBackend]), model)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "backend\tkernel\tW analytic\tW counted\tW error\tQ analytic B\tQ counted B\tQ error\tverdict")
	for _, r := range rows {
		if r.Verdict == validate.Skipped {
			why := r.Why
			if r.Err != nil {
				why = fix(r.Err)
			}
			fmt.Fprintf(tw, "%s\t%s\t\t\t\t\t\t\tskipped: %s\n", r.Backend, r.Kernel, why)
			continue
		}
		wa, wc, we := "-", "-", "-"
		if r.Work >= 0 {
			wa, wc, we = unit.Count(r.Work), unit.Count(r.GotWork), relErr(r.GotWork, r.Work)
		} else if r.WorkKnown {
			wc = unit.Count(r.GotWork)
		}
		qa, qc, qe := "-", "-", "-"
		if r.Bytes >= 0 {
			qa, qc, qe = unit.Count(r.Bytes), unit.Count(r.GotBytes), relErr(r.GotBytes, r.Bytes)
		}
		v := r.Verdict
		if r.Why != "" {
			v += ": " + r.Why
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Backend, r.Kernel, wa, wc, we, qa, qc, qe, v)
	}
	tw.Flush()
}

func relErr(got, want float64) string {
	if want == 0 {
		return "-"
	}
	return fmt.Sprintf("%+.2f%%", 100*(got/want-1))
}

// tolerance is "W within 1%, Q within 5%", a zero tolerance "exact".
func tolerance(t validate.Tolerance) string {
	within := func(tol float64) string {
		if tol == 0 {
			return "exact"
		}
		return fmt.Sprintf("within %g%%", tol*100)
	}
	return "W " + within(t.Work) + ", Q " + within(t.Traffic)
}
