package main

import (
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/rprof/rprof/internal/affinity"
	"github.com/rprof/rprof/roofs/kernels"
)

// roofsJSON is what rprof roofs needs besides the caches: vector kernels
// this CPU runs, the clock source of its theoretical peaks, and the CPUs it
// may use. A captured tree tells the clock and online CPUs only.
type roofsJSON struct {
	// Kernels are the ISAs of the compute kernels that run here, widest
	// first, nil when not checked (a captured tree); FMA says fused
	// multiply-add kernels run.
	Kernels []string `json:"kernels"`
	FMA     bool     `json:"fma"`
	Skipped []string `json:"skipped"`
	// Clock is "cpufreq" or "measured" (no cpufreq: roofs times a chain of
	// dependent adds).
	Clock string `json:"clock"`
	// Online and Allowed are CPU counts; Allowed is 0 when not checked.
	Online  int `json:"online"`
	Allowed int `json:"allowed"`
	// BLASEnv are the variables in the environment that force the BLAS's
	// kernels (live only).
	BLASEnv []string `json:"blas_env"`
}

// blasEnvVars select or size a BLAS's kernels; left in the environment,
// they change the DGEMM roof.
var blasEnvVars = []string{"OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "BLIS_ARCH_TYPE"}

// roofsPrereqs gathers roofs' preconditions. sysfs is the tree read (the live
// one or a captured one); live says whether this process's machine is the
// one diagnosed, so kernels, affinity and environment may be asked.
func roofsPrereqs(live bool, sysfs fs.FS, online int, lookup func(string) (string, bool)) roofsJSON {
	r := roofsJSON{Online: online, Clock: "measured", Kernels: []string{}, Skipped: []string{}, BLASEnv: []string{}}
	if st, err := fs.Stat(sysfs, "devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq"); err == nil && !st.IsDir() {
		r.Clock = "cpufreq"
	}
	if !live {
		r.Kernels, r.Skipped, r.BLASEnv = nil, nil, nil
		return r
	}
	ok, skipped := kernels.ComputeKernels()
	for _, k := range backward(ok) {
		r.FMA = r.FMA || k.FMA
		if !slices.Contains(r.Kernels, k.ISA) {
			r.Kernels = append(r.Kernels, k.ISA)
		}
	}
	for _, s := range skipped {
		r.Skipped = append(r.Skipped, s.Name+": "+s.Reason)
	}
	if a, err := affinity.Allowed(); err == nil {
		r.Allowed = len(a)
	}
	for _, v := range blasEnvVars {
		if val, set := lookup(v); set {
			r.BLASEnv = append(r.BLASEnv, v+"="+val)
		}
	}
	return r
}

// roofsText gives the roofs lines of the doctor's table.
func roofsText(r roofsJSON) (kernelsLine, clockLine, cpusLine string) {
	switch {
	case r.Kernels == nil:
		kernelsLine = "not checked (captured tree)"
	case len(r.Kernels) == 0:
		kernelsLine = "none: rprof roofs has no compute roof here"
	default:
		kernelsLine = strings.Join(r.Kernels, ", ")
		if r.FMA {
			kernelsLine += "; FMA"
		}
	}
	if len(r.Skipped) > 0 {
		kernelsLine += fmt.Sprintf(" (%d skipped: %s)", len(r.Skipped), r.Skipped[0])
		if len(r.Skipped) > 1 {
			kernelsLine += ", ..."
		}
	}
	clockLine = "cpufreq cpuinfo_max_freq (theoretical peaks use it)"
	if r.Clock == "measured" {
		clockLine = "no cpufreq: rprof roofs measures the clock (a chain of dependent adds)"
	}
	switch {
	case r.Allowed == 0:
		cpusLine = fmt.Sprintf("%d online; allowed not checked (captured tree)", r.Online)
	case r.Allowed < r.Online:
		cpusLine = fmt.Sprintf("%d allowed of %d online (cpuset or taskset): roofs measures the allowed ones only", r.Allowed, r.Online)
	default:
		cpusLine = fmt.Sprintf("%d allowed, all online", r.Allowed)
	}
	return
}

func backward(ks []kernels.Compute) []kernels.Compute {
	out := slices.Clone(ks)
	slices.Reverse(out)
	return out
}
