package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rprof/rprof/internal/testutil"
)

// fakeMachines are the captured and constructed trees of the pmu package.
var fakeMachines = []string{
	"skylake-sp", "icelake-sp", "sapphirerapids", "graniterapids-oldkernel", "graniterapids-newkernel",
	"alderlake", "zen3", "zen4", "zen5", "neoverse-v2", "vm-zen5", "vm-zen5-firecracker", "vm-intel-amx",
}

func machineArgs(machine string) []string {
	dir := filepath.Join("..", "..", "pmu", "testdata", "machines", machine)
	return []string{"--sysfs", filepath.Join(dir, "sys"), "--procfs", filepath.Join(dir, "proc")}
}

func TestEventsGolden(t *testing.T) {
	for _, m := range fakeMachines {
		for _, format := range []string{"txt", "json"} {
			t.Run(m+"."+format, func(t *testing.T) {
				args := append([]string{"events"}, machineArgs(m)...)
				if format == "json" {
					args = append(args, "--json")
				}
				code, stdout, stderr := rprofCLI(t, args...)
				if code != exitOK || stderr != "" {
					t.Fatalf("exit %d, stderr %q", code, stderr)
				}
				testutil.Golden(t, filepath.Join("testdata", "events", m+"."+format), []byte(stdout))
			})
		}
	}
}

// TestEventsJSONHasTheIssueFields decodes the JSON into the fields the
// issue promises, so that a renamed field fails even when goldens are
// regenerated.
func TestEventsJSONHasTheIssueFields(t *testing.T) {
	code, stdout, _ := rprofCLI(t, append([]string{"events", "--json"}, machineArgs("skylake-sp")...)...)
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	var doc struct {
		CPU struct {
			Vendor    string `json:"vendor"`
			Family    *int   `json:"family"`
			Model     *int   `json:"model"`
			Microarch string `json:"microarch"`
		} `json:"cpu"`
		Work []struct {
			Name, PMU, Config, Precision string
			Type                         *uint32  `json:"type"`
			Flops                        *float64 `json:"flops_per_count"`
		} `json:"work"`
		Traffic []struct {
			Name, PMU, Config, Direction string
			Type                         *uint32  `json:"type"`
			Bytes                        *float64 `json:"bytes_per_count"`
			CPUs                         []int    `json:"cpus"`
		} `json:"traffic"`
		Problems []string `json:"problems"`
	}
	dec := json.NewDecoder(strings.NewReader(stdout))
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	if doc.CPU.Vendor != "GenuineIntel" || doc.CPU.Family == nil || *doc.CPU.Model != 0x55 || doc.CPU.Microarch != "skylakex" {
		t.Errorf("cpu %+v", doc.CPU)
	}
	if len(doc.Work) != 8 || doc.Work[0].Config != "0x1c7" || *doc.Work[0].Type != 4 || *doc.Work[0].Flops != 1 || doc.Work[0].Precision != "fp64" {
		t.Errorf("work %+v", doc.Work)
	}
	if len(doc.Traffic) != 12 || doc.Traffic[0].Config != "0x304" || *doc.Traffic[0].Bytes != 64 || doc.Traffic[0].Direction != "read" || len(doc.Traffic[0].CPUs) == 0 {
		t.Errorf("traffic %+v", doc.Traffic)
	}
	if doc.Problems == nil {
		t.Error("problems must be a list, even when empty")
	}
}

func TestEventsAndDoctorRejectBadTreesInOneLine(t *testing.T) {
	empty := t.TempDir()
	vm := machineArgs("vm-zen5")
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"missing sysfs", []string{"--sysfs", filepath.Join(empty, "nope"), "--procfs", vm[3]}, exitUsage, "--sysfs " + filepath.Join(empty, "nope") + ": no such directory"},
		{"procfs is a file", []string{"--sysfs", vm[1], "--procfs", filepath.Join(vm[3], "cpuinfo")}, exitUsage, "not a directory"},
		{"empty procfs", []string{"--sysfs", vm[1], "--procfs", empty}, exitUsage, "cpuinfo"},
		{"partial sysfs", []string{"--sysfs", empty, "--procfs", vm[3]}, exitUsage, "sysfs " + empty},
		{"stray argument", append(append([]string{}, vm...), "extra"), exitUsage, `unexpected argument "extra"`},
		{"unknown flag", []string{"--sysf", "x"}, exitUsage, "unknown flag --sysf; did you mean --sysfs?"},
	}
	for _, cmd := range []string{"events", "doctor"} {
		for _, tt := range tests {
			t.Run(cmd+"/"+tt.name, func(t *testing.T) {
				code, stdout, stderr := rprofCLI(t, append([]string{cmd}, tt.args...)...)
				if code != tt.code {
					t.Errorf("exit %d, want %d (stderr %q)", code, tt.code, stderr)
				}
				if !strings.Contains(stderr, tt.want) {
					t.Errorf("stderr %q does not say %q", stderr, tt.want)
				}
				if first, _, _ := strings.Cut(stderr, "\n"); !strings.HasPrefix(first, "rprof "+cmd+": ") && tt.name != "unknown flag" {
					t.Errorf("first line %q should be one line naming the command", first)
				}
				if strings.Contains(stderr, "goroutine") || stdout != "" {
					t.Errorf("stdout %q, stderr %q", stdout, stderr)
				}
			})
		}
	}
}
