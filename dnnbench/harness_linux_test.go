package dnnbench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/rprof/rprof/dnn"
	"github.com/rprof/rprof/internal/stats"
	"github.com/rprof/rprof/internal/testutil"
)

// The harness calls oneDNN from the main thread (NeedsMainThread): the
// test binary, run as a harness child, does so from TestMain.
func init() { runtime.LockOSThread() }

// harnessChildEnv makes the test binary a harness child: it runs the
// experiments and problems the variable lists (space-separated) once
// each and prints each result as a JSON line on stderr.
const harnessChildEnv = "RPROF_DNNBENCH_TEST_CHILD"

func TestMain(m *testing.M) {
	if list := os.Getenv(harnessChildEnv); list != "" {
		os.Exit(harnessChild(strings.Fields(list)))
	}
	os.Exit(m.Run())
}

func harnessChild(names []string) int {
	lib, err := Open()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer lib.Close()
	opts := Options{Threads: 1, WarmUp: 1, Rule: stats.Fixed(2, 0.95, stats.DefaultMethod)}
	for _, name := range names {
		p := Problem{}
		if x, ok := Lookup(name); ok {
			p = x.Problem
		} else if p, err = ParseProblem(name, "", "", ""); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		r, err := lib.Run(context.Background(), p, opts)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		b, _ := json.Marshal(childResult{Version: lib.Version(), Result: r})
		fmt.Fprintf(os.Stderr, "result %s\n", b)
	}
	return 0
}

type childResult struct {
	Version Version
	Result  Result
}

// The problems each binding runs: seed 004's kinds, and problems whose
// weights the library pads (20 output channels in blocks of 16, an inner
// product of 10 outputs), so that the weights' layout matters to Q.
var harnessProblems = []string{
	"conv3x3-nChw16c", "conv3x3-nchw", "ip", "maxpool-nChw16c", "avgpool-nchw", "gelu-erf-nChw8c", "gelu-tanh-nchw",
	"mb1_ic16oc20_ih14oh14kh3sh1dh0ph1_iw14ow14kw3sw1dw0pw1", "mb2ic100oc10", "64x100:100x48",
}

// runHarness runs the problems in a harness child with the verbose trace on
// and returns the results and the trace.
func runHarness(t *testing.T, cmd *exec.Cmd) ([]childResult, *dnn.Trace) {
	t.Helper()
	cmd.Env = append(os.Environ(), harnessChildEnv+"="+strings.Join(harnessProblems, " "), "ONEDNN_VERBOSE=1", "OMP_NUM_THREADS=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("harness child: %v\n%s", err, stderr.String())
	}
	var results []childResult
	sc := bufio.NewScanner(&stderr)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if js, ok := strings.CutPrefix(sc.Text(), "result "); ok {
			var r childResult
			if err := json.Unmarshal([]byte(js), &r); err != nil {
				t.Fatal(err)
			}
			results = append(results, r)
		}
	}
	tr := &dnn.Trace{KeepRecords: true}
	for line := range strings.SplitSeq(stdout.String(), "\n") {
		tr.Add(line)
	}
	if len(results) != len(harnessProblems) {
		t.Fatalf("%d results for %d problems:\n%s", len(results), len(harnessProblems), stderr.String())
	}
	return results, tr
}

// checkAgainstTrace checks that each result's record, the one the harness
// models, has the layouts, W and Q of the library's own verbose line for
// the same primitive (2.x's matmul lines add the destination to the
// problem): weights in the layout the library chose, padding included.
func checkAgainstTrace(t *testing.T, results []childResult, tr *dnn.Trace) {
	t.Helper()
	paddedWeights := 0
	for _, cr := range results {
		r := cr.Result
		var traced *dnn.Record
		for i := range tr.Records {
			rec := &tr.Records[i]
			if rec.Exec() && rec.Kind == r.Record.Kind && (rec.Problem == r.Record.Problem || strings.HasPrefix(rec.Problem, r.Record.Problem+":")) && rec.Implementation == r.Implementation &&
				strings.HasPrefix(rec.Auxiliary, r.Record.Auxiliary) {
				traced = rec
				break
			}
		}
		if traced == nil {
			t.Errorf("%s: no verbose line of %s %s", r.Problem, r.Implementation, r.Record.Problem)
			continue
		}
		for _, want := range traced.Tensors {
			if !want.Present() {
				continue
			}
			arg := want.Arg
			if arg == "data" {
				arg = "src" // an eltwise's source and destination alike
			}
			found := false
			for _, got := range r.Record.Tensors {
				found = found || got.Arg == arg && got.Tag == want.Tag
			}
			if !found {
				t.Errorf("%s: %s is %s in the trace; the harness has %+v", r.Problem, want.Arg, want.Tag, r.Record.Tensors)
			}
		}
		m := dnn.Model(traced)
		if fmt.Sprint(*m.WorkFlops, *m.TrafficBytes) != fmt.Sprint(*r.Model.WorkFlops, *r.Model.TrafficBytes) {
			t.Errorf("%s: W %v Q %v, the trace's line gives W %v Q %v", r.Problem, *r.Model.WorkFlops, *r.Model.TrafficBytes, *m.WorkFlops, *m.TrafficBytes)
		}
		unpadded := r.Problem.record(r.Implementation, func(string) string { return "" })
		if q := dnn.Model(&unpadded).TrafficBytes; *q < *r.Model.TrafficBytes {
			paddedWeights++
		}
	}
	if paddedWeights < 2 {
		t.Errorf("%d problems with padded chosen layouts, want the padded convolution and inner product at least", paddedWeights)
	}
}

// The 2.x binding on the installed libdnnl.so.2 models each primitive as
// the library's own trace line does.
func TestAPI2HarnessModelsTheLayoutsTheLibraryChose(t *testing.T) {
	if _, err := os.Stat("/usr/lib/x86_64-linux-gnu/libdnnl.so.2"); err != nil {
		t.Skip("libdnnl.so.2 not installed (scripts/test.sh installs libdnnl2)")
	}
	results, tr := runHarness(t, exec.Command(os.Args[0]))
	if results[0].Version.Major != 2 {
		t.Fatalf("loaded oneDNN %s, want 2.x", results[0].Version)
	}
	checkAgainstTrace(t, results, tr)
}

// The 3.x binding, run on Debian 13's oneDNN 3.7 under its own runtime,
// models each primitive as the library's own trace line does.
func TestAPI3HarnessModelsTheLayoutsTheLibraryChose(t *testing.T) {
	tree := testutil.FindOneDNN3(t)
	results, tr := runHarness(t, tree.Command(os.Args[0]))
	if v := results[0].Version; v.Major != 3 {
		t.Fatalf("loaded oneDNN %s, want 3.x", v)
	}
	if tr.Info.Version != results[0].Version.String() {
		t.Errorf("trace says %q, dnnl_version() %s", tr.Info.Version, results[0].Version)
	}
	checkAgainstTrace(t, results, tr)
}

// A library whose dnnl_version() says 1.x or 4.x is refused with its
// version, in one line.
func TestUnsupportedVersionIsRefused(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed")
	}
	for _, major := range []int{1, 4} {
		dir := t.TempDir()
		src, lib := filepath.Join(dir, "v.c"), filepath.Join(dir, "libfake.so")
		prog := fmt.Sprintf(`typedef struct { int major, minor, patch; const char *hash; unsigned cpu_runtime, gpu_runtime; } v_t;
static const v_t v = {%d, 0, 1, "fake", 2, 0};
const v_t *dnnl_version(void) { return &v; }
`, major)
		if err := os.WriteFile(src, []byte(prog), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command("gcc", "-shared", "-fPIC", "-o", lib, src).CombinedOutput(); err != nil {
			t.Fatalf("gcc: %v\n%s", err, out)
		}
		_, err := OpenFile(lib)
		var ve *VersionError
		if !errors.As(err, &ve) || ve.Version.Major != major {
			t.Fatalf("major %d: error %v, want a VersionError", major, err)
		}
		if msg := err.Error(); strings.Contains(msg, "\n") || !strings.Contains(msg, fmt.Sprintf("v%d.0.1", major)) {
			t.Errorf("message %q: want one line with the version", msg)
		}
	}
}
