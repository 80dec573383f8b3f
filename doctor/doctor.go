// Package doctor composes the checks of `rprof doctor`: the PMU diagnosis,
// whether regions and a BLAS are usable, the caches the host declares and
// what `rprof roofs` needs. It returns plain data; the command renders it
// and gives the advice.
package doctor

import (
	"fmt"
	"io/fs"
	"slices"

	"github.com/rprof/rprof/internal/affinity"
	"github.com/rprof/rprof/machine"
	"github.com/rprof/rprof/pmu"
	"github.com/rprof/rprof/regions"
	"github.com/rprof/rprof/roofs"
	"github.com/rprof/rprof/roofs/kernels"
)

// Report is the diagnosis of one host.
type Report struct {
	// Diagnosis is the PMU diagnosis: probed where the host is this
	// machine, read from the trees otherwise.
	Diagnosis pmu.Diagnosis
	// Uprobes says whether eBPF programs can be attached to uprobes (for
	// counting regions of a program).
	Uprobes pmu.Check
	// Regions says whether `rprof run --region` works here.
	Regions pmu.Check
	// BLAS is the BLAS `rprof roofs` would load.
	BLAS BLAS
	// Caches are the cache sizes the host declares, with their sources.
	Caches machine.Caches
	// Roofs are `rprof roofs`' other preconditions.
	Roofs Roofs
}

// BLAS is whether the BLAS that `rprof roofs` would load is there: not
// checked on a captured tree, which says nothing of this machine's
// libraries.
type BLAS struct {
	Checked, Usable        bool
	Library, Path, Version string
	// Err is why it cannot be loaded.
	Err error
}

// Roofs is what `rprof roofs` needs besides the caches: vector kernels
// this CPU runs, the clock source of its theoretical peaks, and the CPUs it
// may use. A captured tree tells the clock and online CPUs only.
type Roofs struct {
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

// Diagnose runs every check on h: events are opened, and this machine's
// libraries, kernels, affinity and environment (lookupEnv) asked, only
// where h is this machine (Live). An unreadable or partial tree is an
// error.
func Diagnose(h *machine.Host, lookupEnv func(string) (string, bool)) (Report, error) {
	var r Report
	var err error
	if h.Live {
		r.Diagnosis, err = pmu.DiagnoseLive(h)
	} else {
		r.Diagnosis, err = pmu.Diagnose(h)
	}
	if err != nil {
		return Report{}, err
	}
	r.Uprobes = uprobeCheck(&r.Diagnosis, haveBPFKprobe)
	d := r.Diagnosis
	r.Regions = regionsCheck(d)
	r.BLAS = checkBLAS(d.Live)
	r.Caches = h.Caches()
	r.Roofs = roofsPrereqs(d.Live, h.Sysfs, len(d.Topology.Online), lookupEnv)
	return r, nil
}

// ProblemBPF: eBPF programs cannot be loaded for want of CAP_BPF (a
// pmu.Problem code, which the command turns into its fix).
const ProblemBPF = "bpf"

// Capability bits (include/uapi/linux/capability.h).
const (
	capSysAdmin = 21
	capBPF      = 39
)

// uprobeCheck says whether uprobes and eBPF programs are there: the uprobe
// PMU in the tree and, on this machine, a kprobe-type program loaded by
// bpf. Lacking CAP_BPF adds a ProblemBPF to d's problems.
func uprobeCheck(d *pmu.Diagnosis, bpf func() error) pmu.Check {
	if !slices.Contains(d.PMUs, "uprobe") {
		return pmu.Check{Err: fmt.Errorf("no uprobe PMU in sysfs: %w", pmu.ErrNotSupported)}
	}
	c := pmu.Check{Detail: "uprobe PMU present"}
	if d.Live {
		c.Probed = true
		if err := bpf(); err != nil {
			c.Err = err
			if d.CapsKnown && d.CapEff&(1<<capBPF|1<<capSysAdmin) == 0 {
				d.Problems = append(d.Problems, pmu.Problem{Code: ProblemBPF,
					What: "eBPF programs cannot be loaded: the process lacks CAP_BPF"})
			}
			return c
		}
		c.Detail += "; eBPF kprobe/uprobe programs load"
	}
	c.Usable = true
	return c
}

// checkBLAS loads the BLAS roofs would use, on this machine only.
func checkBLAS(live bool) BLAS {
	if !live {
		return BLAS{}
	}
	b, err := roofs.LoadBLAS("")
	if err != nil {
		return BLAS{Checked: true, Err: err}
	}
	return BLAS{Checked: true, Usable: true, Library: b.Library, Path: b.Path, Version: b.Version}
}

// regionsCheck says whether rprof run --region works here: on this
// machine, whether the probes' programs, helpers and attach cookies are
// usable, and what a region gets (W needs FP-work counters). A captured
// tree cannot tell.
func regionsCheck(d pmu.Diagnosis) pmu.Check {
	if !d.Live {
		return pmu.Check{Detail: "not probed (a captured tree): see eBPF uprobes"}
	}
	if err := regions.Supported(); err != nil {
		return pmu.Check{Probed: true, Err: err}
	}
	detail := "eBPF programs with the helpers probes use (attach cookies, ring buffer, counter reads) load; each region gets calls and times"
	if d.Work.Usable {
		detail += ", and W from per-CPU FP-work counters"
	} else {
		detail += "; W per region needs the FP-work counters this machine lacks"
	}
	return pmu.Check{Usable: true, Probed: true, Detail: detail + "; Q is not attributed to regions"}
}

// blasEnvVars select or size a BLAS's kernels; left in the environment,
// they change the DGEMM roof.
var blasEnvVars = []string{"OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "BLIS_ARCH_TYPE"}

// roofsPrereqs gathers roofs' preconditions. sysfs is the tree read (the live
// one or a captured one); live says whether this process's machine is the
// one diagnosed, so kernels, affinity and environment may be asked.
func roofsPrereqs(live bool, sysfs fs.FS, online int, lookup func(string) (string, bool)) Roofs {
	r := Roofs{Online: online, Clock: "measured", Kernels: []string{}, Skipped: []string{}, BLASEnv: []string{}}
	if st, err := fs.Stat(sysfs, "devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq"); err == nil && !st.IsDir() {
		r.Clock = "cpufreq"
	}
	if !live {
		r.Kernels, r.Skipped, r.BLASEnv = nil, nil, nil
		return r
	}
	ok, skipped := kernels.ComputeKernels()
	widest := slices.Clone(ok)
	slices.Reverse(widest)
	for _, k := range widest {
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
