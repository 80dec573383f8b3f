package main

import (
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rprof/rprof/cmd/rprof/internal/advice"
	"github.com/rprof/rprof/cmd/rprof/internal/flagval"
	"github.com/rprof/rprof/cmd/rprof/internal/render"
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
	var doc render.DoctorDoc
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

// Every way forward the doctor and rprof run's refusal offer is a command
// rprof run accepts: its flags exist and parse (exit status 2 would say
// otherwise), whatever this machine then makes of it.
func TestWaysForwardAreCommandsRunAccepts(t *testing.T) {
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	ways := advice.WaysForward([]string{"/bin/true"}, []string{"--overhead", "/bin/true 1", "--repeat", "3"}, "1e3", "1e4", nil)
	if len(ways) != 4 {
		t.Fatalf("%d ways, want the PMU fix, emulation, --work/--traffic and -e", len(ways))
	}
	for _, w := range ways {
		args := strings.Fields(w.Command)
		if args[0] != "rprof" {
			t.Fatalf("%q is not an rprof command", w.Command)
		}
		if code, _, stderr := rprofCLI(t, args[1:]...); code == exitUsage {
			t.Errorf("%s: exit %d (usage):\n%s", w.Command, code, stderr)
		}
	}
}

// Without a hardware PMU, rprof run's refusal lists the same ways forward
// as the doctor, for the program it was given.
func TestRunRefusalGivesTheDoctorsWaysForward(t *testing.T) {
	if !errors.Is(pmu.HaveHardwareCounters(), pmu.ErrNoPMU) {
		t.Skip("this machine has hardware counters: rprof run does not refuse")
	}
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	code, _, stderr := rprofCLI(t, "run", "--", "/bin/true", "it's")
	if code != exitInternal {
		t.Fatalf("exit %d, want %d:\n%s", code, exitInternal, stderr)
	}
	_, doctor, _ := rprofCLI(t, "doctor")
	for _, want := range []string{"--count emulate -- /bin/true 'it'\\''s'", "--work FLOPS --traffic BYTES -- /bin/true", "-e task-clock"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("refusal lacks %q:\n%s", want, stderr)
		}
	}
	for _, w := range advice.WaysForward(nil, nil, "", "", nil) {
		if !strings.Contains(stderr, w.What) || !strings.Contains(doctor, w.What) {
			t.Errorf("%q not in both the refusal and the doctor", w.What)
		}
	}
}

// The refusal's ways forward keep the flags the user gave (--overhead,
// --json...), less those that choose how to count, which each way sets.
func TestWithoutFlagsDropsTheCountingChoiceAndKeepsTheRest(t *testing.T) {
	fset := newFlagSet(&env{stderr: io.Discard}, "run")
	var mf measureFlags
	mf.register(fset)
	fset.Int("repeat", 1, "")
	fset.String("json", "", "")
	args := []string{"--repeat", "5", "--count=pmu", "-e", "page-faults", "--likwid-markers", "--overhead", "./t 1", "--work", "1e3", "--json=t.json", "--", "./t", "20"}
	if err := fset.Parse(args); err != nil {
		t.Fatal(err)
	}
	got := flagval.Without(args[:len(args)-len(fset.Args())], fset, "count", "e", "work", "traffic")
	want := []string{"--repeat", "5", "--likwid-markers", "--overhead", "./t 1", "--json=t.json"}
	if !slices.Equal(got, want) {
		t.Errorf("kept %q, want %q", got, want)
	}
}
