package pmu

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/rprof/rprof/machine"
)

func TestDiagnoseVMWithoutPMUSaysWhyAndHowToFix(t *testing.T) {
	sysfs, procfs := machineFS(t, "vm-zen5")
	d, err := Diagnose(machine.TreeHost(sysfs, procfs))
	if err != nil {
		t.Fatal(err)
	}
	if d.HardwarePMU || !d.VM || d.Usable() || d.Live {
		t.Errorf("hardware PMU %v, VM %v, usable %v, live %v; want false, true, false, false", d.HardwarePMU, d.VM, d.Usable(), d.Live)
	}
	for name, c := range map[string]Check{"work": d.Work, "traffic": d.Traffic} {
		if !errors.Is(c.Err, ErrNoPMU) {
			t.Errorf("%s: error %v, want ErrNoPMU", name, c.Err)
		}
	}
	if len(d.Problems) == 0 || d.Problems[0].Code != ProblemNoPMU {
		t.Fatalf("first problem should be no-pmu: %v", d.Problems)
	}
	p := d.Problems[0]
	for _, want := range []string{"breakpoint, msr, software, tracepoint, uprobe", "VM without a virtual PMU"} {
		if !strings.Contains(p.What, want) {
			t.Errorf("problem %q does not say %q", p.What, want)
		}
	}
	if !p.VM {
		t.Errorf("no-pmu problem %+v does not say the machine is a VM, which its remedy needs", p)
	}
}

func TestDiagnoseCapturedServerTreeIsNotProbed(t *testing.T) {
	sysfs, procfs := machineFS(t, "zen4")
	d, err := Diagnose(machine.TreeHost(sysfs, procfs))
	if err != nil {
		t.Fatal(err)
	}
	if !d.Work.Usable || d.Work.Probed || !d.Traffic.Usable || d.Traffic.Probed {
		t.Errorf("work %+v, traffic %+v: want usable by the tree, not probed", d.Work, d.Traffic)
	}
	if d.CapsKnown {
		t.Errorf("the tree has no self/status, yet capabilities are known: %#x", d.CapEff)
	}
	// The tree's nmi_watchdog is 1 and paranoid 2: both are warnings with
	// fixes, since capabilities of a future rprof process are unknown.
	for _, code := range []string{ProblemParanoid, ProblemNMIWatchdog} {
		if countCode(d.Problems, code) != 1 {
			t.Errorf("want one %s problem: %v", code, d.Problems)
		}
	}
}

// withProc returns a procfs with the zen4 tree's cpuinfo and the given
// paranoid level and CapEff.
func withProc(t *testing.T, paranoid int, capEff uint64) fs.FS {
	_, procfs := machineFS(t, "zen4")
	cpuinfo, err := fs.ReadFile(procfs, "cpuinfo")
	if err != nil {
		t.Fatal(err)
	}
	return fstest.MapFS{
		"cpuinfo":                        {Data: cpuinfo},
		"sys/kernel/perf_event_paranoid": {Data: fmt.Appendf(nil, "%d\n", paranoid)},
		"sys/kernel/nmi_watchdog":        {Data: []byte("0\n")},
		"self/status":                    {Data: fmt.Appendf(nil, "Name:\trprof\nCapInh:\t0000000000000000\nCapEff:\t%016x\n", capEff)},
	}
}

func TestDiagnosePermissionsDecideWhatCanBeCounted(t *testing.T) {
	const perfmon = 1 << 38
	tests := []struct {
		name          string
		paranoid      int
		capEff        uint64
		work, traffic error // nil: usable
	}{
		{"paranoid 2 unprivileged: per-process only", 2, 0, nil, ErrPermission},
		{"paranoid 2 with CAP_PERFMON", 2, perfmon, nil, nil},
		{"paranoid 0 unprivileged", 0, 0, nil, nil},
		{"paranoid 3 unprivileged: nothing", 3, 0, ErrPermission, ErrPermission},
		{"paranoid 3 with CAP_SYS_ADMIN", 3, 1 << 21, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sysfs, _ := machineFS(t, "zen4")
			d, err := Diagnose(machine.TreeHost(sysfs, withProc(t, tt.paranoid, tt.capEff)))
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				name string
				got  Check
				want error
			}{{"work", d.Work, tt.work}, {"traffic", d.Traffic, tt.traffic}} {
				if c.want == nil && !c.got.Usable || c.want != nil && !errors.Is(c.got.Err, c.want) {
					t.Errorf("%s: usable %v err %v, want err %v", c.name, c.got.Usable, c.got.Err, c.want)
				}
			}
			var perm *PermissionError
			if tt.traffic != nil && (!errors.As(d.Traffic.Err, &perm) || !perm.SystemWide || perm.Paranoid != tt.paranoid) {
				t.Errorf("traffic error %v: want a system-wide PermissionError at paranoid %d", d.Traffic.Err, tt.paranoid)
			}
			if (tt.work != nil || tt.traffic != nil) && countCode(d.Problems, ProblemParanoid) == 0 {
				t.Errorf("no paranoid problem with a fix: %v", d.Problems)
			}
		})
	}
}

func TestHypervisorIsNamedFromDMIOrClockSource(t *testing.T) {
	tests := []struct {
		name string
		fs   fstest.MapFS
		want string
	}{
		{"DMI QEMU", fstest.MapFS{"class/dmi/id/sys_vendor": {Data: []byte("QEMU\n")}}, "QEMU"},
		{"KVM clock without DMI", fstest.MapFS{"devices/system/clocksource/clocksource0/available_clocksource": {Data: []byte("tsc kvm-clock \n")}}, "KVM"},
		{"Hyper-V clock", fstest.MapFS{"devices/system/clocksource/clocksource0/available_clocksource": {Data: []byte("tsc hyperv_clocksource_tsc_page acpi_pm\n")}}, "Hyper-V"},
		{"bare metal laptop by a hypervisor vendor", fstest.MapFS{
			"class/dmi/id/sys_vendor": {Data: []byte("Microsoft Corporation\n")},
			"devices/system/clocksource/clocksource0/available_clocksource": {Data: []byte("tsc hpet acpi_pm\n")},
		}, ""},
		{"nothing known", fstest.MapFS{}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := machine.Hypervisor(tt.fs); got != tt.want {
				t.Errorf("hypervisor() = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestDiagnoseLiveMatchesOpeningAnEvent runs the live diagnosis and checks
// it against B1's direct probe: without a hardware PMU (as on the KVM
// guests rprof is built on) it must say so and refuse counting.
func TestDiagnoseLiveMatchesOpeningAnEvent(t *testing.T) {
	d, err := DiagnoseLive(nil)
	if err != nil {
		t.Fatal(err)
	}
	if !d.Live {
		t.Error("live diagnosis not marked live")
	}
	hwErr := HaveHardwareCounters()
	if errors.Is(hwErr, ErrNoPMU) {
		if d.HardwarePMU || d.Work.Usable || !errors.Is(d.Work.Err, ErrNoPMU) {
			t.Errorf("no hardware PMU here (%v), but diagnosis says hardware %v, work %+v", hwErr, d.HardwarePMU, d.Work)
		}
		if countCode(d.Problems, ProblemNoPMU) != 1 {
			t.Errorf("no no-pmu problem: %v", d.Problems)
		}
		return
	}
	if hwErr == nil && !d.HardwarePMU {
		t.Errorf("an instructions counter opens here, but the diagnosis finds no hardware PMU in sysfs")
	}
}

// TestDiagnoseProbesEveryEventOnTheLiveMachine runs the live path on a
// server tree with a fake prober, since this machine has no PMU to open.
func TestDiagnoseProbesEveryEventOnTheLiveMachine(t *testing.T) {
	refuseUncore := func(ev Event) error {
		if ev.SystemWide() {
			return &EventError{Event: ev.Name, PMU: ev.PMU, CPU: ev.CPUs[0], Err: &PermissionError{Event: ev.Name, SystemWide: true, Paranoid: 2}}
		}
		return nil
	}
	absent := func(Event) error { return &EventError{Event: "x", CPU: -1, Err: ErrNotSupported} }
	tests := []struct {
		name          string
		event         func(Event) error
		work, traffic error // nil: usable
		probeErr      error // the probe problem's error, nil: none
	}{
		{"everything opens", func(Event) error { return nil }, nil, nil, nil},
		{"uncore refused", refuseUncore, nil, ErrPermission, ErrPermission},
		{"kernel lacks the events", absent, ErrNotSupported, ErrNotSupported, ErrNotSupported},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var opened []string
			event := func(ev Event) error {
				opened = append(opened, ev.PMU+"/"+ev.Name)
				return tt.event(ev)
			}
			sysfs, _ := machineFS(t, "zen4")
			d, err := diagnose(machine.TreeHost(sysfs, withProc(t, 0, 0)), nil, &prober{event: event})
			if err != nil {
				t.Fatal(err)
			}
			if !d.Live || !d.Work.Probed {
				t.Errorf("live %v, work probed %v", d.Live, d.Work.Probed)
			}
			for _, c := range []struct {
				name string
				got  Check
				want error
			}{{"work", d.Work, tt.work}, {"traffic", d.Traffic, tt.traffic}} {
				if c.want == nil && !c.got.Usable || c.want != nil && (c.got.Usable || !errors.Is(c.got.Err, c.want)) {
					t.Errorf("%s: usable %v err %v, want err %v", c.name, c.got.Usable, c.got.Err, c.want)
				}
			}
			if tt.work == nil && tt.traffic == nil && len(opened) != len(d.Plan.Work)+len(d.Plan.Traffic) {
				t.Errorf("opened %d events, want every one of the plan's %d", len(opened), len(d.Plan.Work)+len(d.Plan.Traffic))
			}
			if tt.probeErr != nil {
				found := false
				for _, p := range d.Problems {
					found = found || p.Code == ProblemProbe && errors.Is(p.Err, tt.probeErr)
				}
				if !found {
					t.Errorf("no probe problem carrying %v for its remedy: %v", tt.probeErr, d.Problems)
				}
			}
		})
	}
}

func TestDiagnoseOpensNoEventOnAMachineWithoutPMU(t *testing.T) {
	sysfs, _ := machineFS(t, "vm-zen5")
	noEvents := func(Event) error { t.Error("no event should be opened on a machine without PMU"); return nil }
	d, err := diagnose(machine.TreeHost(sysfs, withProc(t, 2, 0)), nil, &prober{event: noEvents, hardware: func() error { return ErrNoPMU }})
	if err != nil {
		t.Fatal(err)
	}
	if !d.Work.Probed || !strings.Contains(d.Work.Detail, "instructions event fails") {
		t.Errorf("work %+v: want the failed open of instructions as evidence", d.Work)
	}
}

// Above 2, upstream kernels (6.18 here) count per-process events in user
// mode as at 2, and only kernels with the restriction patch refuse: on the
// live machine the probe decides, not the level.
func TestLiveParanoidAboveTwoIsDecidedByTheProbe(t *testing.T) {
	refuseTask := func(ev Event) error {
		if ev.SystemWide() {
			return nil
		}
		return &EventError{Event: ev.Name, PMU: ev.PMU, CPU: -1, Err: &PermissionError{Event: ev.Name, Paranoid: 3}}
	}
	tests := []struct {
		name  string
		event func(Event) error
		work  error
	}{
		{"upstream kernel: user-mode counting opens", func(Event) error { return nil }, nil},
		{"restriction patch: refused", refuseTask, ErrPermission},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sysfs, _ := machineFS(t, "zen4")
			d, err := diagnose(machine.TreeHost(sysfs, withProc(t, 3, 0)), nil, &prober{event: tt.event})
			if err != nil {
				t.Fatal(err)
			}
			if tt.work == nil != d.Work.Usable || tt.work != nil && !errors.Is(d.Work.Err, tt.work) {
				t.Errorf("work usable %v err %v, want err %v", d.Work.Usable, d.Work.Err, tt.work)
			}
			fixed := false
			for _, p := range d.Problems {
				if p.Code == ProblemParanoid && strings.Contains(p.What, "forbids") {
					t.Errorf("live diagnosis claims the level forbids counting: %s", p.What)
				}
				fixed = fixed || p.Code == ProblemProbe && !p.SystemWide && errors.Is(p.Err, ErrPermission)
			}
			if tt.work != nil && !fixed {
				t.Errorf("refused per-process counting without a per-process probe problem: %v", d.Problems)
			}
		})
	}
}

// A counting run diagnoses the host it is given: the PMUs and CPU of a
// captured tree, not this machine's (events are still opened here).
func TestDiagnoseCountingReadsTheHostsTrees(t *testing.T) {
	for _, name := range []string{"vm-intel-amx", "zen4", "neoverse-v2"} {
		t.Run(name, func(t *testing.T) {
			h := machine.TreeHost(machineFS(t, name))
			want, err := Diagnose(h)
			if err != nil {
				t.Fatal(err)
			}
			d, err := DiagnoseCounting(h, nil)
			if err != nil {
				t.Fatal(err)
			}
			if d.CPU.ModelName != want.CPU.ModelName || !slices.Equal(d.PMUs, want.PMUs) || d.Topology.Threads != want.Topology.Threads {
				t.Errorf("CPU %q, PMUs %v, %d threads; want the tree's %q, %v, %d", d.CPU.ModelName, d.PMUs, d.Topology.Threads,
					want.CPU.ModelName, want.PMUs, want.Topology.Threads)
			}
		})
	}
}
