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
	"github.com/rprof/rprof/roofline"
)

// enc is one resolved encoding: PMU (box number stripped for traffic),
// config, weight and precision or direction.
type enc struct {
	pmu    string
	config uint64
	weight float64
	kind   string // precision or direction
}

func (e enc) String() string { return fmt.Sprintf("%s %#x x%g %s", e.pmu, e.config, e.weight, e.kind) }

// TestPlanEncodingsMatchPerf checks, for every fake machine, the (type,
// config) pairs the plan resolves against the values perf uses (the
// pre-computed table of the events reference, checked with perf's
// value-to-bit placement), not only that they look the same as before.
func TestPlanEncodingsMatchPerf(t *testing.T) {
	intel := func(pmu string, with512 bool) []enc {
		e := []enc{
			{pmu, 0x01c7, 1, roofline.Double}, {pmu, 0x04c7, 2, roofline.Double}, {pmu, 0x10c7, 4, roofline.Double},
		}
		if with512 {
			e = append(e, enc{pmu, 0x40c7, 8, roofline.Double})
		}
		e = append(e, enc{pmu, 0x02c7, 1, roofline.Single}, enc{pmu, 0x08c7, 4, roofline.Single}, enc{pmu, 0x20c7, 8, roofline.Single})
		if with512 {
			e = append(e, enc{pmu, 0x80c7, 16, roofline.Single})
		}
		return e
	}
	fp16 := []enc{
		{"cpu", 0x01cf, 1, roofline.Half}, {"cpu", 0x02cf, 2, roofline.Half}, {"cpu", 0x04cf, 8, roofline.Half},
		{"cpu", 0x08cf, 16, roofline.Half}, {"cpu", 0x10cf, 32, roofline.Half},
	}
	umc := []enc{{"amd_umc", 0x10a, 64, Read}, {"amd_umc", 0x20a, 64, Write}}
	// Every server and desktop tree has kernel.nmi_watchdog=1; on AMD the
	// watchdog takes one of the six counters.
	tests := []struct {
		machine   string
		microarch string
		work      []enc
		workType  uint32
		traffic   []enc // per box, in catalogue order
		boxes     int
		counters  int
		problems  []string
	}{
		{machine: "skylake-sp", microarch: "skylakex", work: intel("cpu", true), workType: 4,
			traffic: []enc{{"uncore_imc", 0x0304, 64, Read}, {"uncore_imc", 0x0c04, 64, Write}}, boxes: 6,
			counters: 4, problems: []string{ProblemNMIWatchdog, ProblemMultiplexed}},
		{machine: "icelake-sp", microarch: "icelakex", work: intel("cpu", true), workType: 4,
			traffic: []enc{{"uncore_imc", 0x0f04, 64, Read}, {"uncore_imc", 0x3004, 64, Write}}, boxes: 12, counters: 8, problems: []string{ProblemNMIWatchdog}},
		{machine: "sapphirerapids", microarch: "sapphirerapids", work: append(intel("cpu", true), fp16...), workType: 4,
			traffic: []enc{{"uncore_imc", 0xcf05, 64, Read}, {"uncore_imc", 0xf005, 64, Write}}, boxes: 8,
			counters: 8, problems: []string{ProblemNMIWatchdog, ProblemUnverified, ProblemMultiplexed}},
		{machine: "graniterapids-oldkernel", microarch: "graniterapids", work: append(intel("cpu", true), fp16...), workType: 4,
			traffic: []enc{{"uncore_imc", 0xcf05, 64, Read}, {"uncore_imc", 0xcf06, 64, Read}, {"uncore_imc", 0xf005, 64, Write}, {"uncore_imc", 0xf006, 64, Write}},
			boxes:   8, counters: 8, problems: []string{ProblemNMIWatchdog, ProblemKernelAlias, ProblemKernelAlias, ProblemUnverified, ProblemMultiplexed}},
		{machine: "graniterapids-newkernel", microarch: "graniterapids", work: append(intel("cpu", true), fp16...), workType: 4,
			traffic: []enc{{"uncore_imc", 0xcf05, 64, Read}, {"uncore_imc", 0xcf06, 64, Read}, {"uncore_imc", 0xf005, 64, Write}, {"uncore_imc", 0xf006, 64, Write}},
			boxes:   8, counters: 8, problems: []string{ProblemNMIWatchdog, ProblemUnverified, ProblemMultiplexed}},
		{machine: "alderlake", microarch: "alderlake", work: intel("cpu_core", false), workType: 4,
			traffic: []enc{{"uncore_imc_free_running", 0x20ff, 64, Read}, {"uncore_imc_free_running", 0x30ff, 64, Write}}, boxes: 2,
			counters: 8, problems: []string{ProblemECoreUnmeasured, ProblemNMIWatchdog}},
		{machine: "zen3", microarch: "amdzen3", work: []enc{{"cpu", 0xff03, 1, roofline.Mixed}}, workType: 4,
			traffic: []enc{
				{"amd_df", 0x3807, 64, Total}, {"amd_df", 0x3847, 64, Total}, {"amd_df", 0x3887, 64, Total}, {"amd_df", 0x38c7, 64, Total},
				{"amd_df", 0x1_0000_3807, 64, Total}, {"amd_df", 0x1_0000_3847, 64, Total}, {"amd_df", 0x1_0000_3887, 64, Total}, {"amd_df", 0x1_0000_38c7, 64, Total},
			}, boxes: 1, counters: 5, problems: []string{ProblemNMIWatchdog, ProblemMultiplexed}},
		{machine: "zen4", microarch: "amdzen4", work: []enc{{"cpu", 0x1f03, 1, roofline.Mixed}}, workType: 4,
			traffic: umc, boxes: 12, counters: 5, problems: []string{ProblemNMIWatchdog}},
		{machine: "zen5", microarch: "amdzen5", work: []enc{
			{"cpu", 0x8f03, 1, roofline.Double}, {"cpu", 0xaf03, 1, roofline.Double},
			{"cpu", 0x4f03, 1, roofline.Single}, {"cpu", 0x6f03, 1, roofline.Single},
		}, workType: 4, traffic: umc, boxes: 12, counters: 5, problems: []string{ProblemNMIWatchdog, ProblemMultiplexed}},
		{machine: "neoverse-v2", microarch: "neoverse-n2-v2", work: []enc{
			{"armv8_pmuv3_0", 0x80c1, 1, roofline.Mixed}, {"armv8_pmuv3_0", 0x80c0, 1, roofline.Mixed},
		}, problems: []string{ProblemNoTrafficPMU, ProblemUnverified, ProblemUnverified}},
		{machine: "vm-zen5", microarch: "amdzen4", problems: []string{ProblemNoPMU}},
	}
	for _, tt := range tests {
		t.Run(tt.machine, func(t *testing.T) {
			sysfs, procfs := machineFS(t, tt.machine)
			p, err := LoadPlan(machine.TreeHost(sysfs, procfs))
			if err != nil {
				t.Fatal(err)
			}
			if p.Identity.Microarch != tt.microarch {
				t.Errorf("microarch %q, want %q", p.Identity.Microarch, tt.microarch)
			}
			var work []enc
			for _, w := range p.Work {
				work = append(work, enc{w.PMU, w.Attr.Config, w.FlopsPerCount, w.Precision})
				if tt.workType != 0 && w.Attr.Type != tt.workType {
					t.Errorf("%s: type %d, want %d", w.Name, w.Attr.Type, tt.workType)
				}
				if w.SystemWide() {
					t.Errorf("%s: work events are per process, got CPUs %v", w.Name, w.CPUs)
				}
			}
			if !slices.Equal(work, tt.work) {
				t.Errorf("work\n got %v\nwant %v", work, tt.work)
			}
			var traffic []enc
			boxes := map[string]bool{}
			for _, q := range p.Traffic {
				boxes[q.PMU] = true
				if len(boxes) == 1 {
					traffic = append(traffic, enc{boxKind(q.PMU), q.Attr.Config, q.BytesPerCount, q.Direction})
				}
				if len(q.CPUs) == 0 {
					t.Errorf("%s/%s: traffic events are system-wide but have no CPUs", q.PMU, q.Name)
				}
			}
			if !slices.Equal(traffic, tt.traffic) {
				t.Errorf("traffic of the first box\n got %v\nwant %v", traffic, tt.traffic)
			}
			if len(boxes) != tt.boxes || len(p.Traffic) != tt.boxes*len(tt.traffic) {
				t.Errorf("%d traffic events on %d boxes, want %d on %d", len(p.Traffic), len(boxes), tt.boxes*len(tt.traffic), tt.boxes)
			}
			if p.Counters != tt.counters {
				t.Errorf("counters %d, want %d", p.Counters, tt.counters)
			}
			var codes []string
			for _, pr := range p.Problems {
				codes = append(codes, pr.Code)
			}
			if !slices.Equal(codes, tt.problems) {
				t.Errorf("problems %v, want %v:\n%v", codes, tt.problems, p.Problems)
			}
		})
	}
}

// boxKind strips the box number from a PMU name.
func boxKind(name string) string {
	base := strings.TrimRight(name, "0123456789")
	if base != name {
		return strings.TrimSuffix(base, "_")
	}
	return name
}

// intelUncore builds an Intel-style memory-controller PMU.
func intelUncore(name string, typ uint32, aliases map[string]Alias) *PMU {
	return &PMU{
		Name: name, Type: typ, CPUs: []int{0},
		Formats: map[string]Format{
			"event": {Field: "config", Bits: bitRange(0, 7)},
			"umask": {Field: "config", Bits: bitRange(8, 15)},
		},
		Aliases: aliases,
	}
}

func intelCore(name string) *PMU {
	return &PMU{Name: name, Type: 4, Formats: map[string]Format{
		"event": {Field: "config", Bits: bitRange(0, 7)},
		"umask": {Field: "config", Bits: bitRange(8, 15)},
	}}
}

func bitRange(lo, hi int) []int {
	var bits []int
	for b := lo; b <= hi; b++ {
		bits = append(bits, b)
	}
	return bits
}

const mibPerCAS = 6.103515625e-5 // 64 B in MiB, the kernel's scale

func TestPlanEncodesRawWhenTheKernelAliasIsWrong(t *testing.T) {
	// Ice Lake-SP kernels before the CAS fix alias the Haswell umasks.
	cpu := machine.CPUInfo{Vendor: "GenuineIntel", Family: 6, Model: 0x6a, Stepping: 6}
	pmus := PMUs{
		"cpu": intelCore("cpu"),
		"uncore_imc_0": intelUncore("uncore_imc_0", 12, map[string]Alias{
			"cas_count_read":  {Terms: "event=0x04,umask=0x03", Scale: mibPerCAS, Unit: "MiB"},
			"cas_count_write": {Terms: "event=0x04,umask=0x0c", Scale: mibPerCAS, Unit: "MiB"},
		}),
	}
	p := planFor(cpu, pmus, machine.Topology{})
	want := map[string]uint64{"cas_count_read": 0x0f04, "cas_count_write": 0x3004}
	for _, q := range p.Traffic {
		if q.Attr.Config != want[q.Name] || q.Alias != "" {
			t.Errorf("%s: config %#x alias %q, want %#x encoded raw", q.Name, q.Attr.Config, q.Alias, want[q.Name])
		}
	}
	if n := countCode(p.Problems, ProblemKernelAlias); n != 2 {
		t.Errorf("want one kernel-alias problem per wrong alias, got %d: %v", n, p.Problems)
	}
}

func TestPlanKeepsCatalogueBytesWhenTheKernelScaleIsWrong(t *testing.T) {
	// Kernels before the free-running scale fix counted 4-byte units.
	cpu := machine.CPUInfo{Vendor: "GenuineIntel", Family: 6, Model: 0x8c}
	aliases := map[string]Alias{
		"data_read":  {Terms: "event=0xff,umask=0x20", Scale: 3.814697266e-6, Unit: "MiB"},
		"data_write": {Terms: "event=0xff,umask=0x30", Scale: mibPerCAS, Unit: "MiB"},
	}
	pmus := PMUs{"cpu": intelCore("cpu"), "uncore_imc_free_running_0": intelUncore("uncore_imc_free_running_0", 20, aliases)}
	p := planFor(cpu, pmus, machine.Topology{})
	if len(p.Traffic) != 2 {
		t.Fatalf("got %d traffic events, want 2", len(p.Traffic))
	}
	for _, q := range p.Traffic {
		if q.BytesPerCount != 64 || q.Alias != q.Name {
			t.Errorf("%s: %g bytes/count via alias %q, want 64 via the alias", q.Name, q.BytesPerCount, q.Alias)
		}
	}
	if n := countCode(p.Problems, ProblemKernelAlias); n != 1 {
		t.Errorf("want one problem for the mis-scaled alias, got %d: %v", n, p.Problems)
	}
}

func countCode(ps []Problem, code string) int {
	n := 0
	for _, p := range ps {
		if p.Code == code {
			n++
		}
	}
	return n
}

func TestGroupsFitTheCounters(t *testing.T) {
	ev := func(pmu string, slots int) WorkEvent {
		return WorkEvent{Event: Event{Name: pmu, PMU: pmu}, Slots: slots}
	}
	tests := []struct {
		name     string
		counters int
		work     []WorkEvent
		want     []int // group sizes
	}{
		{"four per group", 4, []WorkEvent{ev("cpu", 1), ev("cpu", 1), ev("cpu", 1), ev("cpu", 1), ev("cpu", 1)}, []int{4, 1}},
		{"AMD pairs, three per six counters", 6, []WorkEvent{ev("cpu", 2), ev("cpu", 2), ev("cpu", 2), ev("cpu", 2)}, []int{3, 1}},
		{"one PMU per group", 8, []WorkEvent{ev("cpu_core", 1), ev("cpu_atom", 1), ev("cpu_core", 1)}, []int{2, 1}},
		{"no limit", 0, []WorkEvent{ev("cpu", 1), ev("cpu", 1), ev("cpu", 1)}, []int{3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []int
			for _, g := range (Plan{Work: tt.work, Counters: tt.counters}).Groups() {
				got = append(got, len(g))
				for _, w := range g[1:] {
					if w.PMU != g[0].PMU {
						t.Errorf("group mixes %s and %s", g[0].PMU, w.PMU)
					}
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("group sizes %v, want %v", got, tt.want)
			}
		})
	}
}

func TestPlanErrSaysWhyWorkCannotBeCounted(t *testing.T) {
	zen4 := machine.CPUInfo{Vendor: "AuthenticAMD", Family: 0x19, Model: 0x11, Flags: []string{"hypervisor"}}
	tests := []struct {
		name string
		cpu  machine.CPUInfo
		pmus PMUs
		want error
	}{
		{"VM without PMU", zen4, PMUs{"software": {Name: "software", Type: 1}}, ErrNoPMU},
		{"unknown CPU", machine.CPUInfo{Vendor: "GenuineIntel", Family: 6, Model: 0x01}, PMUs{"cpu": intelCore("cpu")}, ErrUnsupportedCPU},
		{"Haswell has no FP event", machine.CPUInfo{Vendor: "GenuineIntel", Family: 6, Model: 0x3c}, PMUs{"cpu": intelCore("cpu")}, ErrNotSupported},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := planFor(tt.cpu, tt.pmus, machine.Topology{})
			if err := p.Err(); !errors.Is(err, tt.want) {
				t.Errorf("Err() = %v, want %v", err, tt.want)
			}
		})
	}
	ok := planFor(machine.CPUInfo{Vendor: "GenuineIntel", Family: 6, Model: 0x6a}, PMUs{"cpu": intelCore("cpu")}, machine.Topology{})
	if err := ok.Err(); err != nil {
		t.Errorf("Ice Lake-SP with a core PMU: Err() = %v, want nil", err)
	}
}

func TestPlanTellsWhichCoresToPinTo(t *testing.T) {
	cpu := machine.CPUInfo{Vendor: "GenuineIntel", Family: 6, Model: 0x97}
	pmus := PMUs{"cpu_core": intelCore("cpu_core"), "cpu_atom": intelCore("cpu_atom")}
	p := planFor(cpu, pmus, machine.Topology{CoreTypes: map[string][]int{"cpu_core": {0, 1, 2, 3}, "cpu_atom": {4, 5}}})
	for _, pr := range p.Problems {
		if pr.Code == ProblemECoreUnmeasured {
			if !strings.Contains(pr.Fix, "taskset -c 0-3") {
				t.Errorf("fix %q does not name the P-cores 0-3", pr.Fix)
			}
			return
		}
	}
	t.Errorf("no e-core-unmeasured problem: %v", p.Problems)
}

func TestHybridPartWithECoresOffUsesTheCPUPMU(t *testing.T) {
	cpu := machine.CPUInfo{Vendor: "GenuineIntel", Family: 6, Model: 0xbd} // Lunar Lake
	p := planFor(cpu, PMUs{"cpu": intelCore("cpu")}, machine.Topology{})
	if len(p.Work) != 6 {
		t.Fatalf("got %d work events, want the 6 P-core FP_ARITH_OPS_RETIRED events", len(p.Work))
	}
	for _, w := range p.Work {
		if w.PMU != "cpu" || !strings.HasPrefix(w.Name, "FP_ARITH_OPS_RETIRED.") {
			t.Errorf("%s on %s, want FP_ARITH_OPS_RETIRED on cpu", w.Name, w.PMU)
		}
	}
	adl := planFor(machine.CPUInfo{Vendor: "GenuineIntel", Family: 6, Model: 0x97}, PMUs{"cpu": intelCore("cpu")}, machine.Topology{})
	if n := countCode(adl.Problems, ProblemECoreUnmeasured); n != 0 || len(adl.Work) != 6 {
		t.Errorf("Alder Lake without E-cores: %d work events, problems %v", len(adl.Work), adl.Problems)
	}
}

// TestEveryCatalogueEntryEncodes resolves every entry against PMUs with
// the kernel's format layouts, so that a typo in a term list fails here
// rather than on the one machine that has the CPU.
func TestEveryCatalogueEntryEncodes(t *testing.T) {
	amdCore := &PMU{Name: "cpu", Type: 4, Formats: map[string]Format{
		"event": {Field: "config", Bits: append(bitRange(0, 7), bitRange(32, 35)...)},
		"umask": {Field: "config", Bits: bitRange(8, 15)},
	}}
	df := &PMU{Name: "amd_df", Type: 11, CPUs: []int{0}, Formats: map[string]Format{
		"event": {Field: "config", Bits: append(bitRange(0, 7), bitRange(32, 37)...)},
		"umask": {Field: "config", Bits: append(bitRange(8, 15), bitRange(24, 27)...)},
	}}
	umc := &PMU{Name: "amd_umc_0", Type: 12, CPUs: []int{0}, Formats: map[string]Format{
		"event":    {Field: "config", Bits: bitRange(0, 7)},
		"rdwrmask": {Field: "config", Bits: bitRange(8, 9)},
	}}
	arm := &PMU{Name: "armv8_pmuv3_0", Type: 8, Formats: map[string]Format{"event": {Field: "config", Bits: bitRange(0, 15)}}}
	for _, a := range catalogueEntries() {
		t.Run(a.Microarch, func(t *testing.T) {
			pmus := PMUs{
				"cpu": intelCore("cpu"), "cpu_core": intelCore("cpu_core"), "cpu_atom": intelCore("cpu_atom"), "cpu_lowpower": intelCore("cpu_lowpower"),
				"uncore_imc": intelUncore("uncore_imc", 10, nil), "uncore_imc_0": intelUncore("uncore_imc_0", 11, nil),
				"uncore_imc_free_running_0": intelUncore("uncore_imc_free_running_0", 12, nil),
				"amd_df":                    df, "amd_umc_0": umc,
			}
			if strings.HasPrefix(a.Microarch, "amd") {
				pmus["cpu"] = amdCore
			}
			if strings.HasPrefix(a.Microarch, "neoverse") {
				pmus = PMUs{"armv8_pmuv3_0": arm}
			}
			var work []workSpec
			for _, w := range a.Work {
				work = append(work, w)
				if w.Source == "" || w.Flops <= 0 || w.Precision == "" {
					t.Errorf("%s: source %q, flops %g, precision %q", w.Name, w.Source, w.Flops, w.Precision)
				}
			}
			p := Plan{Identity: machine.Identity{Microarch: a.Microarch}}
			p.addWork(a, pmus)
			p.addTraffic(a, pmus, true)
			if len(p.Work) != len(work) {
				t.Errorf("%d of %d work events encoded: %v", len(p.Work), len(work), p.Problems)
			}
			for _, pr := range p.Problems {
				if pr.Code == ProblemEncode {
					t.Error(pr)
				}
			}
			for _, set := range a.Traffic {
				for _, q := range set.Events {
					if q.Source == "" || q.Bytes <= 0 || !slices.Contains([]string{Read, Write, Total}, q.Direction) {
						t.Errorf("%s: source %q, bytes %g, direction %q", q.Name, q.Source, q.Bytes, q.Direction)
					}
				}
			}
			if len(a.Traffic) > 0 && len(p.Traffic) == 0 {
				t.Errorf("no traffic event resolved: %v", p.Problems)
			}
		})
	}
}

func TestLoadPlanRejectsBadTrees(t *testing.T) {
	sysfs, procfs := machineFS(t, "skylake-sp")
	tests := []struct {
		name          string
		sysfs, procfs fs.FS
		want          string
	}{
		{"no cpuinfo", sysfs, fstest.MapFS{}, "cpuinfo"},
		{"empty sysfs", fstest.MapFS{}, procfs, "devices"},
		{"PMU without type", fstest.MapFS{
			"devices/system/cpu/online":                            {Data: []byte("0\n")},
			"bus/event_source/devices/cpu/format/event":            {Data: []byte("config:0-7\n")},
			"devices/system/cpu/cpu0/topology/core_id":             {Data: []byte("0\n")},
			"devices/system/cpu/cpu0/topology/physical_package_id": {Data: []byte("0\n")},
		}, procfs, "cpu"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := LoadPlan(machine.TreeHost(tt.sysfs, tt.procfs))
			if err == nil {
				t.Fatal("LoadPlan succeeded on a bad tree")
			}
			if msg := err.Error(); strings.Contains(msg, "\n") || !strings.Contains(msg, tt.want) {
				t.Errorf("error %q: want one line naming %q", msg, tt.want)
			}
		})
	}
}

func TestVMWithVirtualPMUCountsWorkButNotTraffic(t *testing.T) {
	cpu := machine.CPUInfo{Vendor: "GenuineIntel", Family: 6, Model: 0x8f, Flags: []string{"hypervisor"}}
	p := planFor(cpu, PMUs{"cpu": intelCore("cpu"), "software": {Name: "software", Type: 1}}, machine.Topology{})
	if !p.WorkUsable() || p.TrafficUsable() || p.Err() != nil {
		t.Fatalf("work %v traffic %v err %v: want work only", p.WorkUsable(), p.TrafficUsable(), p.Err())
	}
	for _, pr := range p.Problems {
		if pr.Code == ProblemNoTrafficPMU {
			if !strings.Contains(pr.What, "uncore_imc") {
				t.Errorf("problem %q: want the missing PMU named", pr)
			}
			return
		}
	}
	t.Errorf("no no-traffic-pmu problem: %v", p.Problems)
}

// planFor is the plan of cpu with pmus and topo, the NMI watchdog and the
// hypervisor unknown.
func planFor(cpu machine.CPUInfo, pmus PMUs, topo machine.Topology) Plan {
	return newPlan(cpu, pmus, topo, -1, "")
}
