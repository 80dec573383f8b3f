package advice

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/rprof/rprof/cluster"
	"github.com/rprof/rprof/dnnbench"
	"github.com/rprof/rprof/dnnrun"
	"github.com/rprof/rprof/doctor"
	"github.com/rprof/rprof/gpu/cupti"
	"github.com/rprof/rprof/internal/badfield"
	"github.com/rprof/rprof/measure"
	"github.com/rprof/rprof/pmu"
	"github.com/rprof/rprof/roofline"
	"github.com/rprof/rprof/roofs"
)

func TestAdviseFlagsAddsTheFlagNamingRemedyByCode(t *testing.T) {
	flags := []roofline.Flag{
		{Code: roofline.FlagBusyMachine, Message: "the thread scope it chose (1) too small"},
		{Code: roofline.FlagHybridScope, Message: "its roofs are the mix's"},
		{Code: roofline.FlagAboveRoof, Message: "above its roof"},
		{Code: roofline.FlagWideTime, Message: "repetition 3 lies far from the others"},
	}
	Flags(flags)
	want := []string{
		"the thread scope it chose (1) too small (--threads N to choose)",
		"its roofs are the mix's (--threads to choose)",
		"above its roof",
		"repetition 3 lies far from the others (more repetitions narrow the interval: --repeat N, or --ci 5% to repeat until it is that narrow; " +
			"a repetition far from the others was disturbed: rerun on a quieter machine; where its overhead run was the far one, a shorter, steadier --overhead command adds less noise)",
	}
	for i, f := range flags {
		if f.Message != want[i] {
			t.Errorf("%s: %q, want %q", f.Code, f.Message, want[i])
		}
	}
	for code, fix := range flagFixes {
		if !strings.Contains(fix, "--") {
			t.Errorf("the remedy of %s, %q, names no flag: it belongs in the library's message", code, fix)
		}
	}
}

func TestAdviseRoofsNamesTheFlagsOfSkipsAndFlags(t *testing.T) {
	rep := &roofs.Report{
		Roofs: roofline.Roofs{
			Flags: []roofline.Flag{{Code: roofline.FlagDGEMMSkipped, Message: "DGEMM skipped: no BLAS library found; install one: " + roofs.BLASHint}},
			DGEMM: &roofline.DGEMM{Flags: []roofline.Flag{{Code: roofline.FlagDGEMMBudget, Message: "the search's 1m budget ended it"}}},
		},
		Skipped: []roofs.Skip{{Harness: "DGEMM", Why: "no BLAS library found; install one: " + roofs.BLASHint, Code: roofs.SkipNoBLAS}},
	}
	Roofs(rep)
	if got := rep.Skipped[0].Why; !strings.HasSuffix(got, roofs.BLASHint+" (or pass --blas PATH)") {
		t.Errorf("skip: %q, want the --blas remedy after the package", got)
	}
	if got := rep.Roofs.Flags[0].Message; !strings.HasSuffix(got, "(or pass --blas PATH)") {
		t.Errorf("dgemm-skipped flag: %q, want the --blas remedy", got)
	}
	if got := rep.Roofs.DGEMM.Flags[0].Message; !strings.Contains(got, "--dgemm-budget") {
		t.Errorf("dgemm-budget flag: %q, want --dgemm-budget named", got)
	}
	notAsked := &roofs.Report{Skipped: []roofs.Skip{{Harness: "DGEMM", Why: "not asked for", Code: roofs.SkipNoDGEMM}}}
	Roofs(notAsked)
	if got := notAsked.Skipped[0].Why; got != "not asked for (--no-dgemm)" {
		t.Errorf("skip: %q, want %q", got, "not asked for (--no-dgemm)")
	}
}

func TestSlowDGEMMsRemedyNamesBlasArch(t *testing.T) {
	tests := []struct {
		kernels []string
		want    string
	}{
		{[]string{"SkylakeX"}, "(rerun with --blas-arch SkylakeX)"},
		{[]string{"skx", "zen4", "zen3"}, "(rerun with --blas-arch skx, or zen4 or zen3)"},
		{nil, "(--dgemm-space seed searches larger shapes; --blas PATH names another library)"},
	}
	for _, tt := range tests {
		rep := &roofs.Report{
			Roofs:        roofline.Roofs{DGEMM: &roofline.DGEMM{Flags: []roofline.Flag{{Code: roofline.FlagDGEMMSlow, Message: "OpenBLAS chose its Haswell kernels"}}}},
			DGEMMKernels: tt.kernels,
		}
		Roofs(rep)
		if got := rep.Roofs.DGEMM.Flags[0].Message; got != "OpenBLAS chose its Haswell kernels "+tt.want {
			t.Errorf("kernels %q: %q, want the remedy %q", tt.kernels, got, tt.want)
		}
	}
}

// The command gives every pmu problem its remedy from the code and typed
// fields; the catalogue's own remedy wins.
func TestProblemFixComesFromTheCode(t *testing.T) {
	tests := []struct {
		name string
		pr   pmu.Problem
		want []string // substrings; none: no remedy
	}{
		{"KVM guest", pmu.Problem{Code: pmu.ProblemNoPMU, VM: true, Hypervisor: "KVM"}, []string{"<pmu state='on'/>", "bare metal"}},
		{"QEMU guest", pmu.Problem{Code: pmu.ProblemNoPMU, VM: true, Hypervisor: "QEMU"}, []string{"-cpu host,pmu=on"}},
		{"VMware guest", pmu.Problem{Code: pmu.ProblemNoPMU, VM: true, Hypervisor: "VMware"}, []string{"Virtualize CPU performance counters"}},
		{"Hyper-V guest", pmu.Problem{Code: pmu.ProblemNoPMU, VM: true, Hypervisor: "Hyper-V"}, []string{"Hyper-V"}},
		{"unknown hypervisor", pmu.Problem{Code: pmu.ProblemNoPMU, VM: true}, []string{"AWS *.metal", "<pmu state='on'/>"}},
		{"bare metal without PMU", pmu.Problem{Code: pmu.ProblemNoPMU}, []string{"CONFIG_PERF_EVENTS"}},
		{"per-process paranoid", pmu.Problem{Code: pmu.ProblemParanoid}, []string{"perf_event_paranoid=2"}},
		{"system-wide paranoid", pmu.Problem{Code: pmu.ProblemParanoid, SystemWide: true}, []string{"cap_perfmon", "perf_event_paranoid=0"}},
		{"probe refused per process", pmu.Problem{Code: pmu.ProblemProbe, Err: &pmu.PermissionError{Paranoid: 3}}, []string{"perf_event_paranoid=2"}},
		{"probe refused system-wide", pmu.Problem{Code: pmu.ProblemProbe, SystemWide: true, Err: &pmu.PermissionError{SystemWide: true}}, []string{"perf_event_paranoid=0"}},
		{"probe unsupported", pmu.Problem{Code: pmu.ProblemProbe, Err: pmu.ErrNotSupported}, []string{"kernel"}},
		{"SMT frees counters", pmu.Problem{Code: pmu.ProblemMultiplexed, SMTCounters: 8}, []string{"disable SMT", "8 counters"}},
		{"multiplexed without SMT remedy", pmu.Problem{Code: pmu.ProblemMultiplexed}, nil},
		{"kernel alias needs nothing", pmu.Problem{Code: pmu.ProblemKernelAlias}, nil},
		{"catalogue remedy wins", pmu.Problem{Code: pmu.ProblemECoreUnmeasured, Fix: "taskset -c 0-3"}, []string{"taskset -c 0-3"}},
		{"analytic work", pmu.Problem{Code: pmu.ProblemNoWorkEvent, AnalyticWork: true}, []string{"rprof run --work"}},
		{"analytic work before the catalogue's remedy", pmu.Problem{Code: pmu.ProblemNoWorkEvent, AnalyticWork: true, Fix: "count on a Broadwell or newer machine"},
			[]string{"rprof run --work), or count on a Broadwell"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Problem(tt.pr)
			if len(tt.want) == 0 && got != "" {
				t.Errorf("fix %q, want none", got)
			}
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("fix %q does not say %q", got, w)
				}
			}
		})
	}
}

func TestAdviceAddsTheFixForPMUErrors(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{&pmu.PermissionError{Event: "cas_count_read", SystemWide: true, Paranoid: 2}, "setcap cap_perfmon+ep"},
		{&pmu.PermissionError{Event: "FP_ARITH", Paranoid: 3}, "sysctl kernel.perf_event_paranoid=2"},
		{&pmu.EventError{Event: "instructions", CPU: -1, Err: pmu.ErrNoPMU}, "rprof doctor"},
		{pmu.ErrUnsupportedCPU, "rprof events"},
		{errors.New("plain"), ""},
	}
	for _, tt := range tests {
		got := Line(tt.err)
		if !strings.HasPrefix(got, tt.err.Error()) || strings.Contains(got, "\n") {
			t.Errorf("Line(%v) = %q: want the error first, on one line", tt.err, got)
		}
		switch {
		case tt.want == "" && got != tt.err.Error():
			t.Errorf("Line(%v) = %q, want the error unchanged", tt.err, got)
		case tt.want != "" && (!strings.Contains(got, "; fix: ") || !strings.Contains(got, tt.want)):
			t.Errorf("Line(%v) = %q, want a fix mentioning %q", tt.err, got, tt.want)
		}
	}
}

func TestBystanderNamesTheFixForWhyTheRankStandsBy(t *testing.T) {
	id := cluster.Identity{Rank: 3, Node: "n1"}
	tests := []struct {
		err  error
		want string
	}{
		{&cluster.LockDirError{Dir: "/x", Err: errors.New("not private")}, "rprof run: rank 3: "},
		{&cluster.LockDirError{Dir: "/x", Err: errors.New("not private")}, "nobody counts node n1's DRAM traffic (set --lock-dir)"},
		{&cluster.MixedUsersError{PID: 1, UID: 2, Want: 3}, "takes no part in electing node n1's traffic owner (run every rank as one user)"},
	}
	for _, tt := range tests {
		if got := Bystander(tt.err, id); !strings.Contains(got, tt.want) || !strings.Contains(got, tt.err.Error()) {
			t.Errorf("Bystander(%T) = %q, want it to carry the error and %q", tt.err, got, tt.want)
		}
	}
}

func TestGPUTierSaysWhyNoTierAboveTheOneThatWorks(t *testing.T) {
	yes := true
	tests := []struct {
		name string
		g    doctor.GPU
		want string
	}{
		{"tier a", doctor.GPU{Checked: true, Tier: doctor.TierCounters}, "possible: CUPTI and the NVPW host library are here"},
		{"no NVPW host library", doctor.GPU{Checked: true, Tier: doctor.TierTimes, Blocked: doctor.GPUNoNVPerf},
			cupti.ProfilerNeeds + ", which needs the NVPW host library"},
		{"no NVPW host library, counters for administrators", doctor.GPU{Checked: true, Tier: doctor.TierTimes, Blocked: doctor.GPUNoNVPerf, AdminOnly: &yes},
			"; counters are restricted to administrators here"},
		{"counters for administrators", doctor.GPU{Checked: true, Tier: doctor.TierTimes, Blocked: doctor.GPUAdminOnly, AdminOnly: &yes},
			cupti.ProfilerNeeds + ", whose counters the driver keeps for administrators here (RmProfilingAdminOnly: 1): " + ProfilingForAdmins},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if why := GPUTier(tt.g); !strings.Contains(why, tt.want) || strings.Count(why, "administrators") > 1 {
				t.Errorf("why %q, want %q once", why, tt.want)
			}
		})
	}
}

func TestInvalidWordsEachLibrarysFieldsInItsFlags(t *testing.T) {
	tests := []struct {
		name string
		e    *badfield.Error
		want string
	}{
		{"measure: a field and its value", badfield.New(measure.ErrInvalidConfig, errors.New("-1: must be at least 1"), "Repetition.Repeat"),
			"--repeat -1: must be at least 1"},
		{"measure: a field without a flag says itself what it is about", badfield.New(measure.ErrInvalidConfig, errors.New("region main: not found"), "Counting.Regions"),
			"region main: not found"},
		{"dnnrun: with the way forward", badfield.New(dnnrun.ErrInvalidOptions, errors.New("perf: not a counting mode (pmu or emulate)"), "Count"),
			"--count perf: not a counting mode (pmu or emulate); pmu counts with uprobes and hardware counters, emulate under QEMU"},
		{"dnnrun: the command", badfield.New(dnnrun.ErrInvalidOptions, errors.New("is empty"), "Command"),
			"the command is empty; give the program to run after the flags"},
		{"dnnrun's Threads", badfield.New(dnnrun.ErrInvalidOptions, errors.New("-1: must not be negative"), "Threads"),
			"--threads -1: must not be negative"},
		{"roofs' Threads, the same name: the kind chooses the words", badfield.New(roofs.ErrInvalidOptions, errors.New("want thread counts of 1 or more, got 0"), "Threads"),
			"--threads: want thread counts of 1 or more, got 0"},
		{"roofs: fields that do not go together", badfield.New(roofs.ErrInvalidOptions, errors.New("do not go together"), "Fixed", "Quick"),
			"--fixed and --quick: do not go together"},
		{"roofs: not a problem nor an experiment", badfield.New(roofs.ErrInvalidOptions, fmt.Errorf("conv9: %w", dnnbench.ErrProblem), "DNN"),
			"--dnn: conv9: " + dnnbench.ErrProblem.Error() + " (not an experiment either; 'rprof dnn bench -h' lists them)"},
		{"roofs: the way forward of the second field", badfield.New(roofs.ErrInvalidOptions, errors.New("need worker processes"), "DNN", "Invoker"),
			"--dnn and --in-process: need worker processes; drop --in-process"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Invalid(tt.e); got != tt.want {
				t.Errorf("Invalid = %q, want %q", got, tt.want)
			}
		})
	}
}
