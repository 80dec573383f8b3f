package main

import (
	"context"
	"fmt"
	"os"

	"github.com/rprof/rprof/cmd/rprof/internal/advice"
	"github.com/rprof/rprof/cmd/rprof/internal/render"
	"github.com/rprof/rprof/doctor"
	"github.com/rprof/rprof/internal/docfile"
	"github.com/rprof/rprof/machine"
	"github.com/rprof/rprof/measure"
	"github.com/rprof/rprof/roofline"
	"github.com/rprof/rprof/roofs"
)

var cmdDoctor = &command{
	Name:      "doctor",
	UsageLine: "rprof doctor [--json] [--sysfs DIR] [--procfs DIR]",
	Short:     "what works here for roofline work, and how to fix what does not",
	Long: `
Doctor diagnoses this machine for roofline work: the CPU and its
microarchitecture, the PMUs the kernel exposes, whether FP work and DRAM
traffic can be counted (on this machine each event is opened once to be
sure), whether eBPF uprobes and a BLAS library are usable, the
perf_event_paranoid level and capabilities, whether it is a VM, and whether
the NMI watchdog holds a counter. For rprof roofs it also reports the
cache topology the host declares and, beside it, the effective sizes the
last rprof roofs here measured or confirmed (what its roofs use), the
vector compute kernels this CPU runs (AVX-512, AVX2, FMA), BLAS kernel
variables in the environment (OPENBLAS_CORETYPE, OPENBLAS_L2_SIZE,
BLIS_ARCH_TYPE), the clock source of theoretical peaks (cpufreq, else
measured) and the CPUs allowed (cpuset) against those online. For
NVIDIA GPUs it reports the kernel module and whether profiling counters
are restricted to administrators, the CUDA driver and its devices, the
CUPTI library 'rprof run --gpu' would use and its API version, and which
tier of GPU kernel measurement works and why not the one above
(docs/gpu.md). Each problem comes with its exact fix.

With --sysfs or --procfs (here or before the command, as every command
takes them) it reads a tree captured on another machine; nothing can be
opened there, so checks say "not probed".

Exit status: 0 when both FP work and DRAM traffic can be counted, 1 when
either cannot, 2 for a missing, unreadable or partial tree.

`,
	Run: runDoctor,
}

func runDoctor(ctx context.Context, e *env, args []string) error {
	asJSON, m, err := parseMachineCommand(e, "doctor", args)
	if err != nil {
		return err
	}
	h, err := m.host(e)
	if err != nil {
		return err
	}
	rep, err := doctor.Diagnose(h, os.LookupEnv)
	if err != nil {
		return m.treeError(err)
	}
	d := rep.Diagnosis
	where := ""
	if !d.Live {
		where = fmt.Sprintf("captured tree (sysfs %s, procfs %s)", m.sysfs, m.procfs)
	}
	doc := render.NewDoctorDoc(rep, where)
	if rep.BLAS.Err != nil {
		// The BLAS check with its fix.
		doc.BLAS.Error = rep.BLAS.Err.Error() + "; fix: " + roofs.BLASHint + " " + advice.BLASFlagFix
	}
	doc.Problems, doc.Details = problemsDoc(d.Problems)
	doc.GPU = gpuCheck(doctor.DiagnoseGPU(h, e.cudaDriver, os.Getenv))
	if d.Live {
		doc.Caches.Effective, doc.Caches.EffectiveFrom = lastEffectiveCaches(h)
	}
	if !doc.Usable {
		qerr := advice.ErrQEMUUnchecked
		if d.Live {
			qerr = measure.CheckQEMU(ctx)
		}
		doc.WaysForward = advice.WaysForward(advice.Example.Target, advice.Example.Flags, advice.Example.Work, advice.Example.Traffic, qerr)
	}
	if asJSON {
		err = writeJSON(e.stdout, doc)
	} else {
		err = render.WriteDoctorText(e.stdout, doc, d, advice.Problem)
	}
	if err != nil {
		return err
	}
	if !d.Usable() {
		return &exitError{code: exitFailure}
	}
	return nil
}

// lastEffectiveCaches are the effective cache sizes of the roofs document
// at the default path, when it was measured on a CPU of h's model name,
// and where they come from.
func lastEffectiveCaches(h *machine.Host) ([]roofline.CacheLevel, string) {
	d, err := docfile.LoadRoofs("")
	if err != nil || d.Roofs == nil {
		return nil, ""
	}
	caches := h.EffectiveCaches(d.Roofs)
	if caches == nil {
		return nil, ""
	}
	return caches, fmt.Sprintf("%s of %s", d.Path, d.Roofs.Created.UTC().Format("2006-01-02 15:04 MST"))
}

// gpuCheck is the GPU section with the fixes of its errors.
func gpuCheck(g doctor.GPU) render.GPUCheck {
	c := render.GPUCheck{Probed: g.Checked, Module: g.Module, CountersAdminOnly: g.AdminOnly, Driver: g.Driver,
		CUPTI: g.CUPTI, CUPTIVersion: g.CUPTIVersion, Tier: g.Tier, Devices: []string{}}
	if g.Checked {
		c.Why = advice.GPUTier(g)
	}
	if g.DriverErr != nil {
		c.DriverError = advice.Line(g.DriverErr)
	}
	if g.CUPTIErr != nil {
		c.CUPTIError = advice.Line(g.CUPTIErr)
	}
	for _, d := range g.Devices {
		c.Devices = append(c.Devices, fmt.Sprintf("%d %s (compute capability %d.%d, %d SMs)", d.Ordinal, d.Name, d.Major, d.Minor, d.SMs))
	}
	return c
}
