package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rprof/rprof/cmd/rprof/internal/render"
	"github.com/rprof/rprof/internal/testutil"
	"github.com/rprof/rprof/measure"
	"github.com/rprof/rprof/pmu"
	"github.com/rprof/rprof/roofline"
)

// testTargetArg makes the test binary act as a target program (see
// TestMain), so the end-to-end tests need no compiler.
const testTargetArg = "__rprof_test_target"

// testRprofArg makes the test binary act as rprof (see TestMain).
const testRprofArg = "__rprof_test_rprof"

// testTarget is a target program: "pages N" touches N fresh pages once
// each, "threads N" does so on 4 threads, "fork N" in a child process,
// "exit N" exits N, "touch FILE" creates FILE, "kill" dies by
// SIGKILL, "cat" copies stdin to stdout, "ignore-term FILE" and "wait
// FILE" create FILE, then exit 0 after 0.5 s ignoring SIGTERM, or wait
// for a signal.
func testTarget(args []string) int {
	if len(args) == 0 {
		return 99
	}
	arg := ""
	if len(args) > 1 {
		arg = args[1]
	}
	switch args[0] {
	case "pages":
		n, _ := strconv.Atoi(arg)
		return touchPages(n)
	case "threads":
		// 4 OS threads touching arg pages each.
		n, _ := strconv.Atoi(arg)
		codes := make(chan int)
		for range 4 {
			go func() {
				runtime.LockOSThread()
				codes <- touchPages(n)
			}()
		}
		code := 0
		for range 4 {
			code = max(code, <-codes)
		}
		return code
	case "fork":
		// A child process touching arg pages.
		self, err := os.Executable()
		if err != nil {
			return 98
		}
		cmd := exec.Command(self, testTargetArg, "pages", arg)
		if cmd.Run() != nil {
			return 98
		}
		return 0
	case "exit":
		n, _ := strconv.Atoi(arg)
		return n
	case "touch":
		if os.WriteFile(arg, nil, 0o644) != nil {
			return 98
		}
		return 0
	case "kill":
		unix.Kill(os.Getpid(), unix.SIGKILL)
		time.Sleep(time.Minute)
	case "ignore-term":
		// Ignores SIGTERM, says it runs by creating FILE, and exits 0
		// half a second later.
		signal.Ignore(unix.SIGTERM)
		if os.WriteFile(arg, nil, 0o644) != nil {
			return 98
		}
		time.Sleep(500 * time.Millisecond)
		return 0
	case "wait":
		// Says it runs by creating FILE and waits for a signal.
		if os.WriteFile(arg, nil, 0o644) != nil {
			return 98
		}
		time.Sleep(time.Minute)
	case "flood", "longline":
		return verboseFlood(args[0], arg)
	case "peakrss":
		return peakRSS(args[1:])
	case "cat":
		if _, err := io.Copy(os.Stdout, os.Stdin); err != nil {
			return 98
		}
		return 0
	}
	return 99
}

// rprofRun runs `rprof run args...` in-process.
func rprofRun(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	// No default roofs from the user's cache: only --roofs places a point.
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	// Nor a measurement lock shared with other tests.
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	var out, errb bytes.Buffer
	code = run(context.Background(), append([]string{"run"}, args...), bytes.NewBufferString(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func fptr(v float64) *float64 { return &v }

// Recorded points render the same way every time: one from a machine with
// counters and every kind of footnote, one without DRAM traffic, one of
// events only.
func TestRunSummaryOfRecordedPoints(t *testing.T) {
	p := &roofline.Point{
		Schema: roofline.PointSchema, Label: "triad", Command: []string{"./triad", "-n", "1000000"},
		Source:          roofline.SourceCounters,
		WorkFlops:       fptr(2e9),
		WorkByPrecision: map[string]float64{roofline.Double: 2e9},
		TrafficBytes:    fptr(2.4e10), ReadBytes: fptr(1.6e10), WriteBytes: fptr(8e9),
		Seconds: 1.25,
		CI: roofline.Uncertainty{Confidence: 0.95, Method: "student-t", N: 5,
			Seconds: roofline.Interval{Lo: 1.2, Hi: 1.3}, GFlops: &roofline.Interval{Lo: 1.54, Hi: 1.66}, GBytesPerS: &roofline.Interval{Lo: 18.2, Hi: 20.2}},
		Intensity: fptr(2e9 / 2.4e10), GFlops: fptr(1.6), GBytesPerS: fptr(19.2),
		Bound: &roofline.Bound{Kind: roofline.BoundMemory, Roof: "DRAM", GBytesPerS: 20}, AttainableGFlops: fptr(20 * 2e9 / 2.4e10), FractionOfAttainable: fptr(1.6 / (20 * 2e9 / 2.4e10)),
		RoofsFile: "roofs.json", Threads: 2,
		Events: []roofline.EventCount{
			{Name: "fp_ret_sse_avx_ops.all", PMU: "cpu", Value: 2e9, Raw: 1e9, Enabled: 1.25e9, Running: 6.25e8},
			{Name: "umc_cas_cmd.rd", PMU: "amd_umc_0", Value: 2.5e8, Raw: 2.5e8, Enabled: 1.25e9, Running: 1.25e9},
			{Name: "page-faults", PMU: "software", Value: 1024, Raw: 1100, Enabled: 1.25e9, Running: 1.25e9},
		},
		Samples: roofline.Samples{Seconds: []float64{1.2, 1.25, 1.3, 1.25, 1.25},
			WorkFlops:    []float64{2e9, 2e9 - 10, 2e9 + 10, 2e9, 2e9 + 5},
			TrafficBytes: []float64{2.4e10, 2.3e10, 2.5e10, 2.4e10, 2.4e10}},
		Overhead: &roofline.Overhead{Command: []string{"./triad", "-n", "0"}, WorkFlops: fptr(1e6), Seconds: 0.01},
		Exit:     roofline.Exit{Code: 3},
		Flags: []roofline.Flag{
			{Code: roofline.FlagVM, Message: "measured in a virtual machine"},
			{Code: roofline.FlagMultiplexed, Subject: roofline.EventSubject("fp_ret_sse_avx_ops.all"), Message: "fp_ret_sse_avx_ops.all was multiplexed: on a counter 50.0% of the time"},
			{Code: roofline.FlagBelowNoise, Subject: roofline.SubjectTraffic, Message: "DRAM traffic after subtraction is within its half-width"},
			{Code: roofline.FlagAboveRoof, Subject: roofline.SubjectPlacement, Message: "the point is above its roof"},
			{Code: roofline.FlagNonzeroExit, Subject: roofline.SubjectExit, Message: "the target exited with status 3 in repetition 5"},
		},
	}
	noUncore := &roofline.Point{
		Schema: roofline.PointSchema, Label: "dgemm", Command: []string{"./dgemm"},
		Source: roofline.SourceCounters, WorkFlops: fptr(4e10), WorkByPrecision: map[string]float64{roofline.Double: 4e10},
		Seconds: 0.8, CI: roofline.Uncertainty{Confidence: 0.95, Method: "none", N: 1, Seconds: roofline.Interval{Lo: 0.8, Hi: 0.8}},
		GFlops: fptr(50), RoofsFile: "roofs.json", Threads: 1,
		Events: []roofline.EventCount{{Name: "FP_ARITH_INST_RETIRED.512B_PACKED_DOUBLE", PMU: "cpu", Value: 5e9, Raw: 5e9, Enabled: 8e8, Running: 8e8}},
		Flags:  []roofline.Flag{{Code: roofline.FlagNoUncore, Message: "DRAM traffic not counted (no memory-controller PMU): work and GFLOP/s are reported, intensity is unknown"}},
	}
	events := &roofline.Point{
		Schema: roofline.PointSchema, Label: "ls", Command: []string{"ls", "/"}, Source: roofline.SourceEvents,
		CI:       roofline.Uncertainty{Confidence: 0.95, Method: "none", N: 1},
		Events:   []roofline.EventCount{{Name: "page-faults", PMU: "software", Value: -12, Raw: 101, Enabled: 9e5, Running: 9e5}},
		Overhead: &roofline.Overhead{Command: []string{"ls", "/etc"}, Seconds: 0.003},
		Exit:     roofline.Exit{Code: 128 + 9, Signal: "SIGKILL"},
		Flags: []roofline.Flag{
			{Code: roofline.FlagMissingCounter, Message: "work and traffic were not measured (no hardware PMU): only page-faults was counted"},
			{Code: roofline.FlagNegative, Subject: roofline.SubjectSeconds, Message: "time is not positive after subtraction"},
			{Code: roofline.FlagNegative, Subject: roofline.EventSubject("page-faults"), Message: "page-faults is negative after subtraction (median -12)"},
			{Code: roofline.FlagSignaled, Subject: roofline.SubjectExit, Message: "the target was killed by SIGKILL in repetition 1"},
		},
	}
	for _, tt := range []struct {
		name string
		p    *roofline.Point
	}{{"counters", p}, {"no-uncore", noUncore}, {"events", events}} {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			render.WriteRunSummary(&b, tt.p, "as asked with --threads")
			testutil.Golden(t, "testdata/run/summary-"+tt.name+".txt", b.Bytes())
		})
		// The lines a footnote marks follow the flags' codes and subjects:
		// rewording a message moves no mark.
		t.Run(tt.name+" reworded", func(t *testing.T) {
			q := *tt.p
			q.Flags = slices.Clone(q.Flags)
			for i := range q.Flags {
				q.Flags[i].Message = "reworded"
			}
			var want, got bytes.Buffer
			render.WriteRunSummary(&want, tt.p, "")
			render.WriteRunSummary(&got, &q, "")
			body := func(b bytes.Buffer) string { s, _, _ := strings.Cut(b.String(), "  [1]"); return s }
			if body(got) != body(want) {
				t.Errorf("rewording the flags moved footnote marks:\n%s\nwant\n%s", body(got), body(want))
			}
		})
	}
}

// --ci means one thing in every command: 2% and 0.02 are the same share
// of the mean, and a share outside (0, 1) is refused alike, before
// anything runs.
func TestCIAcceptsPercentAndFractionAlike(t *testing.T) {
	for _, cmd := range [][]string{{"run"}, {"gate", "--baseline", "b.json"}, {"dnn", "bench"}} {
		for _, arg := range []string{"2%", "0.02"} {
			// --ci with --repeat is refused after parsing, by run alone;
			// a parsed --ci reaches the commands' own checks.
			args := append(append([]string{}, cmd...), "--ci", arg, "--ci-probe-unknown")
			_, _, stderr := rprofCLI(t, args...)
			if !strings.Contains(stderr, "ci-probe-unknown") {
				t.Errorf("%s --ci %s: not parsed:\n%s", strings.Join(cmd, " "), arg, stderr)
			}
		}
		for _, arg := range []string{"150%", "2", "0", "x"} {
			args := append(append([]string{}, cmd...), "--ci", arg)
			code, _, stderr := rprofCLI(t, args...)
			if code != exitUsage || !strings.Contains(stderr, "is not a share of the mean in (0, 1)") {
				t.Errorf("%s --ci %s: exit %d:\n%s", strings.Join(cmd, " "), arg, code, stderr)
			}
		}
	}
}

// TestRunRefusalsWaysKeepTheOverhead: refused for want of counters, run
// offers each way forward with the user's --overhead, so that none of
// them places the whole process instead of the kernel.
func TestRunRefusalsWaysKeepTheOverhead(t *testing.T) {
	var stdout, stderr bytes.Buffer
	refuse := func(context.Context, measure.Config) (*roofline.Point, error) {
		return nil, &measure.NoCountersError{Err: pmu.ErrNoPMU}
	}
	e := &env{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr, measure: refuse}
	code := runEnv(context.Background(), e, []string{"run", "--overhead", "./triad 20 1", "--", "./triad", "20", "20"})
	if code != exitInternal {
		t.Fatalf("exit %d, want %d: %s", code, exitInternal, stderr.String())
	}
	_, ways, ok := strings.Cut(stderr.String(), "Ways forward:")
	if !ok {
		t.Fatalf("no ways forward:\n%s", stderr.String())
	}
	n := 0
	for _, line := range strings.Split(ways, "\n") {
		if line = strings.TrimSpace(line); strings.HasPrefix(line, "rprof run ") {
			n++
			if !strings.HasSuffix(line, "--overhead './triad 20 1' -- ./triad 20 20") {
				t.Errorf("a way without the overhead: %s", line)
			}
		}
	}
	if n != 4 {
		t.Errorf("%d ways, want 4:\n%s", n, ways)
	}
}

// A time that is not positive after subtraction is unknown: the summary
// gives no interval for it (it printed "±  (95% CI 0.000000 .. 0.000000").
func TestRunSummaryGivesNoIntervalForAnUnknownTime(t *testing.T) {
	p := &roofline.Point{
		Schema: roofline.PointSchema, Label: "triad", Command: []string{"./triad", "2000000", "20"}, Source: roofline.SourceEmulated,
		WorkFlops: fptr(7.6e7), TrafficBytes: fptr(1.216e9), Intensity: fptr(0.0625),
		CI:       roofline.Uncertainty{Confidence: 0.95, Method: "student-t", N: 3},
		Overhead: &roofline.Overhead{Command: []string{"./triad", "2000000", "1"}, Seconds: 0.05},
		Flags:    []roofline.Flag{{Code: roofline.FlagNegative, Subject: roofline.SubjectSeconds, Message: "time is not positive after subtraction"}},
	}
	var b bytes.Buffer
	render.WriteRunSummary(&b, p, "as asked with --threads")
	for _, line := range strings.Split(b.String(), "\n") {
		if strings.Contains(line, " time ") && (strings.Contains(line, "±") || strings.Contains(line, "CI")) {
			t.Errorf("the unknown time has an interval: %q", line)
		}
	}
}

// An emulated point's widths and functions are the target's run, while W
// and Q above them are net of the overhead run: the summary says so.
func TestRunSummarySaysTheEmulatedWidthsAndFunctionsAreGross(t *testing.T) {
	p := &roofline.Point{
		Schema: roofline.PointSchema, Label: "triad", Command: []string{"./triad", "2000000", "20"}, Source: roofline.SourceEmulated,
		WorkFlops: fptr(7.6e7), TrafficBytes: fptr(1.216e9), Intensity: fptr(0.0625), Seconds: 0.1,
		CI:        roofline.Uncertainty{Confidence: 0.95, Method: "none", N: 1},
		Overhead:  &roofline.Overhead{Command: []string{"./triad", "2000000", "1"}, Seconds: 0.05},
		Emulation: &roofline.Emulation{Emulator: "qemu-x86_64 7.2.22", WorkByWidth: map[string]float64{"256": 8e7}},
		Functions: []roofline.FunctionCount{{Name: "main", Object: "triad", WorkFlops: 8e7, TrafficBytes: 1.33e9}},
	}
	var b bytes.Buffer
	render.WriteRunSummary(&b, p, "as asked with --threads")
	for _, want := range []string{"work by width (the target's run, the overhead run not subtracted): 256-bit", "top functions (FLOPs, then DRAM bytes) (the target's run, the overhead run not subtracted):"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, b.String())
		}
	}
}
