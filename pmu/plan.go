package pmu

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/rprof/rprof/machine"

	"github.com/rprof/rprof/internal/kfs"
)

// Plan is what rprof would count on one machine: the FP-work and
// DRAM-traffic events of its microarchitecture, resolved against its PMUs,
// and what cannot be counted and why. Building a plan reads nothing; only
// opening its events touches the kernel.
type Plan struct {
	CPU machine.CPUInfo
	// Identity is the microarchitecture whose catalogue entry the plan
	// follows (perf's name, "" if unknown) and its source: the model, or
	// the features where they contradict it.
	Identity machine.Identity
	// Work are per-process core events. W = sum of count * FlopsPerCount.
	Work []WorkEvent
	// Traffic are system-wide memory-controller events, one per box, with
	// Event.CPUs set to the box's cpumask. Q = sum of count * BytesPerCount.
	Traffic []TrafficEvent
	// Problems say what is missing, approximate or unverified, and how to
	// fix it where a fix exists.
	Problems []Problem
	// Counters is how many general counters one thread has for the work
	// events (0: no limit is known; the catalogue lists few enough events).
	Counters int
}

// WorkEvent is a core event that counts floating-point work.
type WorkEvent struct {
	Event
	// FlopsPerCount is the FLOPs one count stands for (an FMA already
	// counts twice where the vendor says so).
	FlopsPerCount float64
	// Precision is roofline.Double, Single, Half or Mixed (the event does
	// not tell precisions apart).
	Precision string
	// Slots is how many general counters the event occupies: 2 for AMD FP
	// events, which the kernel pairs with a merge event.
	Slots int
	// Source names where the encoding and weight come from.
	Source string
	// Unverified is why the entry is not confirmed by its sources ("" when
	// it is).
	Unverified string
}

// TrafficEvent is a memory-controller event that counts DRAM traffic.
type TrafficEvent struct {
	Event
	// BytesPerCount is the bytes one count stands for. It is final:
	// Event.Scale and Event.Unit repeat the kernel alias's annotation and
	// must not be applied again.
	BytesPerCount float64
	// Direction is "read", "write" or "total" (both, not split).
	Direction string
	// Alias is the sysfs event alias that encodes the event, or "" when
	// rprof encoded it from the catalogue's terms.
	Alias string
	// Terms is the encoding in perf's term syntax.
	Terms      string
	Source     string
	Unverified string
}

// Directions of traffic events.
const (
	Read  = "read"
	Write = "write"
	Total = "total"
)

// Problem is something rprof cannot count, or counts with a caveat.
type Problem struct {
	// Code is stable and machine-readable, e.g. "no-pmu",
	// "unsupported-cpu", "e-core-unmeasured", "unverified".
	Code string
	// What says what is wrong, in one sentence.
	What string
	// Fix is a catalogue entry's own remedy for this CPU (pin the program
	// to the P-cores, count on a newer generation), or "". The remedies
	// of the generic problems are the command's to give, from Code and
	// the fields below (cmd/rprof's advice).
	Fix string
	// AnalyticWork says that W, which this CPU cannot count, may be given
	// analytically instead: a remedy the command names before Fix.
	AnalyticWork bool
	// VM says that a ProblemNoPMU machine is a virtual machine; Hypervisor
	// names its hypervisor when known (DMI sys_vendor, or detected).
	VM         bool
	Hypervisor string
	// SystemWide: a ProblemParanoid or ProblemProbe about system-wide
	// (memory-controller) events rather than per-process ones.
	SystemWide bool
	// Err is why a ProblemProbe's event did not open.
	Err error
	// SMTCounters is, for ProblemMultiplexed, the counters per core with
	// SMT off when that is more than with it on, else 0.
	SMTCounters int
}

// Problem codes callers act on.
const (
	ProblemNoPMU           = "no-pmu"
	ProblemUnsupportedCPU  = "unsupported-cpu"
	ProblemNoWorkEvent     = "no-work-event"
	ProblemNoTrafficPMU    = "no-traffic-pmu"
	ProblemUnverified      = "unverified"
	ProblemMultiplexed     = "multiplexed"
	ProblemKernelAlias     = "kernel-alias"
	ProblemEncode          = "encode"
	ProblemECoreUnmeasured = "e-core-unmeasured"
	ProblemNMIWatchdog     = "nmi-watchdog"
	ProblemParanoid        = "paranoid"
	ProblemProbe           = "probe"
)

// String is the problem as one line: what is wrong, and a catalogue
// remedy when it has one.
func (p Problem) String() string {
	if p.Fix == "" {
		return p.What
	}
	return p.What + "; fix: " + p.Fix
}

// Groups packs the work events into groups that fit the core PMU's
// counters, in catalogue order, one PMU per group, so that each group is
// scheduled whole and nothing is multiplexed within it.
func (p Plan) Groups() [][]WorkEvent {
	var out [][]WorkEvent
	used := map[string]int{}    // slots used in a PMU's open group
	current := map[string]int{} // index in out of a PMU's open group
	for _, w := range p.Work {
		slots := max(w.Slots, 1)
		i, ok := current[w.PMU]
		if !ok || (p.Counters > 0 && used[w.PMU]+slots > p.Counters) {
			out = append(out, nil)
			i = len(out) - 1
			current[w.PMU], used[w.PMU] = i, 0
		}
		out[i] = append(out[i], w)
		used[w.PMU] += slots
	}
	return out
}

// WorkUsable reports whether the plan has events for W.
func (p Plan) WorkUsable() bool { return len(p.Work) > 0 }

// TrafficUsable reports whether the plan has events for Q (reads and
// writes, or a total).
func (p Plan) TrafficUsable() bool { return len(p.Traffic) > 0 }

// LoadPlan reads the PMUs of h (this machine, or a captured tree), with
// its CPU and topology, and builds its plan. An unreadable or partial tree
// is an error: a plan from half a tree would silently miss events.
func LoadPlan(h *machine.Host) (Plan, error) {
	m, err := readMachine(h, nil)
	if err != nil {
		return Plan{}, err
	}
	return m.plan(), nil
}

// host is what LoadPlan and Diagnose read from the trees.
type host struct {
	cpu        machine.CPUInfo
	topo       machine.Topology
	pmus       PMUs
	hypervisor string
	// nmiWatchdog is kernel.nmi_watchdog, -1 when unknown.
	nmiWatchdog int
}

// readMachine takes h's CPU and topology, read once by h, and reads its
// PMUs (unless given) and what the plan needs beyond them.
func readMachine(h *machine.Host, pmus PMUs) (host, error) {
	var m host
	var err error
	if m.cpu, err = h.CPU(); err != nil {
		return host{}, err
	}
	if m.topo, err = h.Topology(); err != nil {
		return host{}, err
	}
	m.pmus = pmus
	if m.pmus == nil {
		if m.pmus, err = DiscoverPMUs(h.Sysfs); err != nil {
			return host{}, err
		}
	}
	m.hypervisor = machine.Hypervisor(h.Sysfs)
	m.nmiWatchdog = -1
	if s, err := kfs.ReadString(h.Procfs, "sys/kernel/nmi_watchdog"); err == nil {
		if v, err := strconv.Atoi(s); err == nil {
			m.nmiWatchdog = v
		}
	}
	return m, nil
}

// plan builds the machine's plan, naming the hypervisor's own setting in
// the no-PMU fix when DMI or the clock source says which it is, and leaving
// out the counter the NMI watchdog holds.
func (m host) plan() Plan {
	return newPlan(m.cpu, m.pmus, m.topo, m.nmiWatchdog, m.hypervisor)
}

// addWatchdog explains the counter the NMI watchdog's cycles event holds.
// AMD cores have no fixed counters, so it takes one of the general ones and
// a group using all of them would never be scheduled: the groups are sized
// without it.
func (p *Plan) addWatchdog() {
	pr := Problem{
		Code: ProblemNMIWatchdog,
		What: "the NMI watchdog (kernel.nmi_watchdog=1) keeps a cycles counter busy on every CPU",
	}
	if p.CPU.Vendor == "AuthenticAMD" && p.Counters > 0 {
		p.Counters--
		pr.What += fmt.Sprintf("; on AMD it is a general counter, so rprof sizes its groups for the %d left", p.Counters)
	}
	p.Problems = append(p.Problems, pr)
}

// newPlan resolves the catalogue entry of cpu's microarchitecture against
// pmus, knowing kernel.nmi_watchdog (-1: unknown) and the hypervisor's name
// ("": bare metal or unknown). Kernel aliases are preferred when they
// encode what the catalogue says; otherwise the catalogue's raw terms are
// encoded with the PMU's format files, and the difference is reported.
func newPlan(cpu machine.CPUInfo, pmus PMUs, topo machine.Topology, nmiWatchdog int, hypervisor string) Plan {
	p := Plan{CPU: cpu, Identity: machine.Identify(cpu)}
	hardware := pmus.HasHardware()
	if !hardware {
		p.Problems = append(p.Problems, noPMUProblem(cpu, pmus, hypervisor))
	}
	spec, ok := catalogue(p.Identity.Microarch)
	if !ok {
		p.Problems = append(p.Problems, unsupportedProblem(cpu, p.Identity.Microarch))
		return p
	}
	for _, pr := range spec.NoWork {
		if pr.Code == ProblemECoreUnmeasured && nonHybrid(pmus) {
			continue // booted with the E-cores off
		}
		if cpus := topo.CoreTypes[coreP]; len(cpus) > 0 {
			pr.Fix = strings.ReplaceAll(pr.Fix, "<cpu_core cpus>", kfs.FormatList(cpus))
		}
		p.Problems = append(p.Problems, pr)
	}
	if hardware {
		p.addWork(spec, pmus)
		p.Counters = spec.Counters
		if spec.CountersNoSMT > 0 && !smtOn(topo) {
			p.Counters = spec.CountersNoSMT
		}
		if nmiWatchdog > 0 {
			p.addWatchdog()
		}
	}
	// Uncore PMUs are independent of the core PMU (and a VM exposes
	// neither), so traffic is resolved even when the core PMU is missing.
	p.addTraffic(spec, pmus, hardware)
	p.addUnverified()
	p.addMultiplexed(spec)
	return p
}

func (p *Plan) addWork(spec archSpec, pmus PMUs) {
	missing := map[string]bool{}
	for _, w := range spec.Work {
		name := w.Core
		switch {
		case name == coreAny:
			name = pmus.corePMU()
		case nonHybrid(pmus) && name == coreP:
			// A hybrid part booted with its E-cores off has one "cpu"
			// PMU of P-cores.
			name = "cpu"
		case nonHybrid(pmus):
			continue // no E-cores online
		}
		pm := pmus[name]
		if pm == nil {
			if !missing[name] {
				missing[name] = true
				p.Problems = append(p.Problems, Problem{
					Code: ProblemNoWorkEvent,
					What: fmt.Sprintf("the %s core PMU is missing: its FP events (%s...) cannot be counted", name, w.Name),
					Fix:  "use a kernel with perf support for this CPU's core types",
				})
			}
			continue
		}
		attr, err := pm.Encode(w.Terms)
		if err != nil {
			p.Problems = append(p.Problems, encodeProblem(w.Name, err))
			continue
		}
		p.Work = append(p.Work, WorkEvent{
			Event:         Event{Name: w.Name, PMU: pm.Name, Attr: attr, Scale: 1},
			FlopsPerCount: w.Flops,
			Precision:     w.Precision,
			Slots:         max(w.Slots, 1),
			Source:        w.Source,
			Unverified:    w.Unverified,
		})
	}
}

func (p *Plan) addTraffic(spec archSpec, pmus PMUs, hardware bool) {
	if len(spec.Traffic) == 0 {
		if spec.NoTraffic != nil {
			p.Problems = append(p.Problems, *spec.NoTraffic)
		}
		return
	}
	var bases []string
	for _, set := range spec.Traffic {
		base := set.Events[0].PMU
		bases = append(bases, base)
		boxes := pmus.Glob(base)
		if len(boxes) == 0 {
			continue
		}
		if set.Note != "" {
			p.Problems = append(p.Problems, Problem{Code: ProblemMultiplexed, What: set.Note})
		}
		reported := map[string]bool{} // one alias problem per event, not per box
		for _, box := range boxes {
			for _, t := range set.Events {
				ev, prob, err := resolveTraffic(box, t)
				if err != nil {
					if !reported[t.Name+"/encode"] {
						reported[t.Name+"/encode"] = true
						p.Problems = append(p.Problems, encodeProblem(box.Name+"/"+t.Name, err))
					}
					continue
				}
				if prob != nil && !reported[t.Name] {
					reported[t.Name] = true
					p.Problems = append(p.Problems, *prob)
				}
				p.Traffic = append(p.Traffic, ev)
			}
		}
		return
	}
	if !hardware {
		// The no-PMU problem already says why; repeating it per PMU
		// kind would bury it.
		return
	}
	p.Problems = append(p.Problems, Problem{
		Code: ProblemNoTrafficPMU,
		What: fmt.Sprintf("no %s PMU: DRAM traffic cannot be counted", strings.Join(bases, " or ")),
	})
}

// resolveTraffic encodes t on box, preferring a kernel alias that encodes
// the same. It returns a problem when the kernel's alias is missing or
// wrong, or its scale disagrees with the catalogue.
func resolveTraffic(box *PMU, t trafficSpec) (TrafficEvent, *Problem, error) {
	want, err := box.Encode(t.Terms)
	if err != nil {
		return TrafficEvent{}, nil, err
	}
	ev := TrafficEvent{
		Event:         Event{Name: t.Name, PMU: box.Name, Attr: want, Scale: 1, CPUs: slices.Clone(box.CPUs)},
		BytesPerCount: t.Bytes,
		Direction:     t.Direction,
		Terms:         t.Terms,
		Source:        t.Source,
		Unverified:    t.Unverified,
	}
	var wrong []string
	for _, name := range t.Aliases {
		a, ok := box.Aliases[name]
		if !ok {
			continue
		}
		got, err := box.Encode(name)
		if err != nil || got != want {
			wrong = append(wrong, fmt.Sprintf("%s/%s/ is %s", box.Name, name, a.Terms))
			continue
		}
		ev.Name, ev.Alias, ev.Terms = name, name, a.Terms
		ev.Scale, ev.Unit = a.Scale, a.Unit
		if bytes, ok := aliasBytes(a); ok && !near(bytes, t.Bytes) {
			return ev, &Problem{
				Code: ProblemKernelAlias,
				What: fmt.Sprintf("this kernel scales %s/%s/ to %g bytes per count; one count is %g bytes, which rprof uses", box.Name, name, bytes, t.Bytes),
			}, nil
		}
		return ev, nil, nil
	}
	switch {
	case len(wrong) > 0:
		return ev, &Problem{
			Code: ProblemKernelAlias,
			What: fmt.Sprintf("this kernel's %s, not %s: rprof encodes %s itself", strings.Join(wrong, ", "), t.Terms, t.Name),
		}, nil
	case t.Missing != "" && len(t.Aliases) > 0:
		return ev, &Problem{Code: ProblemKernelAlias, What: t.Missing}, nil
	}
	return ev, nil, nil
}

// aliasBytes converts an alias's scale and unit to bytes per count, when
// the unit is a byte unit.
func aliasBytes(a Alias) (float64, bool) {
	switch a.Unit {
	case "MiB":
		return a.Scale * (1 << 20), true
	case "B", "Bytes":
		return a.Scale, true
	}
	return 0, false
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-6*math.Abs(b) }

// addUnverified adds one problem per distinct unverified reason, naming the
// events it applies to.
func (p *Plan) addUnverified() {
	var reasons []string
	events := map[string][]string{}
	note := func(reason, name string) {
		if reason == "" {
			return
		}
		if _, ok := events[reason]; !ok {
			reasons = append(reasons, reason)
		}
		if !slices.Contains(events[reason], name) {
			events[reason] = append(events[reason], name)
		}
	}
	for _, w := range p.Work {
		note(w.Unverified, w.Name)
	}
	for _, t := range p.Traffic {
		note(t.Unverified, t.Name)
	}
	for _, r := range reasons {
		p.Problems = append(p.Problems, Problem{
			Code: ProblemUnverified,
			What: fmt.Sprintf("UNVERIFIED (%s): %s", strings.Join(events[r], ", "), r),
		})
	}
}

// addMultiplexed says when the work events need more than one group.
func (p *Plan) addMultiplexed(spec archSpec) {
	groups := p.Groups()
	perPMU := map[string]int{}
	for _, g := range groups {
		perPMU[g[0].PMU]++
	}
	var names []string
	for name, n := range perPMU {
		if n > 1 {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		pr := Problem{
			Code: ProblemMultiplexed,
			What: fmt.Sprintf("the %s work events need %d counter groups (%d counters per thread): the kernel time-shares them and rprof scales each count by its running time", name, perPMU[name], p.Counters),
		}
		if spec.CountersNoSMT > p.Counters {
			pr.SMTCounters = spec.CountersNoSMT
		}
		p.Problems = append(p.Problems, pr)
	}
}

// nonHybrid reports whether the kernel registered one x86 core PMU ("cpu")
// rather than one per core type.
func nonHybrid(pmus PMUs) bool { return pmus["cpu"] != nil && pmus[coreP] == nil }

// smtOn reports whether any core runs more than one thread.
func smtOn(topo machine.Topology) bool {
	for _, s := range topo.SMTSiblings {
		if len(s) > 1 {
			return true
		}
	}
	return false
}

func encodeProblem(event string, err error) Problem {
	return Problem{
		Code: ProblemEncode,
		What: fmt.Sprintf("cannot encode %s: %v", event, err),
	}
}

// noPMUProblem explains a machine without a hardware core PMU, naming the
// hypervisor's own setting when it is known.
func noPMUProblem(cpu machine.CPUInfo, pmus PMUs, hypervisor string) Problem {
	names := make([]string, 0, len(pmus))
	for name := range pmus {
		names = append(names, name)
	}
	sort.Strings(names)
	what := "no hardware PMU: the kernel exposes no core PMU"
	if len(names) > 0 {
		what = fmt.Sprintf("no hardware PMU: the kernel exposes only the %s PMUs", strings.Join(names, ", "))
	}
	if cpu.Hypervisor() || hypervisor != "" {
		vm := "a VM"
		if hypervisor != "" {
			vm = "a " + hypervisor + " VM"
		}
		return Problem{Code: ProblemNoPMU, What: what + " (" + vm + " without a virtual PMU): neither FP work nor DRAM traffic can be counted", VM: true, Hypervisor: hypervisor}
	}
	return Problem{Code: ProblemNoPMU, What: what}
}

func unsupportedProblem(cpu machine.CPUInfo, microarch string) Problem {
	id := cpu.PerfKey()
	if microarch != "" {
		id = microarch + " (" + id + ")"
	}
	return Problem{
		Code: ProblemUnsupportedCPU,
		What: fmt.Sprintf("rprof has no FP-work or DRAM-traffic events for %s", id),
	}
}

// Err is the typed error that stops counting W on this plan, or nil: an
// error matching ErrNoPMU without a hardware PMU, ErrUnsupportedCPU without
// a catalogue entry, ErrNotSupported when no work event resolved.
func (p Plan) Err() error {
	for _, pr := range p.Problems {
		switch pr.Code {
		case ProblemNoPMU:
			return fmt.Errorf("count FP work: %w", ErrNoPMU)
		case ProblemUnsupportedCPU:
			return fmt.Errorf("count FP work on %s: %w", p.CPU.PerfKey(), ErrUnsupportedCPU)
		}
	}
	if !p.WorkUsable() {
		return fmt.Errorf("count FP work on %s: %w", p.Identity.Microarch, ErrNotSupported)
	}
	return nil
}
