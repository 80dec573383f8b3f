package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rprof/rprof/internal/affinity"
	"github.com/rprof/rprof/internal/docfile"
	"github.com/rprof/rprof/roofline"
)

// buildAllKinds compiles the capture program of package dnn against the
// installed libdnnl-dev, or skips saying what is missing.
func buildAllKinds(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed")
	}
	if _, err := os.Stat("/usr/include/oneapi/dnnl/dnnl.h"); err != nil {
		t.Skip("libdnnl-dev not installed (scripts/test.sh installs it)")
	}
	bin := filepath.Join(t.TempDir(), "allkinds")
	out, err := exec.Command("gcc", "-O1", "-o", bin, "../../dnn/testdata/allkinds.c", "-ldnnl").CombinedOutput()
	if err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	return bin
}

// dnnAllKinds runs rprof dnn with args, writing out, on the test program
// (argv: it, or a command running it), and returns the points and stderr.
// The program's stdout must pass through alone: its own bytes, a binary
// byte and an unfinished last line included, and nothing of the trace.
func dnnAllKinds(t *testing.T, out string, args []string, argv ...string) ([]roofline.Point, string) {
	t.Helper()
	code, stdout, stderr := rprofDNN(t, context.Background(), append(append(append([]string{"--json", out}, args...), "--"), argv...)...)
	if code != exitOK {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	if want := "allkinds: ok\n\xffpartial line without newline"; string(stdout) != want {
		t.Errorf("stdout %q, want %q", stdout, want)
	}
	points, err := docfile.ReadPoints(out)
	if err != nil {
		t.Fatal(err)
	}
	return points, stderr
}

func TestDNNPlacesEveryPrimitiveOfACProgram(t *testing.T) {
	out := filepath.Join(t.TempDir(), "points.json")
	points, stderr := dnnAllKinds(t, out, []string{"--roofs", roofsFixture}, buildAllKinds(t))
	if len(points) != 18 {
		t.Errorf("%d points, want one per primitive (18)", len(points))
	}
	kinds := map[string]bool{}
	placed := 0
	for _, p := range points {
		kinds[strings.Fields(p.Label)[0]] = true
		if p.Source != roofline.SourceAnalytic || p.Seconds <= 0 {
			t.Errorf("%s: source %q seconds %g", p.Label, p.Source, p.Seconds)
		}
		if p.FractionOfAttainable != nil {
			placed++
		}
	}
	for _, k := range []string{"convolution", "inner_product", "matmul", "pooling", "eltwise", "batch_normalization", "layer_normalization", "softmax", "reorder", "binary", "lrn"} {
		if !kinds[k] {
			t.Errorf("no %s point", k)
		}
	}
	if placed < 10 {
		t.Errorf("%d points placed under the roofs, want those with W > 0", placed)
	}
	for _, want := range []string{"oneDNN v2.6.3", "no-formula: lrn", "padded-layout: data aBcd8b"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("table lacks %q:\n%s", want, stderr)
		}
	}
	// The point set is one compare reads.
	if code, _, errs := rprofCLI(t, "compare", out, out); code != 0 {
		t.Errorf("compare of the point set with itself: exit %d: %s", code, errs)
	}
}

func TestDNNRunsPyTorch(t *testing.T) {
	if err := exec.Command("/usr/bin/python3", "-c", "import torch").Run(); err != nil {
		t.Skipf("torch cannot be imported by /usr/bin/python3 (%v); scripts/test.sh installs python3-torch", err)
	}
	code, stdout, stderr := rprofDNN(t, context.Background(), "--", "/usr/bin/python3", "../../dnn/testdata/torch_cnn.py")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if string(stdout) != "eager (2, 10)\nmkldnn (2, 10) True\n" {
		t.Errorf("stdout %q: the model's output should pass through alone", stdout)
	}
	// Eager mode runs the convolutions and GELU in oneDNN; to_mkldnn adds
	// pooling and the inner product.
	for _, want := range []string{"convolution convolution_direct", "eltwise eltwise_gelu_erf", "pooling pooling_max", "pooling pooling_avg_include_padding", "inner_product"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("table lacks %q:\n%s", want, stderr)
		}
	}
}

func TestDNNSaysWhyAProgramPrintedNoTrace(t *testing.T) {
	code, stdout, stderr := rprofDNN(t, context.Background(), "--", "sh", "-c", "echo hello")
	if code != exitInternal || string(stdout) != "hello\n" || !strings.Contains(stderr, "did not load oneDNN") {
		t.Errorf("exit %d stdout %q stderr %q", code, stdout, stderr)
	}
	code, _, stderr = rprofDNN(t, context.Background(), "--", "sh", "-c", "exit 3")
	if code != 3 {
		t.Errorf("exit %d, want the program's 3 (%s)", code, stderr)
	}
	code, _, _ = rprofDNN(t, context.Background(), "--", "/nonexistent/program")
	if code != exitNotFound {
		t.Errorf("exit %d, want %d", code, exitNotFound)
	}
}

func TestDNNInterruptedWritesNothing(t *testing.T) {
	out := filepath.Join(t.TempDir(), "points.json")
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	line := "onednn_verbose,exec,cpu,reorder,jit:uni,undef,src_f32::blocked:abcd:f0 dst_f32::blocked:abcd:f0,,,2x2x2x2,0.5"
	code, _, stderr := rprofDNN(t, ctx, "--json", out, "--", "sh", "-c", "echo '"+line+"'; sleep 10")
	if code != 130 || !strings.Contains(stderr, "interrupted") {
		t.Errorf("exit %d, stderr %q; want 130 and a note", code, stderr)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("point set written after an interrupt: %v", err)
	}
}

// With --json -, standard output holds the point set alone, as for rprof
// run: the program's own output goes to standard error.
func TestDNNJSONToStdoutKeepsTheProgramsOutputOut(t *testing.T) {
	line := "onednn_verbose,exec,cpu,reorder,jit:uni,undef,src_f32::blocked:abcd:f0 dst_f32::blocked:abcd:f0,,,2x2x2x2,0.5"
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], testRprofArg, "dnn", "--json", "-", "--", "sh", "-c", "echo '"+line+"'; echo program says hello")
	cmd.Env = append(os.Environ(), "XDG_RUNTIME_DIR="+dir, "XDG_CACHE_HOME="+dir)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %s", err, stderr.String())
	}
	var set roofline.PointSet
	if err := json.Unmarshal(stdout, &set); err != nil || len(set.Points) != 1 {
		t.Fatalf("stdout is not the point set alone (%v):\n%s", err, stdout)
	}
	if lines := "\n" + stderr.String(); !strings.Contains(lines, "\nprogram says hello\n") || strings.Contains(lines, "\nonednn_verbose") {
		t.Errorf("want the program's output on stderr, its trace taken out:\n%s", stderr.String())
	}
}

// skipWithoutDNNL2 skips unless libdnnl.so.2 is installed.
func skipWithoutDNNL2(t *testing.T) {
	t.Helper()
	if _, err := os.Stat("/usr/lib/x86_64-linux-gnu/libdnnl.so.2"); err != nil {
		if out, err := exec.Command("ldconfig", "-p").Output(); err != nil || !bytes.Contains(out, []byte("libdnnl.so.2")) {
			t.Skip("libdnnl.so.2 not installed (scripts/test.sh installs libdnnl2)")
		}
	}
}

// The harness runs in a child process: it calls oneDNN from the main
// thread, which a test's goroutine is not on.
func TestDNNBenchRunsExperimentsAndDescriptors(t *testing.T) {
	skipWithoutDNNL2(t)
	out := filepath.Join(t.TempDir(), "bench.json")
	// --library: a oneDNN 3.x installed too would be loaded first.
	cmd := exec.Command(os.Args[0], testRprofArg, "dnn", "bench", "--library", "libdnnl.so.2", "--repeat", "3", "--threads", "1", "--roofs", roofsFixture, "--json", out,
		"--kind", "pooling", "--alg", "avg_include_padding", "--layout", "nchw",
		"conv3x3-nchw", "gelu-erf-nChw8c", "mb1ic16_ih28oh14kh3sh2dh0ph1_iw28ow14kw3sw2dw0pw1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v: %s", err, stderr.String())
	}
	points, err := docfile.ReadPoints(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(points) != 3 {
		t.Fatalf("%d points, want 3:\n%s", len(points), stderr.String())
	}
	for _, want := range []string{"convolution convolution_direct x64:gemm:jit forward_inference abcd f32", "eltwise eltwise_gelu_erf", "pooling pooling_avg_include_padding"} {
		if !slices.ContainsFunc(points, func(p roofline.Point) bool { return strings.Contains(p.Label, want) }) {
			t.Errorf("no point labelled %q", want)
		}
	}
	for _, p := range points {
		if p.CI.N != 3 || p.GFlops == nil || *p.GFlops <= 0 {
			t.Errorf("%s: n %d GFLOP/s %v", p.Label, p.CI.N, p.GFlops)
		}
	}
	if !strings.Contains(stderr.String(), "padded-layout") {
		t.Errorf("the padded GELU is not flagged:\n%s", stderr.String())
	}
	// The overhead run creates everything and executes nothing.
	over := exec.Command(os.Args[0], testRprofArg, "dnn", "bench", "--no-exec", "conv3x3-nchw")
	msg, err := over.CombinedOutput()
	if err != nil || !bytes.Contains(msg, []byte("none executed")) {
		t.Errorf("overhead run: %v: %s", err, msg)
	}
}

// libgomp reads its binding when libdnnl loads it, from the C
// environment, which bench sets from Go: the child's libgomp must print
// (OMP_DISPLAY_ENV) the places of the CPUs it may run on. The child is
// started from a thread pinned to the last allowed CPU, so it inherits a
// mask without CPU 0 on a machine of more than one.
func TestDNNBenchBindsOpenMPToTheAllowedCPUs(t *testing.T) {
	skipWithoutDNNL2(t)
	allowed, err := affinity.Allowed()
	if err != nil {
		t.Fatal(err)
	}
	last := allowed[len(allowed)-1]
	var places []string
	for _, c := range allowed {
		places = append(places, fmt.Sprintf("{%d}", c))
	}
	tests := []struct {
		name   string
		pin    bool
		env    []string
		places string
		bind   string
		header string
	}{
		{"every allowed CPU", false, nil, "'" + strings.Join(places, ",") + "'", "'CLOSE'", "OMP_PROC_BIND=close"},
		{"a mask of the last CPU", true, nil, fmt.Sprintf("'{%d}'", last), "'CLOSE'", fmt.Sprintf("OMP_PLACES={%d}", last)},
		{"the user's binding", false, []string{"OMP_PROC_BIND=false"}, "''", "'FALSE'", "placed as the environment says (OMP_PROC_BIND=false)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], testRprofArg, "dnn", "bench", "--library", "libdnnl.so.2", "--no-exec", "--threads", strconv.Itoa(len(allowed)), "conv3x3-nChw16c")
			cmd.Env = append(slices.DeleteFunc(os.Environ(), func(kv string) bool {
				return strings.HasPrefix(kv, "OMP_") || strings.HasPrefix(kv, "GOMP_")
			}), append(tt.env, "OMP_DISPLAY_ENV=true")...)
			var out []byte
			run := func() { out, err = cmd.CombinedOutput() }
			if tt.pin {
				err = affinity.RunPinned([]int{last}, nil, func(int) { run() })
			} else {
				run()
			}
			if err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			for _, want := range []string{"OMP_PLACES = " + tt.places, "OMP_PROC_BIND = " + tt.bind, tt.header} {
				if !strings.Contains(string(out), want) {
					t.Errorf("child's output lacks %q:\n%s", want, out)
				}
			}
		})
	}
}

// rprof dnn starts its program as rprof run does: a directory and a
// script without "#!" are not executable (126), a missing program is not
// found (127), with or without counting.
func TestDNNExitsAsRunDoesForATargetThatCannotStart(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "noshebang.sh")
	if err := os.WriteFile(script, []byte("echo hi\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		target string
		want   int
	}{{dir, exitNoExec}, {script, exitNoExec}, {filepath.Join(dir, "missing"), exitNotFound}} {
		for _, count := range [][]string{nil, {"--count", "emulate"}} {
			args := append(append(slices.Clone(count), "--"), tt.target)
			code, _, stderr := rprofDNN(t, context.Background(), args...)
			if code != tt.want || strings.Count(stderr, "rprof dnn:") > 1 {
				t.Errorf("dnn %q: exit %d, %q; want %d, said once", args, code, stderr, tt.want)
			}
			if runCode, _, _ := rprofRun(t, "", "--work", "1", "--traffic", "1", "--", tt.target); runCode != code {
				t.Errorf("dnn %q: exit %d, run's %d", args, code, runCode)
			}
		}
	}
	// A failure of the probed run is said once, whatever it is here.
	code, _, stderr := rprofDNN(t, context.Background(), "--count", "pmu", "--library", filepath.Join(dir, "libmissing.so"), "--", "true")
	if code == exitOK || strings.Count(stderr, "rprof dnn:") != 1 {
		t.Errorf("--count pmu with a missing library: exit %d, %q; want a failure said once", code, stderr)
	}
}
