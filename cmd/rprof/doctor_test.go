package main

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rprof/rprof/internal/testutil"
	"github.com/rprof/rprof/pmu"
)

// TestDoctorGolden diagnoses each captured tree: nothing is opened there,
// so the output depends on the tree alone.
func TestDoctorGolden(t *testing.T) {
	for _, m := range fakeMachines {
		for _, format := range []string{"txt", "json"} {
			t.Run(m+"."+format, func(t *testing.T) {
				args := append([]string{"doctor"}, machineArgs(m)...)
				if format == "json" {
					args = append(args, "--json")
				}
				code, stdout, stderr := rprofCLI(t, args...)
				if code != exitOK && code != exitFailure || stderr != "" {
					t.Fatalf("exit %d, stderr %q", code, stderr)
				}
				testutil.Golden(t, filepath.Join("testdata", "doctor", m+"."+format), []byte(stdout))
			})
		}
	}
}

func TestDoctorExitsOneUnlessWorkAndTrafficAreUsable(t *testing.T) {
	tests := map[string]int{
		"zen4":        exitOK,      // both resolve; permissions unknown for a tree
		"vm-zen5":     exitFailure, // no hardware PMU
		"neoverse-v2": exitFailure, // no DRAM-traffic table for Arm SoCs
	}
	for m, want := range tests {
		if code, _, _ := rprofCLI(t, append([]string{"doctor"}, machineArgs(m)...)...); code != want {
			t.Errorf("doctor on %s: exit %d, want %d", m, code, want)
		}
	}
}

// TestDoctorOnThisMachine runs the live diagnosis (no golden: it depends on
// the host). Where no hardware counter opens, as on the KVM guests rprof is
// developed on, it must exit 1 and say why and what would fix it.
func TestDoctorOnThisMachine(t *testing.T) {
	code, stdout, stderr := rprofCLI(t, "doctor", "--json")
	if stderr != "" {
		t.Fatalf("stderr %q", stderr)
	}
	var doc doctorDoc
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("%v:\n%s", err, stdout)
	}
	if !doc.Probed || doc.Machine != "this machine" {
		t.Errorf("live doctor: probed %v, machine %q", doc.Probed, doc.Machine)
	}
	if want := map[bool]int{true: exitOK, false: exitFailure}[doc.Usable]; code != want {
		t.Errorf("usable %v but exit %d", doc.Usable, code)
	}
	if !errors.Is(pmu.HaveHardwareCounters(), pmu.ErrNoPMU) {
		return
	}
	if doc.HardwarePMU || doc.Work.Usable || doc.Traffic.Usable || code != exitFailure {
		t.Errorf("no hardware PMU here, but doctor says hardware %v, work %v, traffic %v, exit %d", doc.HardwarePMU, doc.Work.Usable, doc.Traffic.Usable, code)
	}
	_, text, _ := rprofCLI(t, "doctor")
	for _, want := range []string{"no hardware PMU", "fix:", "Counting is not usable here"} {
		if !strings.Contains(text, want) {
			t.Errorf("doctor text does not say %q:\n%s", want, text)
		}
	}
}
