package main

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rprof/rprof/machine"
	"github.com/rprof/rprof/measure"
	"github.com/rprof/rprof/roofline"
	"github.com/rprof/rprof/roofs"
)

// errStop ends a command at its library call, whose input a test checks.
var errStop = errors.New("stopped by the test")

// TestGlobalMachineFlagsReachRunAndRoofs gives the global --sysfs and
// --procfs of a guest whose sysfs declares a 480 MiB L3: run's backend is
// chosen for that host, and roofs' declared cache sizes are its.
func TestGlobalMachineFlagsReachRunAndRoofs(t *testing.T) {
	trees := machineArgs("vm-intel-amx")
	var hosts []*machine.Host
	var stderr bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &bytes.Buffer{}, stderr: &stderr,
		measure: func(_ context.Context, cfg measure.Config) (*roofline.Point, error) {
			hosts = append(hosts, cfg.Counting.Host)
			return nil, errStop
		},
		roofs: func(_ context.Context, o roofs.Options) (*roofs.Report, error) {
			hosts = append(hosts, o.Host)
			return nil, errStop
		},
	}
	out := filepath.Join(t.TempDir(), "roofs.json")
	inline := []string{"--sysfs=" + trees[1], "--procfs=" + trees[3]}
	for _, args := range [][]string{
		append(append([]string{}, trees...), "run", "--", "true"),
		append(append([]string{}, inline...), "roofs", "--threads", "1", "-o", out),
	} {
		if code := runEnv(context.Background(), e, args); code != exitInternal {
			t.Fatalf("rprof %v: exit %d, want the test's stop (125): %s", args, code, stderr.String())
		}
	}
	if len(hosts) != 2 {
		t.Fatalf("%d library calls, want run's and roofs'", len(hosts))
	}
	for i, h := range hosts {
		if h == nil || h.Live {
			t.Fatalf("call %d: host %+v, want the captured tree", i, h)
		}
		cpu, _ := h.CPU()
		c := h.Caches()
		var l3 int64
		for _, inst := range c.Instances {
			if inst.Level == 3 {
				l3 = inst.SizeBytes
			}
		}
		if cpu.ModelName != "Intel Xeon Processor (Icelake)" || c.Source != roofline.CacheSourceSysfs || l3 != 480<<20 {
			t.Errorf("call %d: CPU %q, caches from %q with L3 %d; want the guest's, sysfs's 480 MiB", i, cpu.ModelName, c.Source, l3)
		}
	}
}

func TestGlobalMachineFlagsRejectBadTrees(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"missing sysfs", []string{"--sysfs", missing, "plot", "x.json"}, "--sysfs " + missing + ": no such directory"},
		{"procfs without a value", []string{"--procfs"}, "flag needs an argument: --procfs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := rprofCLI(t, tt.args...)
			if code != exitUsage || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr, tt.want)
			}
		})
	}
}

// events and doctor take the trees as global flags or after their name
// alike.
func TestEventsAndDoctorTakeTheGlobalTrees(t *testing.T) {
	trees := machineArgs("zen4")
	for _, cmd := range []string{"events", "doctor"} {
		_, after, _ := rprofCLI(t, append([]string{cmd, "--json"}, trees...)...)
		_, before, _ := rprofCLI(t, append(append([]string{}, trees...), cmd, "--json")...)
		if after != before || !strings.Contains(before, "9654") {
			t.Errorf("rprof %s: global trees give\n%s\nthe command's own give\n%s", cmd, before, after)
		}
	}
}
