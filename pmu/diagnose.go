package pmu

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"strings"

	"github.com/rprof/rprof/machine"
)

// Diagnosis is what a machine allows for roofline work: which PMUs it has,
// whether FP work and DRAM traffic can be counted, and the permissions and
// settings that decide it, each problem with its fix. It is plain data; the
// CLI renders it.
type Diagnosis struct {
	CPU      machine.CPUInfo
	Topology machine.Topology
	// PMUs are the names of every PMU in sysfs, sorted.
	PMUs []string
	// HardwarePMU is true when a hardware core PMU is exposed.
	HardwarePMU bool
	Plan        Plan
	// Live is true when the trees are this machine's and events were
	// probed by opening them; false for a captured tree.
	Live bool

	Work    Check
	Traffic Check

	// Paranoid is kernel.perf_event_paranoid, valid when ParanoidKnown.
	Paranoid      int
	ParanoidKnown bool
	// CapEff is the effective capability set of the process whose
	// self/status the procfs tree holds, valid when CapsKnown.
	CapEff    uint64
	CapsKnown bool
	// VM is true when a hypervisor was detected; Hypervisor names it when
	// known ("KVM", "VMware", DMI's sys_vendor...).
	VM         bool
	Hypervisor string
	// NMIWatchdog is kernel.nmi_watchdog (-1 when unknown).
	NMIWatchdog int

	// Problems are everything that stops or weakens counting, with fixes.
	Problems []Problem
}

// Check is the answer to one "can rprof do X here" question.
type Check struct {
	Usable bool
	// Probed is true when the answer comes from opening the events on this
	// machine rather than from reading a tree.
	Probed bool
	// Detail says what was found, e.g. "16 events on cpu" or the PMU
	// names.
	Detail string
	// Err is why it is not usable: it matches ErrNoPMU, ErrUnsupportedCPU,
	// ErrPermission or ErrNotSupported with errors.Is.
	Err error
}

// Capability bits (include/uapi/linux/capability.h).
const (
	capSysAdmin = 21
	capPerfmon  = 38
)

// Diagnose inspects h from its sysfs and procfs trees without opening
// anything, as for a tree captured on another machine. An unreadable or
// partial tree is an error.
func Diagnose(h *machine.Host) (Diagnosis, error) {
	return diagnose(h, nil, nil)
}

// DiagnoseLive inspects h's trees (nil: this machine's /sys and /proc) and
// probes the events by opening each one once, on the running kernel: h
// should be this machine.
func DiagnoseLive(h *machine.Host) (Diagnosis, error) {
	return diagnose(h.OrLive(), nil, &prober{event: Probe, hardware: HaveHardwareCounters})
}

// DiagnoseCounting inspects h as DiagnoseLive does for a counting run: it
// takes the PMUs already discovered in h's sysfs.
func DiagnoseCounting(h *machine.Host, pmus PMUs) (Diagnosis, error) {
	return diagnose(h.OrLive(), pmus, &prober{event: Probe, hardware: HaveHardwareCounters})
}

// prober opens things on the live machine; tests substitute it.
type prober struct {
	event    func(Event) error
	hardware func() error
}

// diagnose reads h (with pmus when already discovered) and, when probe is
// not nil, opens events on this machine.
func diagnose(h *machine.Host, pmus PMUs, probe *prober) (Diagnosis, error) {
	live := probe != nil
	m, err := readMachine(h, pmus)
	if err != nil {
		return Diagnosis{}, err
	}
	d := Diagnosis{Live: live, NMIWatchdog: m.nmiWatchdog, CPU: m.cpu, Topology: m.topo, Hypervisor: m.hypervisor}
	for name := range m.pmus {
		d.PMUs = append(d.PMUs, name)
	}
	slices.Sort(d.PMUs)
	d.HardwarePMU = m.pmus.HasHardware()
	d.VM = d.CPU.Hypervisor() || d.Hypervisor != ""
	d.Plan = m.plan()
	d.Problems = slices.Clone(d.Plan.Problems)

	if p, err := ReadParanoid(h.Procfs); err == nil {
		d.Paranoid, d.ParanoidKnown = p, true
	}
	if c, err := readCapEff(h.Procfs); err == nil {
		d.CapEff, d.CapsKnown = c, true
	}

	d.Work = d.workCheck(probe)
	d.Traffic = d.trafficCheck(probe)
	return d, nil
}

// Usable reports whether both W and Q can be counted.
func (d Diagnosis) Usable() bool { return d.Work.Usable && d.Traffic.Usable }

// ParanoidAllows says what the perf_event_paranoid level lets an
// unprivileged process count (perf_event_open(2)).
func ParanoidAllows(level int) string {
	switch {
	case level <= -1:
		return "everything, including system-wide and kernel-mode counting"
	case level == 0:
		return "per-process and system-wide (uncore) counting, without raw tracepoint data"
	case level == 1:
		return "per-process counting in user and kernel mode; system-wide (uncore) counting needs CAP_PERFMON"
	case level == 2:
		return "per-process counting in user mode only; system-wide (uncore) counting needs CAP_PERFMON"
	default:
		// Upstream kernels test only "above 1" and "above 2"; level 3 is
		// the restriction patch Debian, Ubuntu and Android carry. Verified
		// on an upstream 6.18 kernel: at 3 an unprivileged process counts
		// task-clock in user mode, as at 2.
		return "upstream kernels: as 2, per-process counting in user mode only; kernels with the Debian, Ubuntu or Android restriction patch: no counting without CAP_PERFMON"
	}
}

// privileged reports whether the process may count system-wide regardless
// of perf_event_paranoid.
func (d Diagnosis) privileged() bool {
	return d.CapsKnown && d.CapEff&(1<<capPerfmon|1<<capSysAdmin) != 0
}

func (d *Diagnosis) workCheck(probe *prober) Check {
	c := Check{}
	if err := d.Plan.Err(); err != nil {
		c.Err = err
		if d.Live && !d.HardwarePMU {
			// Confirm what sysfs says by opening the generic
			// instructions event.
			c.Probed = true
			if hwErr := probe.hardware(); hwErr != nil {
				c.Detail = "opening the instructions event fails: " + hwErr.Error()
			} else {
				c.Detail = "yet the generic instructions event opens"
			}
		}
		return c
	}
	c.Detail = countEvents(len(d.Plan.Work), pmuNames(workEvents(d.Plan)))
	// Above 2, only kernels with the restriction patch refuse per-process
	// counting; upstream ones count user mode as at 2. On this machine the
	// probe below decides; a captured tree can only say what may happen.
	if d.ParanoidKnown && d.Paranoid > 2 && !d.privileged() && !d.Live {
		d.Problems = append(d.Problems, Problem{
			Code: ProblemParanoid,
			What: fmt.Sprintf("perf_event_paranoid=%d: a kernel with the Debian, Ubuntu or Android restriction patch forbids counting without CAP_PERFMON (an upstream kernel counts user mode, as at 2)%s", d.Paranoid, d.unknownCaps()),
		})
		if d.CapsKnown {
			c.Err = &PermissionError{Event: d.Plan.Work[0].Name, Paranoid: d.Paranoid}
			return c
		}
	}
	if d.Live {
		c.Probed = true
		if err := probeAll(probe.event, workEvents(d.Plan)); err != nil {
			c.Err = err
			d.Problems = append(d.Problems, probeProblem(err, false))
			return c
		}
	}
	c.Usable = true
	return c
}

func (d *Diagnosis) trafficCheck(probe *prober) Check {
	c := Check{}
	if !d.Plan.TrafficUsable() {
		switch {
		case !d.HardwarePMU:
			c.Err = fmt.Errorf("count DRAM traffic: %w", ErrNoPMU)
		case d.Plan.Identity.Microarch == "" || !slices.Contains(Microarchs(), d.Plan.Identity.Microarch):
			c.Err = fmt.Errorf("count DRAM traffic: %w", ErrUnsupportedCPU)
		default:
			c.Err = fmt.Errorf("count DRAM traffic: no memory-controller PMU: %w", ErrNotSupported)
		}
		return c
	}
	c.Detail = countEvents(len(d.Plan.Traffic), pmuNames(trafficEvents(d.Plan)))
	if d.ParanoidKnown && d.Paranoid > 0 && !d.privileged() {
		d.Problems = append(d.Problems, Problem{
			Code:       ProblemParanoid,
			What:       fmt.Sprintf("perf_event_paranoid=%d: memory-controller (system-wide) events need CAP_PERFMON or root%s", d.Paranoid, d.unknownCaps()),
			SystemWide: true,
		})
		if d.CapsKnown {
			c.Err = &PermissionError{Event: d.Plan.Traffic[0].Name, SystemWide: true, Paranoid: d.Paranoid}
			return c
		}
	}
	if d.Live {
		c.Probed = true
		if err := probeAll(probe.event, trafficEvents(d.Plan)); err != nil {
			c.Err = err
			d.Problems = append(d.Problems, probeProblem(err, true))
			return c
		}
	}
	c.Usable = true
	return c
}

// unknownCaps notes, for a tree without self/status, that whether the
// process has the capability is not known.
func (d Diagnosis) unknownCaps() string {
	if d.CapsKnown {
		return ", and this process has neither"
	}
	return " (the tree has no self/status, so whether rprof would have them is unknown)"
}

func countEvents(n int, pmus []string) string {
	noun := "events"
	if n == 1 {
		noun = "event"
	}
	return fmt.Sprintf("%d %s on %s", n, noun, strings.Join(pmus, ", "))
}

// probeProblem explains an event that resolved but did not open.
func probeProblem(err error, systemWide bool) Problem {
	return Problem{Code: ProblemProbe, What: fmt.Sprintf("an event rprof needs does not open here: %v", err), Err: err, SystemWide: systemWide}
}

// probeAll opens each event once; the first failure is returned.
func probeAll(probe func(Event) error, evs []Event) error {
	for _, ev := range evs {
		if err := probe(ev); err != nil {
			return err
		}
	}
	return nil
}

func workEvents(p Plan) []Event {
	evs := make([]Event, len(p.Work))
	for i, w := range p.Work {
		evs[i] = w.Event
	}
	return evs
}

func trafficEvents(p Plan) []Event {
	evs := make([]Event, len(p.Traffic))
	for i, t := range p.Traffic {
		evs[i] = t.Event
	}
	return evs
}

// pmuNames lists the PMUs of evs in order, each once and in full: ranges
// such as "uncore_imc_0..5" would hide gaps.
func pmuNames(evs []Event) []string {
	var names []string
	for _, e := range evs {
		if !slices.Contains(names, e.PMU) {
			names = append(names, e.PMU)
		}
	}
	return names
}

// readCapEff reads the effective capabilities from procfs self/status.
func readCapEff(procfs fs.FS) (uint64, error) {
	b, err := fs.ReadFile(procfs, "self/status")
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "CapEff:"); ok {
			return strconv.ParseUint(strings.TrimSpace(v), 16, 64)
		}
	}
	return 0, errors.New("self/status has no CapEff line")
}
