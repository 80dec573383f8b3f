package main

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rprof/rprof/dnn"
	"github.com/rprof/rprof/dnnrun"
	"github.com/rprof/rprof/internal/docfile"
	"github.com/rprof/rprof/internal/testutil"
	"github.com/rprof/rprof/measure"
	"github.com/rprof/rprof/regions"
	"github.com/rprof/rprof/roofline"
)

// probedTrace is oneDNN 2.6.3's trace of the test program (every kind with
// a formula), as captured here; its header says nthr:2.
const probedTrace = "../../dnn/testdata/capture-2.6.3-allkinds.txt"

// recordedProbe plays measure.Run for rprof dnn --count pmu on a PMU host:
// it prints the recorded trace as the program would, hands the probed
// calls to CallGroups, and gives each group the region measure would: its
// calls, their time, and W summed from each call's recorded count.
type recordedProbe struct {
	// call makes the probed call of the k-th execution, whose record is r
	// (nil: no call was recorded for it).
	call func(k int, r *dnn.Record) *regions.Call
	// work is the FP work the counters saw in a call (nil: no FP counters).
	work func(r *dnn.Record) float64
	cfg  measure.Config
}

func (f *recordedProbe) measure(t *testing.T) func(context.Context, measure.Config) (*roofline.Point, error) {
	return func(_ context.Context, cfg measure.Config) (*roofline.Point, error) {
		f.cfg = cfg
		b, err := os.ReadFile(probedTrace)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(cfg.Target.Stdout, "program output\n")
		cfg.Target.Stdout.Write(b)
		var execs []*dnn.Record
		var calls []regions.Call
		perCall := map[uint64]float64{} // a call's W by its start
		for _, line := range strings.Split(string(b), "\n") {
			r, ok, _ := dnn.ParseLine(line)
			if !ok || !r.Exec() {
				continue
			}
			execs = append(execs, &r)
			if c := f.call(len(execs)-1, &r); c != nil {
				c.Start = uint64(len(execs)) * 1e6
				c.End = c.Start + uint64(c.MeasuredSeconds*1e9)
				if f.work != nil {
					perCall[c.Start] = f.work(&r)
				}
				calls = append(calls, *c)
			}
		}
		// The machine the point was measured on is recorded too, so that
		// the foreign-roofs footnote does not name the live host's CPU.
		p := &roofline.Point{Source: roofline.SourceEvents, Seconds: 0.25, Machine: recordedHost, Flags: []roofline.Flag{
			{Code: roofline.FlagMissingCounter, Message: "work and traffic were not measured: only the time and the regions were measured"},
			{Code: roofline.FlagNoRegionTraffic, Subject: roofline.SubjectRegions, Message: "regions: DRAM traffic is not attributed to regions"},
		}}
		if f.work != nil {
			// The program's W outside primitive calls: 10 MFLOP.
			all := 10e6
			for _, r := range execs {
				all += f.work(r)
			}
			p.Source, p.Flags, p.WorkFlops = roofline.SourceCounters, p.Flags[1:], &all
		}
		for _, g := range cfg.Hooks.CallGroups(calls) {
			r := roofline.Region{Name: g.Name, Probe: "/usr/lib/libdnnl.so.2:dnnl_primitive_execute", ProbeFirst: "push",
				Calls: uint64(len(g.Calls)), ProbeCostSeconds: 2e-6, CountedFraction: 1}
			var w float64
			for _, c := range g.Calls {
				r.Seconds += c.Seconds
				r.MeasuredSeconds += c.MeasuredSeconds
				w += perCall[c.Start]
			}
			r.MeanSeconds = r.Seconds / float64(r.Calls)
			if f.work != nil {
				r.WorkFlops = &w
			}
			p.Regions = append(p.Regions, r)
		}
		return p, nil
	}
}

// recordedHost is the machine of the recorded points: not the roofs
// fixture's, so that their footnote says the roofs are foreign.
var recordedHost = roofline.Machine{CPU: roofline.CPU{Vendor: "AuthenticAMD", Family: 26, Model: 2, ModelName: "AMD EPYC (recorded host)"}, Cores: 2, Threads: 2}

// after returns the probed call of an execution: oneDNN's own time plus
// extra seconds.
func after(extra float64) func(int, *dnn.Record) *regions.Call {
	return func(k int, r *dnn.Record) *regions.Call {
		s := r.Millis/1e3 + extra
		return &regions.Call{TID: 7, Seconds: s, MeasuredSeconds: s + 2e-6, Outermost: true}
	}
}

// exactWork counts what the model says, except that a kernel on a padded
// blocked layout computes the padding (seed 004's GELU on 3 channels
// padded to 8).
func exactWork(r *dnn.Record) float64 {
	a := dnn.Model(r)
	if a.WorkFlops == nil {
		return 0
	}
	for _, t := range r.Tensors {
		if t.Tag == "aBcd8b" {
			return *a.WorkFlops * 8 / 3
		}
	}
	return *a.WorkFlops
}

func TestDNNCountPMUJoinsProbedCallsToTheTrace(t *testing.T) {
	for _, tt := range []struct {
		name  string
		probe recordedProbe
		args  []string
		// codes lists flag codes every point must carry; some, codes at
		// least one point carries.
		every, some []string
	}{
		{name: "pmu-host", probe: recordedProbe{call: after(50e-6), work: exactWork},
			some: []string{roofline.FlagCountedGap, roofline.FlagWorkerThreads}},
		{name: "no-pmu", probe: recordedProbe{call: after(50e-6)}, args: []string{"-e", "page-faults"}},
		{name: "a-call-missing", probe: recordedProbe{call: func(k int, r *dnn.Record) *regions.Call {
			if k == 3 {
				return nil
			}
			return after(0)(k, r)
		}}, every: []string{roofline.FlagCallMismatch}},
		// Two calls returned in another order than their lines were
		// printed: the longer execution got the shorter call.
		{name: "calls-out-of-order", probe: recordedProbe{call: func(k int, r *dnn.Record) *regions.Call {
			if k == 0 {
				return &regions.Call{TID: 7, Seconds: 1e-6, MeasuredSeconds: 3e-6, Outermost: true}
			}
			return after(0)(k, r)
		}}, some: []string{roofline.FlagCallMismatch}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("XDG_RUNTIME_DIR", t.TempDir()) // the machine lock of this test only
			out := filepath.Join(t.TempDir(), "points.json")
			args := append([]string{"dnn", "--count", "pmu", "--json", out, "--roofs", roofsFixture}, tt.args...)
			code, stdout, stderr := rprofMeasuring(t, tt.probe.measure(t), append(args, "--", "./allkinds")...)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if stdout != "program output\n" {
				t.Errorf("stdout %q: only the program's own lines pass", stdout)
			}
			cfg := tt.probe.cfg
			if cfg.Counting.Backend != "pmu" || !slices.Equal(cfg.Counting.Regions, []string{"libdnnl.so:dnnl_primitive_execute"}) ||
				!slices.Contains(cfg.Target.Env, "ONEDNN_VERBOSE=1") || !slices.Equal(cfg.Counting.Events, tt.args[min(1, len(tt.args)):]) {
				t.Errorf("measured with count %q regions %q events %q", cfg.Counting.Backend, cfg.Counting.Regions, cfg.Counting.Events)
			}
			testutil.Golden(t, "testdata/dnn/probed-"+tt.name+".golden", []byte(stderr))
			points, err := docfile.ReadPoints(out)
			if err != nil {
				t.Fatal(err)
			}
			seen := map[string]bool{}
			for _, p := range points {
				codes := map[string]bool{}
				for _, f := range p.Flags {
					codes[f.Code], seen[f.Code] = true, true
				}
				for _, r := range p.Regions {
					for _, f := range r.Flags {
						codes[f.Code], seen[f.Code] = true, true
					}
				}
				for _, c := range tt.every {
					if !codes[c] {
						t.Errorf("%s: no %s flag", p.Label, c)
					}
				}
				if codes[roofline.FlagCallMismatch] && tt.every != nil {
					if len(p.Regions) != 0 {
						t.Errorf("%s: calls attributed although they could not be joined", p.Label)
					}
					continue
				}
				if len(p.Regions) != 1 || p.Regions[0].Name != dnnrun.Execute || p.Regions[0].Calls != uint64(p.CI.N) {
					t.Errorf("%s: regions %+v, want one of %s with its %d calls", p.Label, p.Regions, dnnrun.Execute, p.CI.N)
				}
			}
			for _, c := range tt.some {
				if !seen[c] {
					t.Errorf("no point flagged %s", c)
				}
			}
		})
	}
}

// The gap flag names the padded GELU, and only groups whose counted W is
// off the analytic one.
func TestDNNCountPMUFlagsTheGapOfAPaddedLayoutOnly(t *testing.T) {
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	out := filepath.Join(t.TempDir(), "points.json")
	probe := recordedProbe{call: after(0), work: exactWork}
	if code, _, stderr := rprofMeasuring(t, probe.measure(t), "dnn", "--count", "pmu", "--json", out, "--", "./allkinds"); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	points, err := docfile.ReadPoints(out)
	if err != nil {
		t.Fatal(err)
	}
	var gaps []string
	for _, p := range points {
		for _, f := range p.Flags {
			if f.Code == roofline.FlagCountedGap {
				gaps = append(gaps, p.Label+": "+f.Message)
			}
		}
	}
	if len(gaps) != 1 || !strings.Contains(gaps[0], "aBcd8b") || !strings.Contains(gaps[0], "2.667x") {
		t.Errorf("gap flags %q, want the padded GELU's alone, at 8/3", gaps)
	}
}

func TestDNNCountRefusesWhatItCannotDo(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"-e", "page-faults", "--", "true"}, "-e counts events per primitive call: it needs the pmu counting mode; add --count pmu"},
		{[]string{"--count", "perf", "--", "true"}, "--count perf: not a counting mode (pmu or emulate)"},
		{[]string{"--threads", "-1", "--", "true"}, "--threads -1: must not be negative"},
		{[]string{"--count", "pmu"}, "the command is empty; give the program to run after the flags"},
		{[]string{"--count", "pmu", "--emulate-cpu", "Haswell", "--", "true"}, "--emulate-cpu is an option of --count emulate"},
		{[]string{"--count", "emulate", "--cache-model", "1K", "--", "true"}, "--cache-model:"},
	} {
		code, _, stderr := rprofDNN(t, context.Background(), tt.args...)
		if code != exitUsage || !strings.Contains(stderr, tt.want) {
			t.Errorf("%q: exit %d, stderr %q; want %d and %q", tt.args, code, stderr, exitUsage, tt.want)
		}
	}
}

// --count emulate's options reach the emulated run as run's do.
func TestDNNCountEmulatePassesTheEmulationOptions(t *testing.T) {
	var cfg measure.Config
	stop := errors.New("recorded")
	code, _, _ := rprofMeasuring(t, func(_ context.Context, c measure.Config) (*roofline.Point, error) {
		cfg = c
		return nil, stop
	}, "dnn", "--count", "emulate", "--cache-model", "32K/8,1M/16", "--emulate-cpu", "Haswell", "--qemu", "/opt/qemu-x86_64", "--", "true")
	if code != exitInternal || cfg.Counting.Backend != measure.BackendEmulate || cfg.Counting.Emulator.CacheModel == nil || cfg.Counting.Emulator.CacheModel.String() != "32K/8,1M/16,line=64" ||
		cfg.Counting.Emulator.CPU != "Haswell" || cfg.Counting.Emulator.QEMU != "/opt/qemu-x86_64" || cfg.Hooks.EmulatedCalls == nil || cfg.Hooks.EmulatedCalls.Function != "libdnnl.so:"+dnnrun.Execute {
		t.Errorf("exit %d, config %+v", code, cfg)
	}
}
