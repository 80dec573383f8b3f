package render

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/rprof/rprof/doctor"
	"github.com/rprof/rprof/internal/unit"
	"github.com/rprof/rprof/machine"
	"github.com/rprof/rprof/pmu"
	"github.com/rprof/rprof/roofline"
)

// BLASCheck is whether the BLAS that `rprof roofs` would load is there.
type BLASCheck struct {
	Checked bool   `json:"checked"`
	Usable  bool   `json:"usable"`
	Library string `json:"library,omitempty"`
	Path    string `json:"path,omitempty"`
	Version string `json:"version,omitempty"`
	Error   string `json:"error,omitempty"`
}

// DoctorDoc is the JSON of rprof doctor.
type DoctorDoc struct {
	Machine        string       `json:"machine"` // "this machine" or the trees read
	Probed         bool         `json:"probed"`
	CPU            CPUJSON      `json:"cpu"`
	VM             bool         `json:"vm"`
	Hypervisor     string       `json:"hypervisor,omitempty"`
	PMUs           []string     `json:"pmus"`
	HardwarePMU    bool         `json:"hardware_pmu"`
	Paranoid       *int         `json:"perf_event_paranoid"`
	ParanoidAllows string       `json:"paranoid_allows,omitempty"`
	CapEff         string       `json:"cap_eff,omitempty"`
	Capabilities   []string     `json:"capabilities"`
	NMIWatchdog    *int         `json:"nmi_watchdog"`
	Work           CheckJSON    `json:"work"`
	Traffic        CheckJSON    `json:"traffic"`
	Uprobes        CheckJSON    `json:"uprobes"`
	Regions        CheckJSON    `json:"regions"`
	BLAS           BLASCheck    `json:"blas"`
	Caches         CachesJSON   `json:"caches"`
	Roofs          doctor.Roofs `json:"roofs"`
	GPU            GPUCheck     `json:"gpu"`
	Usable         bool         `json:"usable"`
	Problems       []string     `json:"problems"`
	// WaysForward: every way to measure anyway, when W or Q cannot be
	// counted.
	WaysForward []Way         `json:"ways_forward,omitempty"`
	Details     []ProblemJSON `json:"problem_details"`
}

// CachesJSON is where the cache sizes come from: what rprof roofs places
// its bandwidth levels by.
type CachesJSON struct {
	// Source is "sysfs", "cpuid" or "" (none: roofs measures them).
	Source string `json:"source"`
	// Complete says every level is listed; otherwise roofs finds the
	// levels past the last one from its sweep.
	Complete bool        `json:"complete"`
	Levels   []CacheJSON `json:"levels"`
	Notes    []string    `json:"notes"`
	// Effective are the sizes the last rprof roofs on this machine
	// measured or confirmed (its document's caches), what its roofs and
	// the emulation's cache model use; EffectiveFrom names that document.
	// Absent when there is none (or on a captured tree).
	Effective     []roofline.CacheLevel `json:"effective,omitempty"`
	EffectiveFrom string                `json:"effective_from,omitempty"`
}

// effectiveText is the doctor's line of effective sizes, e.g. "1 thread:
// L1 48 KiB sysfs, L3 72 MiB measured (declared 32 MiB sysfs)".
func effectiveText(levels []roofline.CacheLevel) string {
	var scopes []string
	for i, c := range levels {
		s := fmt.Sprintf("%s %s %s", c.Level, unit.Bytes(c.Bytes), c.Source)
		if c.DeclaredBytes > 0 && (c.DeclaredBytes != c.Bytes || c.DeclaredSource != c.Source) {
			s += fmt.Sprintf(" (declared %s %s)", unit.Bytes(c.DeclaredBytes), c.DeclaredSource)
		}
		if i == 0 || c.Threads != levels[i-1].Threads {
			scopes = append(scopes, fmt.Sprintf("%s: %s", Plural(c.Threads, "thread"), s))
			continue
		}
		scopes[len(scopes)-1] += ", " + s
	}
	return strings.Join(scopes, "; ")
}

// CacheJSON is one cache level and type: the size of one instance and how
// many instances serve the online CPUs.
type CacheJSON struct {
	Level     int    `json:"level"`
	Type      string `json:"type"`
	Bytes     int64  `json:"bytes"`
	Instances int    `json:"instances"`
}

func CachesDoc(c machine.Caches) CachesJSON {
	doc := CachesJSON{Source: c.Source, Complete: c.Complete, Levels: []CacheJSON{}, Notes: c.Notes}
	for _, inst := range c.Instances {
		i := slices.IndexFunc(doc.Levels, func(l CacheJSON) bool {
			return l.Level == inst.Level && l.Type == inst.Type && l.Bytes == inst.SizeBytes
		})
		if i < 0 {
			doc.Levels = append(doc.Levels, CacheJSON{Level: inst.Level, Type: inst.Type, Bytes: inst.SizeBytes})
			i = len(doc.Levels) - 1
		}
		doc.Levels[i].Instances++
	}
	if doc.Notes == nil {
		doc.Notes = []string{}
	}
	return doc
}

// cachesText is the doctor's caches line, e.g. "sysfs: L1d 32 KiB x2,
// L1i 32 KiB x2, L2 1 MiB x2, L3 32 MiB x1".
func cachesText(c CachesJSON) string {
	var levels []string
	for _, l := range c.Levels {
		suffix := map[string]string{"Data": "d", "Instruction": "i"}[l.Type]
		levels = append(levels, fmt.Sprintf("L%d%s %s x%d", l.Level, suffix, unit.Bytes(l.Bytes), l.Instances))
	}
	var s string
	switch {
	case c.Source == "":
		s = "unknown: rprof roofs finds every level from its bandwidth sweep"
	case !c.Complete:
		s = c.Source + ": " + strings.Join(levels, ", ") + "; rprof roofs finds the levels past these from its sweep"
	default:
		s = c.Source + ": " + strings.Join(levels, ", ")
	}
	for _, n := range c.Notes {
		s += "\n\t  " + n
	}
	if len(c.Effective) > 0 {
		s += "\n\t  effective, as rprof roofs measured them (" + c.EffectiveFrom + "): " + effectiveText(c.Effective)
	}
	return s
}

type CheckJSON struct {
	Usable bool   `json:"usable"`
	Probed bool   `json:"probed"`
	Detail string `json:"detail,omitempty"`
	Error  string `json:"error,omitempty"`
}

func CheckDoc(c pmu.Check) CheckJSON {
	j := CheckJSON{Usable: c.Usable, Probed: c.Probed, Detail: c.Detail}
	if c.Err != nil {
		j.Error = c.Err.Error()
	}
	return j
}

func WriteDoctorText(w io.Writer, doc DoctorDoc, d pmu.Diagnosis, fix func(pmu.Problem) string) error {
	var b strings.Builder
	how := "events opened once to check"
	if !doc.Probed {
		how = "read only: nothing can be opened on a captured tree"
	}
	fmt.Fprintf(&b, "rprof doctor: %s (%s)\n\n", doc.Machine, how)
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "CPU\t%s\n", CPULine(d.Plan))
	vm := "no"
	if doc.VM {
		vm = "yes"
		if doc.Hypervisor != "" {
			vm += " (" + doc.Hypervisor + ")"
		}
	}
	fmt.Fprintf(tw, "VM\t%s\n", vm)
	pmus := strings.Join(doc.PMUs, ", ")
	if !doc.HardwarePMU {
		pmus += " (no hardware PMU)"
	}
	fmt.Fprintf(tw, "PMUs\t%s\n", pmus)
	if doc.Paranoid != nil {
		fmt.Fprintf(tw, "perf_event_paranoid\t%d: %s\n", *doc.Paranoid, doc.ParanoidAllows)
	} else {
		fmt.Fprintf(tw, "perf_event_paranoid\tunknown (no sys/kernel/perf_event_paranoid)\n")
	}
	switch {
	case doc.CapEff == "":
		fmt.Fprintf(tw, "capabilities\tunknown (no self/status)\n")
	case len(doc.Capabilities) == 0:
		fmt.Fprintf(tw, "capabilities\tnone of CAP_PERFMON, CAP_SYS_ADMIN, CAP_BPF (CapEff %s)\n", doc.CapEff)
	default:
		fmt.Fprintf(tw, "capabilities\t%s (CapEff %s)\n", strings.Join(doc.Capabilities, ", "), doc.CapEff)
	}
	switch {
	case doc.NMIWatchdog == nil:
		fmt.Fprintf(tw, "NMI watchdog\tunknown\n")
	case *doc.NMIWatchdog > 0:
		fmt.Fprintf(tw, "NMI watchdog\ton (holds a core counter when a hardware PMU exists)\n")
	default:
		fmt.Fprintf(tw, "NMI watchdog\toff\n")
	}
	tw.Flush()

	b.WriteString("\n")
	tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "FP work (W)\t%s\n", CheckText(doc.Work))
	fmt.Fprintf(tw, "DRAM traffic (Q)\t%s\n", CheckText(doc.Traffic))
	fmt.Fprintf(tw, "eBPF uprobes\t%s\n", CheckText(doc.Uprobes))
	fmt.Fprintf(tw, "regions (--region)\t%s\n", CheckText(doc.Regions))
	blasLine := blasText(doc.BLAS)
	if len(doc.Roofs.BLASEnv) > 0 {
		blasLine += "; forced by " + strings.Join(doc.Roofs.BLASEnv, " ") + " (the DGEMM roof uses those kernels: unset them, or choose the kernel set with rprof roofs --blas-arch NAME)"
	}
	fmt.Fprintf(tw, "BLAS\t%s\n", blasLine)
	fmt.Fprintf(tw, "caches\t%s\n", cachesText(doc.Caches))
	kernelsLine, clockLine, cpusLine := roofsText(doc.Roofs)
	fmt.Fprintf(tw, "vector kernels\t%s\n", kernelsLine)
	fmt.Fprintf(tw, "clock\t%s\n", clockLine)
	fmt.Fprintf(tw, "CPUs\t%s\n", cpusLine)
	writeGPUCheck(tw, doc.GPU)
	tw.Flush()

	WriteProblems(&b, d.Problems, fix)
	if doc.Usable {
		b.WriteString("\nCounting is usable: rprof run can measure W and Q here.\n")
	} else {
		b.WriteString("\nCounting is not usable here: rprof run cannot measure " + missingFigures(doc) + " (see the problems above).\n")
		WriteWays(&b, doc.WaysForward)
		b.WriteString("(The commands measure the TRIAD kernel of rprof's checkout, after make -C examples, as README.md's first session does: --overhead subtracts a run of one pass, and with it the set-up of the arrays, so T, W and Q are the other 19 passes'.)\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func CheckText(c CheckJSON) string {
	if !c.Usable {
		s := "no: " + c.Error
		if c.Detail != "" {
			s += " (" + c.Detail + ")"
		}
		return s
	}
	s := "yes (probed)"
	if !c.Probed {
		s = "yes by the tree (not probed: captured tree)"
	}
	if c.Detail != "" {
		s += ": " + c.Detail
	}
	return s
}

func blasText(b BLASCheck) string {
	switch {
	case !b.Checked:
		return "not checked (captured tree)"
	case !b.Usable:
		return "no: " + b.Error
	}
	s := b.Library
	if b.Version != "" {
		s += " " + b.Version
	}
	return "yes: " + s + " (" + b.Path + ")"
}

func missingFigures(doc DoctorDoc) string {
	switch {
	case !doc.Work.Usable && !doc.Traffic.Usable:
		return "FP work W or DRAM traffic Q"
	case !doc.Work.Usable:
		return "FP work W"
	}
	return "DRAM traffic Q"
}

// roofsText gives the roofs lines of the doctor's table.
func roofsText(r doctor.Roofs) (kernelsLine, clockLine, cpusLine string) {
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

// Way is one way to measure when W or Q cannot be counted: what it gives,
// and a command line that takes it.
type Way struct {
	What    string `json:"what"`
	Command string `json:"command"`
	// Needs says what must be done first, "" when nothing.
	Needs string `json:"needs,omitempty"`
}

// WriteWays writes the ways forward as a numbered list.
func WriteWays(w io.Writer, ways []Way) {
	fmt.Fprintln(w, "\nWays forward:")
	for i, wy := range ways {
		fmt.Fprintf(w, "  %d. %s:\n       %s\n", i+1, wy.What, wy.Command)
		if wy.Needs != "" {
			fmt.Fprintf(w, "     needs: %s\n", wy.Needs)
		}
	}
}

// GPUCheck is the doctor's GPU section (doctor.GPU, its errors with
// their fixes).
type GPUCheck struct {
	Probed bool `json:"probed"`
	// Module is the NVIDIA kernel module's version line, "" when none is
	// loaded.
	Module string `json:"module"`
	// CountersAdminOnly: RmProfilingAdminOnly; null when not said.
	CountersAdminOnly *bool    `json:"counters_admin_only"`
	Driver            string   `json:"driver,omitempty"`
	DriverError       string   `json:"driver_error,omitempty"`
	Devices           []string `json:"devices"`
	CUPTI             string   `json:"cupti,omitempty"`
	CUPTIVersion      int      `json:"cupti_version,omitempty"`
	CUPTIError        string   `json:"cupti_error,omitempty"`
	// Tier is the kernel measurement that works ("a", "c"; "" none), Why
	// why not the one above (for "a": that it is possible, not proven).
	Tier string `json:"tier"`
	Why  string `json:"why,omitempty"`
}

func writeGPUCheck(w io.Writer, g GPUCheck) {
	module := "no NVIDIA kernel module loaded"
	if g.Module != "" {
		module = g.Module
	}
	switch {
	case !g.Probed:
		fmt.Fprintf(w, "GPU driver\tnot probed (captured tree); %s\n", module)
	case g.DriverError != "":
		fmt.Fprintf(w, "GPU driver\tno: %s\n", g.DriverError)
	default:
		fmt.Fprintf(w, "GPU driver\tCUDA %s; %s: %s\n", g.Driver, module, strings.Join(g.Devices, ", "))
	}
	counters := "not said (no RmProfilingAdminOnly in driver/nvidia/params)"
	if g.Module == "" && g.CountersAdminOnly == nil {
		counters = "not said (" + module + ")"
	}
	if c := g.CountersAdminOnly; c != nil && *c {
		counters = "administrators only (RmProfilingAdminOnly: 1)"
	} else if c != nil {
		counters = "all users (RmProfilingAdminOnly: 0)"
	}
	fmt.Fprintf(w, "GPU counters\t%s\n", counters)
	switch {
	case !g.Probed:
		fmt.Fprintf(w, "CUPTI\tnot checked (captured tree)\n")
		fmt.Fprintf(w, "GPU kernels\tnot checked (captured tree)\n")
		return
	case g.CUPTIError != "":
		fmt.Fprintf(w, "CUPTI\tno: %s\n", g.CUPTIError)
	default:
		fmt.Fprintf(w, "CUPTI\t%s (API version %d)\n", g.CUPTI, g.CUPTIVersion)
	}
	if g.Tier == "" {
		fmt.Fprintf(w, "GPU kernels\tnone: %s\n", g.Why)
		return
	}
	what := "kernel times"
	if g.Tier == "a" {
		what = "kernel times with W and Q"
	}
	fmt.Fprintf(w, "GPU kernels\ttier %s, %s (rprof run --gpu): %s\n", g.Tier, what, g.Why)
}

// WriteRunDiagnosis prints what stops counting here, with each problem's
// fix, in the doctor's words.
func WriteRunDiagnosis(w io.Writer, d pmu.Diagnosis, fix func(pmu.Problem) string) {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "FP work (W)\t%s\n", CheckText(CheckDoc(d.Work)))
	fmt.Fprintf(tw, "DRAM traffic (Q)\t%s\n", CheckText(CheckDoc(d.Traffic)))
	tw.Flush()
	WriteProblems(&b, d.Problems, fix)
	io.WriteString(w, b.String())
}

// capNames are the capabilities that decide what rprof may count.
var capNames = []struct {
	bit  uint
	name string
}{{21, "CAP_SYS_ADMIN"}, {38, "CAP_PERFMON"}, {39, "CAP_BPF"}}

// NewDoctorDoc is the document of a doctor's report, of machine ("":
// this machine, probed). The BLAS check's fix, the problems' lines and
// fixes and the ways forward are the command's to add.
func NewDoctorDoc(rep doctor.Report, machine string) DoctorDoc {
	d := rep.Diagnosis
	doc := DoctorDoc{
		Machine:     "this machine",
		Probed:      d.Live,
		CPU:         CPUDoc(d.Plan),
		VM:          d.VM,
		Hypervisor:  d.Hypervisor,
		PMUs:        d.PMUs,
		HardwarePMU: d.HardwarePMU,
		Work:        CheckDoc(d.Work),
		Traffic:     CheckDoc(d.Traffic),
		Uprobes:     CheckDoc(rep.Uprobes),
		Regions:     CheckDoc(rep.Regions),
		BLAS:        BLASCheck{Checked: rep.BLAS.Checked, Usable: rep.BLAS.Usable, Library: rep.BLAS.Library, Path: rep.BLAS.Path, Version: rep.BLAS.Version},
		Caches:      CachesDoc(rep.Caches),
		Roofs:       rep.Roofs,
		Usable:      d.Usable(),
	}
	if machine != "" {
		doc.Machine = machine
	}
	if d.ParanoidKnown {
		doc.Paranoid = &d.Paranoid
		doc.ParanoidAllows = pmu.ParanoidAllows(d.Paranoid)
	}
	doc.Capabilities = []string{}
	if d.CapsKnown {
		doc.CapEff = fmt.Sprintf("%#x", d.CapEff)
		for _, c := range capNames {
			if d.CapEff&(1<<c.bit) != 0 {
				doc.Capabilities = append(doc.Capabilities, c.name)
			}
		}
	}
	if d.NMIWatchdog >= 0 {
		doc.NMIWatchdog = &d.NMIWatchdog
	}
	if doc.PMUs == nil {
		doc.PMUs = []string{}
	}
	return doc
}
