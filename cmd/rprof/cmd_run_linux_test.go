package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/rprof/rprof/internal/docfile"
	"github.com/rprof/rprof/internal/testutil"
	"github.com/rprof/rprof/machine"
	"github.com/rprof/rprof/pmu"
	"github.com/rprof/rprof/roofline"
)

// touchPages touches n fresh pages once each.
func touchPages(n int) int {
	if n <= 0 {
		return 0
	}
	size := n * os.Getpagesize()
	mem, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		return 98
	}
	// One fault per page: no transparent huge pages.
	unix.Madvise(mem, unix.MADV_NOHUGEPAGE)
	for i := 0; i < size; i += os.Getpagesize() {
		mem[i] = 1
	}
	return 0
}

// targetArgv is the argv of a test target (the test binary itself).
func targetArgv(t *testing.T, args ...string) []string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{self, testTargetArg}, args...)
}

// readRunPoint reads the point rprof wrote.
func readRunPoint(t *testing.T, path string) roofline.Point {
	t.Helper()
	ps, err := docfile.ReadPoints(path)
	if err != nil {
		t.Fatal(err)
	}
	return ps[0]
}

func runEventValue(p roofline.Point, name string) (float64, bool) {
	for _, e := range p.Events {
		if e.Name == name {
			return e.Value, true
		}
	}
	return 0, false
}

// The page-faults delta of a target touching N pages, less an overhead run
// of the same program touching none, is N (within the run-to-run noise of
// the Go runtime's own faults), whether the pages are touched by the
// target, by its threads or by its child.
func TestRunSubtractsTheOverheadRunsEvents(t *testing.T) {
	tests := []struct {
		mode  string
		pages int // in total
	}{
		{"pages", 4000},
		{"threads", 4 * 1000},
		{"fork", 4000},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			n := strconv.Itoa(tt.pages)
			if tt.mode == "threads" {
				n = strconv.Itoa(tt.pages / 4)
			}
			out := filepath.Join(t.TempDir(), "point.json")
			args := append([]string{"-e", "page-faults", "--repeat", "3", "--json", out,
				"--overhead", strings.Join(targetArgv(t, tt.mode, "0"), " "), "--"}, targetArgv(t, tt.mode, n)...)
			code, _, stderr := rprofRun(t, "", args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			p := readRunPoint(t, out)
			got, ok := runEventValue(p, "page-faults")
			t.Logf("%s: page-faults delta %v for %d pages (overhead run: %v)", tt.mode, got, tt.pages, p.Overhead.Events)
			if want := float64(tt.pages); !ok || got < 0.95*want || got > 1.05*want {
				t.Errorf("page-faults delta = %v, want %d ± 5%%\n%s", got, tt.pages, stderr)
			}
			if p.Overhead == nil || len(p.Overhead.Events) != 1 || p.Overhead.Events[0].Value <= 0 || len(p.Overhead.Command) != 4 {
				t.Errorf("overhead = %+v, want the overhead run's page faults recorded", p.Overhead)
			}
			if p.CI.N != 3 || len(p.Samples.Seconds) != 3 {
				t.Errorf("n %d samples %v, want 3 repetitions", p.CI.N, p.Samples.Seconds)
			}
			if !strings.Contains(stderr, "page-faults") || !strings.Contains(stderr, "overhead run subtracted") {
				t.Errorf("summary does not show the subtracted event:\n%s", stderr)
			}
		})
	}
}

// Without hardware counters, and with neither analytic values nor events,
// rprof refuses with the diagnosis before running anything: the target
// would have created a file.
func TestRunRefusesWithoutCountersBeforeRunningTheTarget(t *testing.T) {
	if pmu.HaveHardwareCounters() == nil {
		t.Skip("this machine has hardware counters: rprof run counts instead of refusing")
	}
	marker := filepath.Join(t.TempDir(), "ran")
	code, _, stderr := rprofRun(t, "", append([]string{"--"}, targetArgv(t, "touch", marker)...)...)
	if code != exitInternal {
		t.Errorf("exit %d, want %d", code, exitInternal)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("the target ran although rprof refused")
	}
	for _, want := range []string{"the target was not run", "FP work (W)", "Problems:", "fix:", "--work FLOPS"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
}

// maskedPoint replaces what differs between runs and machines in a point
// document: times and rates, machine, the VM flag.
func maskedPoint(t *testing.T, path string) []byte {
	t.Helper()
	var doc map[string]any
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"created", "seconds", "gflops", "gbytes_per_s", "fraction_of_attainable", "machine", "cpu_seconds", "parallelism"} {
		if _, ok := doc[k]; ok {
			doc[k] = "MASKED"
		}
	}
	ci := doc["ci"].(map[string]any)
	ci["seconds"], ci["gflops"], ci["gbytes_per_s"] = "MASKED", "MASKED", "MASKED"
	doc["samples"].(map[string]any)["seconds"] = "MASKED"
	// Whether the host is a VM, and how steady its runs were, are the
	// host's, not the point's.
	var flags []any
	for _, f := range doc["flags"].([]any) {
		if code := f.(map[string]any)["code"]; code != roofline.FlagVM && code != roofline.FlagWideTime {
			flags = append(flags, f)
		}
	}
	doc["flags"] = flags
	doc["command"] = "MASKED"
	doc["roofs_file"] = "MASKED"
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(out, '\n')
}

// roofsOf writes the roofs fixture as measured on m, and returns its path.
func roofsOf(t *testing.T, m roofline.Machine) string {
	t.Helper()
	r, err := docfile.ReadRoofs("testdata/run/roofs.json")
	if err != nil {
		t.Fatal(err)
	}
	r.Machine = m
	path := filepath.Join(t.TempDir(), "roofs.json")
	if err := testutil.WriteDoc(path, r); err != nil {
		t.Fatal(err)
	}
	return path
}

// localMachine describes this machine as rprof run does.
func localMachine(t *testing.T) roofline.Machine {
	t.Helper()
	sys, proc := os.DirFS("/sys"), os.DirFS("/proc")
	cpu, err := machine.ReadCPU(proc)
	if err != nil {
		t.Skipf("read CPU: %v", err)
	}
	topo, err := machine.ReadTopology(sys)
	if err != nil {
		t.Skipf("read topology: %v", err)
	}
	return machine.Describe(cpu, topo, sys, proc)
}

func TestRunFlagsRoofsOfAnotherMachine(t *testing.T) {
	other := localMachine(t)
	other.CPU.ModelName = "Another CPU Entirely"
	args := append([]string{"--work", "2e6", "--traffic", "1e6", "--roofs", roofsOf(t, other), "--"}, targetArgv(t, "exit", "0")...)
	code, _, stderr := rprofRun(t, "", args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, roofline.FlagForeignRoofs+" (info): the roofs were measured on another machine: CPU \"Another CPU Entirely\"") {
		t.Errorf("no foreign-roofs footnote:\n%s", stderr)
	}
	// The same roofs, measured here: no flag.
	args = append([]string{"--work", "2e6", "--traffic", "1e6", "--roofs", roofsOf(t, localMachine(t)), "--"}, targetArgv(t, "exit", "0")...)
	if _, _, stderr := rprofRun(t, "", args...); strings.Contains(stderr, roofline.FlagForeignRoofs) {
		t.Errorf("roofs of this machine flagged foreign:\n%s", stderr)
	}
}

func TestRunWritesAnAnalyticPoint(t *testing.T) {
	dir := t.TempDir()
	out, chartFile := filepath.Join(dir, "point.json"), filepath.Join(dir, "point.svg")
	args := append([]string{"--work", "2e6", "--traffic", "1e6", "--repeat", "3", "--label", "analytic",
		"--roofs", roofsOf(t, localMachine(t)), "--threads", "2", "--json", out, "--plot", chartFile, "--"}, targetArgv(t, "exit", "0")...)
	code, _, stderr := rprofRun(t, "", args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	testutil.Golden(t, "testdata/run/analytic.json", maskedPoint(t, out))
	if svg, err := os.ReadFile(chartFile); err != nil || !strings.Contains(string(svg), "<svg") {
		t.Errorf("--plot wrote no SVG chart: %v", err)
	}
	for _, want := range []string{"analytic W and Q", "2.00 FLOP/B", "bound: memory (DRAM)", "analytic (info):"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("summary lacks %q:\n%s", want, stderr)
		}
	}
}

func TestRunExitsWithTheTargetsStatus(t *testing.T) {
	tests := []struct {
		args []string
		code int
		flag string
	}{
		{[]string{"exit", "0"}, 0, ""},
		{[]string{"exit", "3"}, 3, roofline.FlagNonzeroExit},
		{[]string{"kill"}, 128 + 9, roofline.FlagSignaled},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "point.json")
			code, _, stderr := rprofRun(t, "", append([]string{"--work", "1", "--repeat", "2", "--json", out, "--"}, targetArgv(t, tt.args...)...)...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d: %s", code, tt.code, stderr)
			}
			p := readRunPoint(t, out)
			if p.Exit.Code != tt.code {
				t.Errorf("point exit %+v, want %d", p.Exit, tt.code)
			}
			if tt.flag != "" && (!strings.Contains(stderr, tt.flag+" (warning):") || p.CI.N != 1) {
				t.Errorf("want flag %s and repetition stopped after the failed run (n=%d):\n%s", tt.flag, p.CI.N, stderr)
			}
		})
	}
}

func TestRunPassesStdinAndStdoutThrough(t *testing.T) {
	code, stdout, stderr := rprofRun(t, "hello, target\n", append([]string{"--work", "1", "--"}, targetArgv(t, "cat")...)...)
	if code != 0 || stdout != "hello, target\n" {
		t.Errorf("exit %d stdout %q: %s", code, stdout, stderr)
	}
	if strings.Contains(stdout, "Roofline point") || !strings.Contains(stderr, "Roofline point") {
		t.Errorf("the summary must go to stderr only")
	}
}

func TestRunRejectsBadInputWithOneLineAndNoDocument(t *testing.T) {
	dir := t.TempDir()
	notExec := filepath.Join(dir, "not-exec")
	if err := os.WriteFile(notExec, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	noShebang := filepath.Join(dir, "noshebang.sh")
	if err := os.WriteFile(noShebang, []byte("echo hi\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	truncated := filepath.Join(dir, "truncated.json")
	if err := os.WriteFile(truncated, []byte(`{"schema": "rprof.roofs/v1", "compute": [`), 0o644); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "other.json")
	if err := os.WriteFile(other, []byte(`{"schema": "rprof.roofs/v0"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	ok := strings.Join(targetArgv(t, "exit", "0"), " ")
	fails := strings.Join(targetArgv(t, "exit", "1"), " ")
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"empty command", []string{"--work", "1"}, exitUsage, "empty command"},
		{"repeat 0", []string{"--work", "1", "--repeat", "0", ok}, exitUsage, "--repeat 0"},
		{"repeat with ci", []string{"--work", "1", "--repeat", "2", "--ci", "0.02", ok}, exitUsage, "--repeat and --ci exclude each other"},
		{"ci with too few runs", []string{"--work", "1", "--ci", "0.1", "--max-repeat", "2", ok}, exitUsage, "--max-repeat 2: an adaptive run makes at least 3"},
		{"unknown backend", []string{"--count", "nope", ok}, exitUsage, `--count "nope": no such counting backend`},
		{"empty overhead command", []string{"--work", "1", "--overhead", " ", ok}, exitUsage, "--overhead is empty"},
		{"chart format unknown", []string{"--work", "1", "--plot", filepath.Join(dir, "chart.gif"), ok}, exitUsage, "chart.gif"},
		{"unparsable event", []string{"--work", "1", "-e", "cpu/event=0x3", ok}, exitUsage, `event "cpu/event=0x3"`},
		{"target not found", []string{"--work", "1", filepath.Join(dir, "missing")}, exitNotFound, "not found"},
		{"target not executable", []string{"--work", "1", notExec}, exitNoExec, "not executable"},
		{"script without #!", []string{"--work", "1", noShebang}, exitNoExec, "not executable"},
		{"script without #!, with a region", []string{"--work", "1", "--region", "main", noShebang}, exitNoExec, "not executable"},
		{"roofs file missing", []string{"--work", "1", "--roofs", filepath.Join(dir, "none.json"), ok}, exitUsage, "none.json"},
		{"roofs file truncated", []string{"--work", "1", "--roofs", truncated, ok}, exitUsage, "truncated.json"},
		{"roofs file of another schema", []string{"--work", "1", "--roofs", other, ok}, exitUsage, `schema "rprof.roofs/v0"`},
		{"overhead command fails", []string{"--work", "1", "--overhead", fails, ok}, exitInternal, "overhead command"},
		{"overhead command not found", []string{"--work", "1", "--overhead", filepath.Join(dir, "missing"), ok}, exitInternal, "overhead command"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "-")+".json")
			args := append([]string{"--json", out}, tt.args...)
			args = append(args[:len(args)-1], strings.Fields(args[len(args)-1])...)
			if tt.name == "empty command" {
				args = append([]string{"--json", out}, tt.args...)
			}
			code, _, stderr := rprofRun(t, "", args...)
			if code != tt.code {
				t.Errorf("exit %d, want %d: %s", code, tt.code, stderr)
			}
			first, _, _ := strings.Cut(stderr, "\n")
			if !strings.HasPrefix(first, "rprof run: ") || !strings.Contains(first, tt.want) {
				t.Errorf("first line %q, want an error naming %q", first, tt.want)
			}
			if regexp.MustCompile(`goroutine \d+|panic:`).MatchString(stderr) {
				t.Errorf("stack trace on stderr:\n%s", stderr)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("%s was written despite the error", out)
			}
		})
	}
}

func TestRunRepeatsAdaptively(t *testing.T) {
	out := filepath.Join(t.TempDir(), "point.json")
	code, _, stderr := rprofRun(t, "", append([]string{"--work", "1", "--ci", "0.5", "--max-repeat", "6", "--json", out, "--"}, targetArgv(t, "exit", "0")...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	p := readRunPoint(t, out)
	if p.CI.N < 3 || p.CI.N > 6 || len(p.Samples.Seconds) != p.CI.N || p.CI.Method != "student-t" {
		t.Errorf("n %d, %d samples, method %q: want 3 to 6 runs with a Student-t interval", p.CI.N, len(p.Samples.Seconds), p.CI.Method)
	}
}

func TestRunSaysWhenTheIdleBaselineCannotBeMeasured(t *testing.T) {
	code, _, stderr := rprofRun(t, "", append([]string{"--work", "1", "--idle-baseline", "10ms", "--"}, targetArgv(t, "exit", "0")...)...)
	if code != 0 || !strings.Contains(stderr, "idle baseline was not measured") {
		t.Errorf("exit %d, want a footnote saying the idle baseline was not measured:\n%s", code, stderr)
	}
}

// Every counter and pipe is closed after a run, on success and on failure.
func TestRunLeavesNoDescriptorOpen(t *testing.T) {
	openFDs := func() int {
		entries, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Fatal(err)
		}
		return len(entries)
	}
	before := openFDs()
	for _, args := range [][]string{
		append([]string{"-e", "page-faults,task-clock", "--repeat", "2", "--overhead", strings.Join(targetArgv(t, "pages", "0"), " "), "--"}, targetArgv(t, "pages", "10")...),
		append([]string{"-e", "page-faults", "--"}, targetArgv(t, "exit", "3")...),
		append([]string{"-e", "page-faults", "--overhead", strings.Join(targetArgv(t, "exit", "1"), " "), "--"}, targetArgv(t, "exit", "0")...),
		{"-e", "page-faults", "--", filepath.Join(t.TempDir(), "missing")},
	} {
		rprofRun(t, "some input\n", args...)
	}
	if after := openFDs(); after != before {
		t.Errorf("%d descriptors open before the runs, %d after", before, after)
	}
}
