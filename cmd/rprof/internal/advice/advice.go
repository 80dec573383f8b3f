// Package advice turns the libraries' typed errors, problem codes and
// flag codes into the remedies shown to the user: the one place that
// names rprof's flags and the packages to install. It is presentation,
// the command's own (render writes the text, advice words the fixes), so
// unlike the libraries it may name flags.
package advice

import (
	"errors"
	"fmt"
	"strings"

	"github.com/rprof/rprof/cluster"
	"github.com/rprof/rprof/cmd/rprof/internal/render"
	"github.com/rprof/rprof/dnnbench"
	"github.com/rprof/rprof/dnnrun"
	"github.com/rprof/rprof/doctor"
	"github.com/rprof/rprof/gpu"
	"github.com/rprof/rprof/gpu/cuda"
	"github.com/rprof/rprof/gpu/cupti"
	"github.com/rprof/rprof/internal/badfield"
	"github.com/rprof/rprof/internal/lock"
	"github.com/rprof/rprof/measure"
	"github.com/rprof/rprof/pmu"
	"github.com/rprof/rprof/roofline"
	"github.com/rprof/rprof/roofs"
)

// Line turns an error into the line shown to the user, adding the fix for
// the typed errors the libraries return. Each command's owner extends it.
func Line(err error) string {
	if fix := Fix(err); fix != "" {
		return err.Error() + "; fix: " + fix
	}
	return err.Error()
}

// Fix is the one-line remedy for pmu's typed errors, "" for others.
func Fix(err error) string {
	var perm *pmu.PermissionError
	var uq *measure.UnsupportedQEMUError
	var lockWait *lock.TimeoutError
	switch {
	case errors.As(err, &lockWait) && lockWait.Timeout == 0:
		return "wait for it to finish, or give --lock-timeout a duration to wait"
	case errors.As(err, &lockWait):
		return "wait for it to finish, or give --lock-timeout a longer duration"
	case errors.As(err, &perm) && perm.SystemWide:
		return "memory-controller events are system-wide and need CAP_PERFMON: " + fixSystemWide
	case errors.As(err, &perm):
		return fixPerProcess
	case errors.Is(err, pmu.ErrPermission):
		return fixPerProcess + ", or run as root"
	case errors.Is(err, pmu.ErrNoPMU):
		return "this machine exposes no hardware PMU (a VM without a virtual PMU?); 'rprof doctor' says what would enable one"
	case errors.Is(err, measure.ErrNoQEMU):
		return "install the qemu-user package (apt-get install qemu-user), or name the binary with --qemu PATH or " + measure.QEMUEnv
	case errors.As(err, &uq):
		return qemuFix(uq)
	case errors.Is(err, measure.ErrIllegalInstruction):
		return "build the target for x86-64-v3 or lower (gcc -march=x86-64-v3), or count with --count pmu on a machine with a PMU"
	case errors.Is(err, pmu.ErrUnsupportedCPU):
		return "rprof has no event table for this CPU; 'rprof events' shows what is missing"
	case errors.Is(err, pmu.ErrNotSupported):
		return "this kernel or machine lacks the event; 'rprof doctor' says what is missing and why"
	case errors.Is(err, dnnbench.ErrThreadsUnset):
		return "drop --threads and set the thread count in the runtime's own way"
	}
	return gpuFix(err)
}

// flagFixes are the remedies, naming rprof's flags, that the command adds
// to the messages of flags in the documents it writes: the libraries say
// what happened, the command what to pass to change it.
var flagFixes = map[string]string{
	roofline.FlagBusyMachine: "--threads N to choose",
	roofline.FlagHybridScope: "--threads to choose",
	roofline.FlagDGEMMBudget: "--dgemm-budget sets the budget",
	roofline.FlagWideTime: "more repetitions narrow the interval: --repeat N, or --ci 5% to repeat until it is that narrow; " +
		"a repetition far from the others was disturbed: rerun on a quieter machine; where its overhead run was the far one, a shorter, steadier --overhead command adds less noise",
}

// BLASFlagFix is the remedy, after roofs.BLASHint, where no BLAS was found.
const BLASFlagFix = "(or pass --blas PATH)"

// skipFixes are the remedies, naming rprof's flags, of roofs' skips by
// their code.
var skipFixes = map[string]string{
	roofs.SkipNoDGEMM: "(--no-dgemm)",
	roofs.SkipNoBLAS:  BLASFlagFix,
}

// Roofs adds the remedies to the flags of a roofs measurement and
// to its skips; a skip's remedy goes on the flag of its harness too (a
// run skips DGEMM once, so its dgemm-skipped flag is the skip's).
func Roofs(rep *roofs.Report) {
	Flags(rep.Roofs.Flags)
	if d := rep.Roofs.DGEMM; d != nil {
		Flags(d.Flags)
		for i, f := range d.Flags {
			if f.Code == roofline.FlagDGEMMSlow {
				d.Flags[i].Message += " (" + dgemmSlowFix(rep.DGEMMKernels) + ")"
			}
		}
	}
	for i, s := range rep.Skipped {
		fix := skipFixes[s.Code]
		if fix == "" {
			continue
		}
		rep.Skipped[i].Why += " " + fix
		if s.Code != roofs.SkipNoBLAS {
			continue
		}
		for j, f := range rep.Roofs.Flags {
			if f.Code == roofline.FlagDGEMMSkipped {
				rep.Roofs.Flags[j].Message += " " + fix
			}
		}
	}
}

// dgemmSlowFix is the remedy of a dgemm-below-fma flag: the kernel sets
// that may do better, through --blas-arch (it overrides the variables in
// the environment), else a wider search or another library.
func dgemmSlowFix(kernels []string) string {
	switch len(kernels) {
	case 0:
		return "--dgemm-space seed searches larger shapes; --blas PATH names another library"
	case 1:
		return "rerun with --blas-arch " + kernels[0]
	}
	return "rerun with --blas-arch " + kernels[0] + ", or " + strings.Join(kernels[1:], " or ")
}

// Flags adds to the message of each of flags its remedy from
// flagFixes, in parentheses.
func Flags(flags []roofline.Flag) {
	for i, f := range flags {
		if fix := flagFixes[f.Code]; fix != "" {
			flags[i].Message += " (" + fix + ")"
		}
	}
}

// fieldWords are the flags of one library's options, by the names its
// refusals (*badfield.Error) give the fields, the ways forward by field,
// and what comes between the flags and the reason.
type fieldWords struct {
	flags, fixes map[string]string
	sep          string
}

// invalidWords are the fieldWords by the refusal's Kind. A field without a
// flag (a region that does not resolve, an event that does not parse, a
// rank's rule) is refused in words that say themselves what they are
// about.
var invalidWords = map[error]fieldWords{
	measure.ErrInvalidConfig: {sep: " ", flags: map[string]string{
		"Target.Command": "the command", "Counting.Backend": "--count", "Counting.Overhead": "--overhead",
		"Counting.IdleBaseline": "--idle-baseline", "Counting.Work": "--work", "Counting.Traffic": "--traffic",
		"Repetition.Repeat": "--repeat", "Repetition.CI": "--ci", "Repetition.Confidence": "--confidence",
		"Repetition.MaxRepeat": "--max-repeat", "Repetition.MaxTime": "--max-time", "Placement.Threads": "--threads",
	}},
	dnnrun.ErrInvalidOptions: {sep: " ", flags: map[string]string{
		"Command": "the command", "Count": "--count", "Events": "-e", "Confidence": "--confidence", "Threads": "--threads",
	}, fixes: map[string]string{
		"Command": "give the program to run after the flags",
		"Count":   "pmu counts with uprobes and hardware counters, emulate under QEMU", "Events": "add --count pmu",
	}},
	roofs.ErrInvalidOptions: {sep: ": ", flags: map[string]string{
		"Threads": "--threads", "Quick": "--quick", "Fixed": "--fixed", "Method": "--method", "Order": "--order",
		"Invocations": "--invocations", "BLAS": "--blas", "NoDGEMM": "--no-dgemm", "DGEMMSpace": "--dgemm-space",
		"DGEMMBudget": "--dgemm-budget", "DNN": "--dnn", "Invoker": "--in-process", "MaxMemory": "--max-memory",
	}, fixes: map[string]string{"Invoker": "drop --in-process"}},
}

// Invalid is a library's refusal of its options (measure's Config,
// dnnrun's and roofs' Options) in the flags' words, with the way forward
// where there is one.
func Invalid(e *badfield.Error) string {
	w := invalidWords[e.Kind]
	var flags []string
	for _, f := range e.Fields {
		fl, ok := w.flags[f]
		if !ok {
			return e.Err.Error()
		}
		flags = append(flags, fl)
	}
	msg := strings.Join(flags, " and ") + w.sep + e.Err.Error()
	if errors.Is(e.Err, dnnbench.ErrProblem) {
		msg += " (not an experiment either; 'rprof dnn bench -h' lists them)"
	}
	for _, f := range e.Fields {
		if fix := w.fixes[f]; fix != "" {
			return msg + "; " + fix
		}
	}
	return msg
}

// Exclusion says which of the flags given exclude each other.
func Exclusion(e *measure.ExclusionError) string {
	if e.Events {
		return fmt.Sprintf("-e events are counted by --count %s; --count %s counts W and Q only", measure.DefaultBackend, e.Backend)
	}
	return fmt.Sprintf("--count %s counts W and Q: analytic --work and --traffic exclude it", e.Backend)
}

// gpuFix is the remedy for the GPU measurement's typed errors.
func gpuFix(err error) string {
	var ue *gpu.UnsupportedError
	switch {
	case errors.Is(err, cuda.ErrNoDriver):
		return "install NVIDIA's driver (it brings libcuda.so.1; in a container, start it with the GPU and its driver, e.g. docker run --gpus all)"
	case errors.Is(err, cuda.ErrNoDevice):
		return "no GPU is visible to this process: 'nvidia-smi' lists the GPUs; check CUDA_VISIBLE_DEVICES"
	case errors.As(err, &ue):
		return "run on an Ampere (A100) or later GPU"
	}
	return cuptiFix(err)
}

// ProfilingForAdmins is the remedy where the driver keeps a GPU's
// counters for administrators, said alike by run --gpu and doctor.
const ProfilingForAdmins = "run as root, or load the nvidia module with NVreg_RestrictProfilingToAdminUsers=0 (NVIDIA's ERR_NVGPUCTRPERM page)"

// gpuTiers say why no GPU tier above the one that works does, by
// doctor.GPU.Blocked ("": tier a is possible), and the way forward.
var gpuTiers = map[string]string{
	"": "possible: CUPTI and the NVPW host library are here and the counters are not kept from rprof; " +
		"whether the driver hands them out shows when rprof run --gpu runs the range profiler",
	doctor.GPUNoDriver: "no kernel can be recorded without a driver and a device; 'rprof import ncu' places an Nsight Compute report made elsewhere (tier b)",
	doctor.GPUNoCUPTI:  "rprof run --gpu needs CUPTI; 'rprof import ncu' places an Nsight Compute report (tier b)",
	doctor.GPUNoNVPerf: cupti.ProfilerNeeds + ", which needs the NVPW host library (libnvperf_host.so) beside libcupti; 'rprof import ncu' places an Nsight Compute report (tier b)",
	doctor.GPUAdminOnly: cupti.ProfilerNeeds + ", whose counters the driver keeps for administrators here (RmProfilingAdminOnly: 1): " +
		ProfilingForAdmins,
}

// GPUTier is doctor's line on the GPU tier of a checked GPU: why no tier
// above the one that works does, and what would make it work.
func GPUTier(g doctor.GPU) string {
	why := gpuTiers[g.Blocked]
	if g.Blocked == doctor.GPUNoNVPerf && g.AdminOnly != nil && *g.AdminOnly {
		why += "; counters are restricted to administrators here, which tier a and 'rprof import ncu' (tier b) need"
	}
	return why
}

// cuptiFix is the remedy for rprof run --gpu's typed errors.
func cuptiFix(err error) string {
	var ue *cupti.UnavailableError
	switch {
	case errors.Is(err, cupti.ErrNotFound):
		return "install CUDA's CUPTI (it comes with the CUDA toolkit; Debian: libcupti11.8; pip: nvidia-cuda-cupti-cu12), or name libcupti.so with RPROF_CUPTI_LIB"
	case errors.Is(err, cupti.ErrInsufficientPrivileges):
		return ProfilingForAdmins
	case errors.Is(err, cupti.ErrNoCUDA):
		return "CMD must be a CUDA program that uses the GPU ('rprof doctor' says whether the driver sees one)"
	case errors.As(err, &ue) && ue.Reason == cupti.ReasonTooOld:
		return "install the CUPTI of your CUDA toolkit (9.0 or later) and name it with RPROF_CUPTI_LIB"
	case errors.As(err, &ue) && ue.Reason != "":
		return "name a working libcupti.so with RPROF_CUPTI_LIB"
	}
	return ""
}

// qemuFix says which QEMU to install when the one found cannot load
// rprof's plugin.
func qemuFix(e *measure.UnsupportedQEMUError) string {
	const dynamic = "install a dynamically linked qemu-user built with plugins (Debian 12 or Ubuntu 24.04: apt-get install qemu-user; Debian 13 ships only a static one) and name it with --qemu PATH or " + measure.QEMUEnv
	switch e.Reason {
	case measure.QEMUStatic, measure.QEMUNoPlugins:
		return dynamic
	}
	return "install qemu-user of a version rprof supports (" + measure.SupportedQEMU() + ") and name it with --qemu PATH or " + measure.QEMUEnv + " if it is not first in PATH"
}

// EmulationCost is what counting under QEMU costs, as run's help and the
// ways forward say it (docs/emulate.md has the figures).
const EmulationCost = "measured: 7-40x slower than native for memory-bound and mixed code, 95-340x for dense FMA code"

// The remedies for refused counting, one wording for the doctor, events and
// the advice on errors. rprof counts per-process events in user mode when
// kernel mode is refused, so perf_event_paranoid=2 is enough for them;
// levels above 2 refuse only on kernels with the Debian, Ubuntu or Android
// restriction patch (an upstream 6.18 kernel counts user mode at 3).
const (
	fixPerProcess = "sysctl kernel.perf_event_paranoid=2 (per-process counting in user mode; 1 counts kernel mode too), or setcap cap_perfmon+ep $(command -v rprof)"
	fixSystemWide = "setcap cap_perfmon+ep $(command -v rprof), or sysctl kernel.perf_event_paranoid=0, or run as root"
)

// Problem is the remedy of a problem pmu found: giving W analytically
// where the CPU cannot count it, then the catalogue's own for this CPU
// when it has one, else the one for its code; "" when nothing needs doing.
func Problem(pr pmu.Problem) string {
	if pr.AnalyticWork {
		fix := "count W analytically (rprof run --work)"
		if pr.Fix != "" {
			fix += ", or " + pr.Fix
		}
		return fix
	}
	if pr.Fix != "" {
		return pr.Fix
	}
	switch pr.Code {
	case pmu.ProblemNoPMU:
		if pr.VM {
			return vmPMUFix(pr.Hypervisor)
		}
		return "use a kernel built with perf events support for this CPU (CONFIG_PERF_EVENTS and the CPU's PMU driver)"
	case pmu.ProblemUnsupportedCPU:
		return "count W and Q analytically (rprof run --work, --traffic), or run on a supported CPU (rprof events lists them in docs/events.md)"
	case pmu.ProblemNoTrafficPMU:
		return "use a kernel whose uncore driver supports this CPU, on bare metal (VMs do not expose memory-controller PMUs)"
	case pmu.ProblemUnverified:
		return "check the figure against a kernel whose FLOPs and bytes are known before trusting it"
	case pmu.ProblemMultiplexed:
		if pr.SMTCounters > 0 {
			return fmt.Sprintf("disable SMT (echo off > /sys/devices/system/cpu/smt/control) for %d counters per core", pr.SMTCounters)
		}
	case pmu.ProblemEncode:
		return "check that the sysfs tree is complete (format/ files of the PMU)"
	case pmu.ProblemNMIWatchdog:
		return "sysctl kernel.nmi_watchdog=0"
	case pmu.ProblemParanoid:
		if pr.SystemWide {
			return fixSystemWide
		}
		return fixPerProcess
	case doctor.ProblemBPF:
		return "setcap cap_bpf,cap_perfmon+ep $(command -v rprof), or run as root"
	case pmu.ProblemProbe:
		switch {
		case errors.Is(pr.Err, pmu.ErrPermission) && pr.SystemWide:
			return fixSystemWide
		case errors.Is(pr.Err, pmu.ErrPermission):
			return fixPerProcess
		case errors.Is(pr.Err, pmu.ErrNotSupported):
			return "use a kernel whose perf driver supports this CPU (rprof events shows the encoding tried)"
		}
	}
	// Kernel-alias problems need nothing: rprof encodes the event itself.
	return ""
}

// ProblemLine is a problem with its remedy on one line.
func ProblemLine(pr pmu.Problem) string {
	if fix := Problem(pr); fix != "" {
		return pr.What + "; fix: " + fix
	}
	return pr.What
}

// vmPMUFix is the setting that gives a VM a virtual PMU, for the hypervisor
// named by DMI sys_vendor or detected otherwise ("" when unknown: all of
// them). A virtual PMU gives core events (W) only: hypervisors generally do
// not expose memory-controller PMUs, so Q needs bare metal.
func vmPMUFix(sysVendor string) string {
	kvm := "KVM/libvirt: <cpu mode='host-passthrough'> with <pmu state='on'/> in the domain XML; QEMU: -cpu host,pmu=on"
	vmware := "VMware: enable \"Virtualize CPU performance counters\" in the VM's CPU settings"
	cloud := "cloud: use a bare-metal instance type (e.g. AWS *.metal)"
	const uncore = " (this gives W; DRAM traffic Q needs bare metal, as VMs usually get no memory-controller PMU)"
	v := strings.ToLower(sysVendor)
	switch {
	case strings.Contains(v, "qemu") || strings.Contains(v, "kvm") || strings.Contains(v, "red hat"):
		return kvm + uncore
	case strings.Contains(v, "vmware"):
		return vmware + uncore
	case strings.Contains(v, "microsoft") || strings.Contains(v, "hyper-v"):
		return "Hyper-V/Azure: run on bare metal or a VM size that exposes a virtual PMU" + uncore
	case strings.Contains(v, "amazon") || strings.Contains(v, "google"):
		return cloud
	}
	return "give the VM a virtual PMU: " + kvm + "; " + vmware + "; " + cloud + uncore
}

// ErrQEMUUnchecked: the doctor read a captured tree, so whether the
// machine it came from has a usable QEMU is unknown.
var ErrQEMUUnchecked = errors.New("not checked (a captured tree): the machine needs a qemu-user rprof supports")

// Example is what the doctor's ways forward measure, as the README's
// first session does: the checkout's TRIAD kernel, 20 passes less a run of
// one (--overhead), which takes the set-up of its arrays with it, so that
// T, W and Q are 19 passes' (2 FLOP and 24 bytes per element each).
var Example = struct {
	Target, Flags []string
	Work, Traffic string
}{[]string{"./examples/triad", "20000000", "20"}, []string{"--overhead", "./examples/triad 20000000 1"}, "7.6e8", "9.12e9"}

// WaysForward lists every way to measure without counting W and Q, in one
// wording for rprof doctor and rprof run's refusal: the fix of the
// problems (a PMU), counting by emulation, the work and traffic given,
// software events. target is the command to measure and flags the other
// flags of run to give with it (--overhead, --json...); work and traffic
// the figures to give for it ("" for placeholders); qemuErr why QEMU
// cannot be used here, nil when it can.
func WaysForward(target, flags []string, work, traffic string, qemuErr error) []render.Way {
	cmd := "-- " + shellJoin(target)
	if len(flags) > 0 {
		cmd = shellJoin(flags) + " " + cmd
	}
	if work == "" {
		work, traffic = "FLOPS", "BYTES"
	}
	emulated := render.Way{What: "count by emulation: W exact, Q from a cache model of this machine's caches (QEMU user mode; " + EmulationCost + ")",
		Command: "rprof run --count emulate " + cmd}
	if qemuErr != nil {
		emulated.Needs = qemuErr.Error()
		if fix := Fix(qemuErr); fix != "" {
			emulated.Needs += "; " + fix
		}
	}
	return []render.Way{
		{What: "fix the problems above (a virtual PMU gives W; Q needs bare metal), then count", Command: "rprof run " + cmd},
		emulated,
		{What: "give the work and traffic you computed: T is measured, the point is marked analytic", Command: "rprof run --work " + work + " --traffic " + traffic + " " + cmd},
		{What: "count software events only: times and events, no roofline point", Command: "rprof run -e task-clock,page-faults,context-switches " + cmd},
	}
}

// shellJoin spells a command line as a POSIX shell reads it back.
func shellJoin(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		if a != "" && strings.Trim(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%+=:,./_-") == "" {
			q[i] = a
		} else {
			q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(q, " ")
}

// Bystander is the line of a rank that cannot take part in its node's
// traffic-owner election (cluster.Run's Bystander): why, what it counts,
// and the fix.
func Bystander(err error, id cluster.Identity) string {
	var mixed *cluster.MixedUsersError
	if errors.As(err, &mixed) {
		return fmt.Sprintf("rprof run: rank %d: %v: this rank counts W and T, and takes no part in electing node %s's traffic owner (run every rank as one user)", id.Rank, err, id.Node)
	}
	return fmt.Sprintf("rprof run: rank %d: %v: this rank counts W and T; nobody counts node %s's DRAM traffic (set --lock-dir)", id.Rank, err, id.Node)
}
