package doctor

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/rprof/rprof/internal/testutil"
	"github.com/rprof/rprof/machine"
	"github.com/rprof/rprof/pmu"
	"github.com/rprof/rprof/roofline"
)

// TestRoofsBLASEnvIsInjected: the BLAS variables come from the lookup
// given, and a captured tree reads neither them nor this host's kernels.
func TestRoofsBLASEnvIsInjected(t *testing.T) {
	env := map[string]string{"OPENBLAS_CORETYPE": "Haswell", "BLIS_ARCH_TYPE": "zen3", "HOME": "/root"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	tree := fstest.MapFS{"devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq": {Data: []byte("3000000\n")}}
	live := roofsPrereqs(true, tree, 4, lookup)
	if got := strings.Join(live.BLASEnv, " "); got != "OPENBLAS_CORETYPE=Haswell BLIS_ARCH_TYPE=zen3" {
		t.Errorf("BLAS env %q", got)
	}
	if live.Clock != "cpufreq" {
		t.Errorf("clock %q with cpuinfo_max_freq present", live.Clock)
	}
	captured := roofsPrereqs(false, fstest.MapFS{}, 4, lookup)
	if captured.BLASEnv != nil || captured.Kernels != nil || captured.Allowed != 0 || captured.Clock != "measured" {
		t.Errorf("captured tree read the host: %+v", captured)
	}
}

// TestDiagnoseACapturedTreeReadsOnlyTheTree runs the doctor's checks on
// fake machines through their Host: the tree's CPU, PMUs and declared
// caches, and nothing of this machine (no probe, BLAS, kernels or
// environment).
func TestDiagnoseACapturedTreeReadsOnlyTheTree(t *testing.T) {
	tests := []struct {
		machine string
		l3      int64
		usable  bool
	}{
		{"vm-intel-amx", 480 << 20, false},
		{"zen4", 32 << 20, true},
	}
	env := func(string) (string, bool) { return "forced", true }
	for _, tt := range tests {
		t.Run(tt.machine, func(t *testing.T) {
			h := machine.TreeHost(testutil.MachineFS(t, tt.machine))
			r, err := Diagnose(h, env)
			if err != nil {
				t.Fatal(err)
			}
			cpu, _ := h.CPU()
			if r.Diagnosis.Live || r.Diagnosis.CPU.ModelName != cpu.ModelName || r.Diagnosis.Usable() != tt.usable {
				t.Errorf("diagnosis live %v, CPU %q, usable %v; want the tree's %q, usable %v", r.Diagnosis.Live, r.Diagnosis.CPU.ModelName, r.Diagnosis.Usable(), cpu.ModelName, tt.usable)
			}
			if r.Regions.Probed || r.BLAS.Checked || r.Roofs.Kernels != nil || r.Roofs.BLASEnv != nil || r.Roofs.Online != r.Diagnosis.Topology.Threads {
				t.Errorf("regions %+v, BLAS %+v, roofs %+v: want nothing of this machine", r.Regions, r.BLAS, r.Roofs)
			}
			if r.Caches.Source != roofline.CacheSourceSysfs || r.Caches.Instances[len(r.Caches.Instances)-1].SizeBytes != tt.l3 {
				t.Errorf("caches %+v, want sysfs's, the last level %d bytes", r.Caches, tt.l3)
			}
		})
	}
}

func TestUprobesAreProbedWhereTheUprobePMUExists(t *testing.T) {
	refused := fmt.Errorf("load an eBPF kprobe program: %w", pmu.ErrPermission)
	tests := []struct {
		name      string
		d         pmu.Diagnosis
		bpf       error
		usable    bool
		probed    bool
		problemed bool
	}{
		{"loads", pmu.Diagnosis{Live: true, PMUs: []string{"software", "uprobe"}}, nil, true, true, false},
		{"refused without CAP_BPF", pmu.Diagnosis{Live: true, PMUs: []string{"uprobe"}, CapsKnown: true}, refused, false, true, true},
		{"refused with CAP_BPF", pmu.Diagnosis{Live: true, PMUs: []string{"uprobe"}, CapsKnown: true, CapEff: 1 << capBPF}, refused, false, true, false},
		{"no uprobe PMU", pmu.Diagnosis{Live: true, PMUs: []string{"cpu"}}, nil, false, false, false},
		{"captured tree", pmu.Diagnosis{PMUs: []string{"uprobe"}}, refused, true, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := tt.d
			c := uprobeCheck(&d, func() error { return tt.bpf })
			if c.Usable != tt.usable || c.Probed != tt.probed {
				t.Errorf("uprobes %+v, want usable %v, probed %v", c, tt.usable, tt.probed)
			}
			got := slices.ContainsFunc(d.Problems, func(p pmu.Problem) bool { return p.Code == ProblemBPF })
			if got != tt.problemed {
				t.Errorf("problems %v: bpf problem %v, want %v", d.Problems, got, tt.problemed)
			}
		})
	}
}
