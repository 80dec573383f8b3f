package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/rprof/rprof/cmd/rprof/internal/render"
	"github.com/rprof/rprof/doctor"
	"github.com/rprof/rprof/machine"
	"github.com/rprof/rprof/measure"
	"github.com/rprof/rprof/pmu"
	"github.com/rprof/rprof/roofline"
	"github.com/rprof/rprof/roofs"

	"github.com/rprof/rprof/internal/unit"
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
last rprof roofs here measured or confirmed (what its roofs use), the vector compute kernels this CPU runs (AVX-512, AVX2,
FMA), BLAS kernel variables in the environment (OPENBLAS_CORETYPE,
OPENBLAS_L2_SIZE, BLIS_ARCH_TYPE), the clock source of theoretical peaks
(cpufreq, else measured) and the CPUs allowed (cpuset) against those
online. Each problem comes with its exact fix.

With --sysfs or --procfs it reads a tree captured on another machine;
nothing can be opened there, so checks say "not probed".

Exit status: 0 when both FP work and DRAM traffic can be counted, 1 when
either cannot, 2 for a missing, unreadable or partial tree.

  --json          write the diagnosis as JSON
  --sysfs DIR     root of the sysfs tree (default /sys)
  --procfs DIR    root of the procfs tree (default /proc)
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
	doc := doctorJSON(rep, m)
	if d.Live {
		doc.Caches.Effective, doc.Caches.EffectiveFrom = lastEffectiveCaches(h)
	}
	if !doc.Usable {
		qerr := errQEMUUnchecked
		if d.Live {
			qerr = measure.CheckQEMU(ctx)
		}
		doc.WaysForward = waysForward(exampleTarget, "4e8", "4.8e9", qerr)
	}
	if asJSON {
		err = writeJSON(e.stdout, doc)
	} else {
		err = writeDoctorText(e.stdout, doc, d)
	}
	if err != nil {
		return err
	}
	if !d.Usable() {
		return &exitError{code: exitFailure}
	}
	return nil
}

// blasCheck is whether the BLAS that `rprof roofs` would load is there.
type blasCheck struct {
	Checked bool   `json:"checked"`
	Usable  bool   `json:"usable"`
	Library string `json:"library,omitempty"`
	Path    string `json:"path,omitempty"`
	Version string `json:"version,omitempty"`
	Error   string `json:"error,omitempty"`
}

// blasDoc is the BLAS check with its fix.
func blasDoc(b doctor.BLAS) blasCheck {
	c := blasCheck{Checked: b.Checked, Usable: b.Usable, Library: b.Library, Path: b.Path, Version: b.Version}
	if b.Err != nil {
		c.Error = b.Err.Error() + "; fix: " + roofs.BLASHint + " " + blasFlagFix
	}
	return c
}

// doctorDoc is the JSON of rprof doctor.
type doctorDoc struct {
	Machine        string         `json:"machine"` // "this machine" or the trees read
	Probed         bool           `json:"probed"`
	CPU            render.CPUJSON `json:"cpu"`
	VM             bool           `json:"vm"`
	Hypervisor     string         `json:"hypervisor,omitempty"`
	PMUs           []string       `json:"pmus"`
	HardwarePMU    bool           `json:"hardware_pmu"`
	Paranoid       *int           `json:"perf_event_paranoid"`
	ParanoidAllows string         `json:"paranoid_allows,omitempty"`
	CapEff         string         `json:"cap_eff,omitempty"`
	Capabilities   []string       `json:"capabilities"`
	NMIWatchdog    *int           `json:"nmi_watchdog"`
	Work           checkJSON      `json:"work"`
	Traffic        checkJSON      `json:"traffic"`
	Uprobes        checkJSON      `json:"uprobes"`
	Regions        checkJSON      `json:"regions"`
	BLAS           blasCheck      `json:"blas"`
	Caches         cachesJSON     `json:"caches"`
	Roofs          doctor.Roofs   `json:"roofs"`
	Usable         bool           `json:"usable"`
	Problems       []string       `json:"problems"`
	// WaysForward: every way to measure anyway, when W or Q cannot be
	// counted.
	WaysForward []way                `json:"ways_forward,omitempty"`
	Details     []render.ProblemJSON `json:"problem_details"`
}

// cachesJSON is where the cache sizes come from: what rprof roofs places
// its bandwidth levels by.
type cachesJSON struct {
	// Source is "sysfs", "cpuid" or "" (none: roofs measures them).
	Source string `json:"source"`
	// Complete says every level is listed; otherwise roofs finds the
	// levels past the last one from its sweep.
	Complete bool        `json:"complete"`
	Levels   []cacheJSON `json:"levels"`
	Notes    []string    `json:"notes"`
	// Effective are the sizes the last rprof roofs on this machine
	// measured or confirmed (its document's caches), what its roofs and
	// the emulation's cache model use; EffectiveFrom names that document.
	// Absent when there is none (or on a captured tree).
	Effective     []roofline.CacheLevel `json:"effective,omitempty"`
	EffectiveFrom string                `json:"effective_from,omitempty"`
}

// lastEffectiveCaches are the effective cache sizes of the roofs document
// at the default path, when it was measured on a CPU of h's model name,
// and where they come from.
func lastEffectiveCaches(h *machine.Host) ([]roofline.CacheLevel, string) {
	d, err := loadRoofs("")
	if err != nil || d.roofs == nil {
		return nil, ""
	}
	caches := h.EffectiveCaches(d.roofs)
	if caches == nil {
		return nil, ""
	}
	return caches, fmt.Sprintf("%s of %s", d.path, d.roofs.Created.UTC().Format("2006-01-02 15:04 MST"))
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
			scopes = append(scopes, fmt.Sprintf("%s: %s", render.Plural(c.Threads, "thread"), s))
			continue
		}
		scopes[len(scopes)-1] += ", " + s
	}
	return strings.Join(scopes, "; ")
}

// cacheJSON is one cache level and type: the size of one instance and how
// many instances serve the online CPUs.
type cacheJSON struct {
	Level     int    `json:"level"`
	Type      string `json:"type"`
	Bytes     int64  `json:"bytes"`
	Instances int    `json:"instances"`
}

func cachesDoc(c machine.Caches) cachesJSON {
	doc := cachesJSON{Source: c.Source, Complete: c.Complete, Levels: []cacheJSON{}, Notes: c.Notes}
	for _, inst := range c.Instances {
		i := slices.IndexFunc(doc.Levels, func(l cacheJSON) bool {
			return l.Level == inst.Level && l.Type == inst.Type && l.Bytes == inst.SizeBytes
		})
		if i < 0 {
			doc.Levels = append(doc.Levels, cacheJSON{Level: inst.Level, Type: inst.Type, Bytes: inst.SizeBytes})
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
func cachesText(c cachesJSON) string {
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

type checkJSON struct {
	Usable bool   `json:"usable"`
	Probed bool   `json:"probed"`
	Detail string `json:"detail,omitempty"`
	Error  string `json:"error,omitempty"`
}

func checkDoc(c pmu.Check) checkJSON {
	j := checkJSON{Usable: c.Usable, Probed: c.Probed, Detail: c.Detail}
	if c.Err != nil {
		j.Error = c.Err.Error()
	}
	return j
}

// capNames are the capabilities that decide what rprof may count.
var capNames = []struct {
	bit  uint
	name string
}{{21, "CAP_SYS_ADMIN"}, {38, "CAP_PERFMON"}, {39, "CAP_BPF"}}

func doctorJSON(rep doctor.Report, m machineFlags) doctorDoc {
	d := rep.Diagnosis
	doc := doctorDoc{
		Machine:     "this machine",
		Probed:      d.Live,
		CPU:         render.CPUDoc(d.Plan),
		VM:          d.VM,
		Hypervisor:  d.Hypervisor,
		PMUs:        d.PMUs,
		HardwarePMU: d.HardwarePMU,
		Work:        checkDoc(d.Work),
		Traffic:     checkDoc(d.Traffic),
		Uprobes:     checkDoc(rep.Uprobes),
		Regions:     checkDoc(rep.Regions),
		BLAS:        blasDoc(rep.BLAS),
		Caches:      cachesDoc(rep.Caches),
		Roofs:       rep.Roofs,
		Usable:      d.Usable(),
	}
	if !d.Live {
		doc.Machine = fmt.Sprintf("captured tree (sysfs %s, procfs %s)", m.sysfs, m.procfs)
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
	doc.Problems, doc.Details = problemsDoc(d.Problems)
	if doc.PMUs == nil {
		doc.PMUs = []string{}
	}
	return doc
}

func writeDoctorText(w io.Writer, doc doctorDoc, d pmu.Diagnosis) error {
	var b strings.Builder
	how := "events opened once to check"
	if !doc.Probed {
		how = "read only: nothing can be opened on a captured tree"
	}
	fmt.Fprintf(&b, "rprof doctor: %s (%s)\n\n", doc.Machine, how)
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "CPU\t%s\n", render.CPULine(d.Plan))
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
	fmt.Fprintf(tw, "FP work (W)\t%s\n", checkText(doc.Work))
	fmt.Fprintf(tw, "DRAM traffic (Q)\t%s\n", checkText(doc.Traffic))
	fmt.Fprintf(tw, "eBPF uprobes\t%s\n", checkText(doc.Uprobes))
	fmt.Fprintf(tw, "regions (--region)\t%s\n", checkText(doc.Regions))
	blasLine := blasText(doc.BLAS)
	if len(doc.Roofs.BLASEnv) > 0 {
		blasLine += "; forced by " + strings.Join(doc.Roofs.BLASEnv, " ") + " (DGEMM roof uses those kernels; unset, or use rprof roofs --blas-arch)"
	}
	fmt.Fprintf(tw, "BLAS\t%s\n", blasLine)
	fmt.Fprintf(tw, "caches\t%s\n", cachesText(doc.Caches))
	kernelsLine, clockLine, cpusLine := roofsText(doc.Roofs)
	fmt.Fprintf(tw, "vector kernels\t%s\n", kernelsLine)
	fmt.Fprintf(tw, "clock\t%s\n", clockLine)
	fmt.Fprintf(tw, "CPUs\t%s\n", cpusLine)
	tw.Flush()

	render.WriteProblems(&b, d.Problems, problemFix)
	if doc.Usable {
		b.WriteString("\nCounting is usable: rprof run can measure W and Q here.\n")
	} else {
		b.WriteString("\nCounting is not usable here: rprof run cannot measure " + missingFigures(doc) + " (see the problems above).\n")
		writeWays(&b, doc.WaysForward)
		b.WriteString("(The commands measure the TRIAD kernel of rprof's checkout, after make -C examples; it prints its own W and Q.)\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func checkText(c checkJSON) string {
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

func blasText(b blasCheck) string {
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

func missingFigures(doc doctorDoc) string {
	switch {
	case !doc.Work.Usable && !doc.Traffic.Usable:
		return "FP work W or DRAM traffic Q"
	case !doc.Work.Usable:
		return "FP work W"
	}
	return "DRAM traffic Q"
}
