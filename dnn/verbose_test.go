package dnn

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rprof/rprof/internal/testutil"
	"github.com/rprof/rprof/roofline"
)

// describe renders a trace and the model of each record for the goldens.
func describe(tr *Trace) string {
	var b strings.Builder
	fmt.Fprintf(&b, "verbose lines %d, records %d, skipped %d, version %q, runtime %q\n", tr.Verbose, len(tr.Records), tr.Skipped, tr.Info.Version, tr.Info.Runtime)
	for _, ex := range tr.Examples {
		fmt.Fprintf(&b, "skipped: %s\n", ex)
	}
	for i := range tr.Records {
		r := &tr.Records[i]
		fmt.Fprintf(&b, "\n%s %s ts=%.3f %s %s %s %s ms=%g\n", r.Syntax, r.Operation, r.TimestampMs, r.Engine, r.Kind, r.Implementation, r.PropKind, r.Millis)
		for _, t := range r.Tensors {
			fmt.Fprintf(&b, "  tensor %s %s props=%q %s tag=%q strides=%q extra=%q\n", t.Arg, t.DataType, t.Properties, t.FormatKind, t.Tag, t.Strides, t.Extra)
		}
		fmt.Fprintf(&b, "  attrs=%q aux=%q problem=%q\n", r.Attributes, r.Auxiliary, r.Problem)
		a := Model(r)
		fmt.Fprintf(&b, "  W=%s Q=%s padded-W=%s precision=%q\n", num(a.WorkFlops), num(a.TrafficBytes), num(a.PaddedWorkFlops), a.Precision)
		for _, f := range a.Flags {
			fmt.Fprintf(&b, "  flag %s: %s\n", f.Code, f.Message)
		}
	}
	return b.String()
}

func num(v *float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%.0f", *v)
}

func readTrace(t *testing.T, path string) *Trace {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr := &Trace{KeepRecords: true, Ordered: true}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		tr.Add(sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return tr
}

// The fixtures are lines printed by real libraries: 2.6.3 captured here,
// 1.x and 3.x from oneDNN's documentation and issue threads (see
// testdata/README.md).
func TestParseGoldens(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, path := range files {
		name := strings.TrimSuffix(filepath.Base(path), ".txt")
		t.Run(name, func(t *testing.T) {
			tr := readTrace(t, path)
			if len(tr.Records) == 0 {
				t.Fatalf("%s: no records", path)
			}
			testutil.Golden(t, filepath.Join("testdata", name+".golden"), []byte(describe(tr)))
		})
	}
}

// The captures of the same program (allkinds.c, allkinds3.c) through
// oneDNN 2.6.3 and 3.7.2 cover every kind with a formula.
func TestCapturedTraceCoversEveryKindWithAFormula(t *testing.T) {
	for _, path := range []string{"testdata/capture-2.6.3-allkinds.txt", "testdata/capture-3.7.2-allkinds.txt"} {
		t.Run(filepath.Base(path), func(t *testing.T) { checkCoversEveryKind(t, readTrace(t, path)) })
	}
}

func checkCoversEveryKind(t *testing.T, tr *Trace) {
	t.Helper()
	seen := map[string]bool{}
	for i := range tr.Records {
		seen[tr.Records[i].Kind] = true
		a := Model(&tr.Records[i])
		noFormula := false
		for _, f := range a.Flags {
			noFormula = noFormula || f.Code == roofline.FlagNoFormula
		}
		if (a.WorkFlops == nil) != noFormula {
			t.Errorf("%s: W %v but no-formula flag %v", tr.Records[i].Kind, a.WorkFlops, noFormula)
		}
	}
	for kind := range modelers {
		if kind == "deconvolution" || kind == "logsoftmax" {
			continue // not exercised by the capture program
		}
		if !seen[kind] {
			t.Errorf("kind %s has a formula but no captured line", kind)
		}
	}
	if tr.Skipped != 0 {
		t.Errorf("skipped %d captured lines: %q", tr.Skipped, tr.Examples)
	}
}

// The same primitives traced by oneDNN 2.6.3 and 3.7.2, whose lines differ
// in grammar (arg:dt descriptors, a v1 field, no diff_undef, pooling_v2
// and softmax_v2 renamed, a matmul problem without its destination), get
// the same Q, and the same W but where GELU erf's kernels differ: 38 FLOP
// per element in 2.6.3's, 13 in 3.7.2's.
func TestTwoAndThreeXLinesOfOnePrimitiveModelAlike(t *testing.T) {
	two := readTrace(t, "testdata/capture-2.6.3-allkinds.txt")
	three := readTrace(t, "testdata/capture-3.7.2-allkinds.txt")
	erf := func(r *Record) bool { return strings.Contains(r.Auxiliary+r.Attributes, "gelu_erf") }
	checkModelsAlike(t, three, two, "2.6.3", erf)
	for i := range three.Records {
		if r := &three.Records[i]; r.Kind == "eltwise" && erf(r) {
			w2, w3 := Model(&two.Records[i]).WorkFlops, Model(r).WorkFlops
			if got, want := *w3 / *w2, float64(GeluErf3Flops)/GeluErfFlops; got != want {
				t.Errorf("record %d: GELU erf W 3.7.2 / 2.6.3 = %g, want %g", i, got, want)
			}
		}
	}
}

// checkModelsAlike checks that the records of got and want, in order, are
// of the same kinds with the same Q, and the same W and padded W unless
// otherWork says the two versions' kernels differ.
func checkModelsAlike(t *testing.T, got, want *Trace, wantName string, otherWork func(*Record) bool) {
	t.Helper()
	if len(got.Records) != len(want.Records) {
		t.Fatalf("%d records, %s has %d", len(got.Records), wantName, len(want.Records))
	}
	for i := range got.Records {
		g, w := &got.Records[i], &want.Records[i]
		mg, mw := Model(g), Model(w)
		sameW := otherWork(g) || num(mg.WorkFlops) == num(mw.WorkFlops) && num(mg.PaddedWorkFlops) == num(mw.PaddedWorkFlops)
		if g.Kind != w.Kind || !sameW || num(mg.TrafficBytes) != num(mw.TrafficBytes) {
			t.Errorf("record %d: %s W %s Q %s; %s has %s W %s Q %s", i, g.Kind, num(mg.WorkFlops), num(mg.TrafficBytes), wantName, w.Kind, num(mw.WorkFlops), num(mw.TrafficBytes))
		}
	}
}

func TestMalformedLinesAreSkippedAndCounted(t *testing.T) {
	good := "onednn_verbose,exec,cpu,matmul,brg:avx512_core,undef,src_f32::blocked:ab:f0 wei_f32::blocked:ab:f0 dst_f32::blocked:ab:f0,,,128x1024:1024x1024:128x1024,2.20117"
	lines := []string{
		good,
		good[:len(good)/2], // truncated
		strings.Replace(good, "2.20117", "fast", 1),
		strings.Replace(good, "src_f32::blocked:ab:f0", "src_f32", 1),
		strings.Replace(good, "src_f32::blocked:ab:f0", "src_q99::blocked:ab:f0", 1),
		"onednn_verbose,1.5.x,exec",
		"onednn_verbose,",
		"not verbose at all",
		"onednn_verbose,info,oneDNN v2.6.3 (commit N/A)",
	}
	tr := &Trace{KeepRecords: true}
	for _, l := range lines {
		tr.Add(l)
	}
	if len(tr.Records) != 1 || tr.Skipped != 6 || tr.Verbose != 8 {
		t.Errorf("records %d skipped %d verbose %d, want 1, 6, 8; examples %q", len(tr.Records), tr.Skipped, tr.Verbose, tr.Examples)
	}
	if len(tr.Examples) != 3 {
		t.Errorf("kept %d examples, want the first 3", len(tr.Examples))
	}
	_, _, err := ParseLine(lines[1])
	if !errors.Is(err, ErrMalformed) {
		t.Errorf("truncated line: error %v, want ErrMalformed", err)
	}
	if tr.Info.Version != "v2.6.3" {
		t.Errorf("version %q", tr.Info.Version)
	}
}

func TestParseTensorReadsEveryGrammar(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Tensor
	}{
		{"src_f32::blocked:aBcd16b:f0", Tensor{Arg: "src", DataType: "f32", FormatKind: "blocked", Tag: "aBcd16b", Extra: "f0"}},
		{"data_f32:p:blocked:aBcd8b:f0", Tensor{Arg: "data", DataType: "f32", Properties: "p", FormatKind: "blocked", Tag: "aBcd8b", Extra: "f0"}},
		{"diff_undef::undef::f0", Tensor{Arg: "diff", DataType: "undef", FormatKind: "undef", Extra: "f0"}},
		{"src_f32:a:blocked:aBcd16b::f0", Tensor{Arg: "src", DataType: "f32", Properties: "a", FormatKind: "blocked", Tag: "aBcd16b", Extra: "f0"}},
		{"diff_undef::undef:::", Tensor{Arg: "diff", DataType: "undef", FormatKind: "undef"}},
		{"bia:f32::blocked:ab::f0_mask0", Tensor{Arg: "bia", DataType: "f32", FormatKind: "blocked", Tag: "ab", Extra: "f0_mask0"}},
		{"diff_src:bf16::blocked:acdb::f0", Tensor{Arg: "diff_src", DataType: "bf16", FormatKind: "blocked", Tag: "acdb", Extra: "f0"}},
		{"src_f8_e5m2::blocked:ab::f0", Tensor{Arg: "src", DataType: "f8_e5m2", FormatKind: "blocked", Tag: "ab", Extra: "f0"}},
		{"wei_s8:a:any:any::f0", Tensor{Arg: "wei", DataType: "s8", Properties: "a", FormatKind: "any", Tag: "any", Extra: "f0"}},
	} {
		got, err := ParseTensor(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseTensor(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
}

func TestParseTagPadsBlockedDimensions(t *testing.T) {
	for _, tc := range []struct {
		tag  string
		dims []int64
		want []int64
	}{
		{"aBcd16b", []int64{256, 3, 227, 227}, []int64{256, 16, 227, 227}},
		{"aBcd8b", []int64{256, 3, 227, 227}, []int64{256, 8, 227, 227}},
		{"ABcd16b16a", []int64{19, 23, 1, 1}, []int64{32, 32, 1, 1}},
		{"aBCde16c16b", []int64{2, 32, 20, 3, 3}, []int64{2, 32, 32, 3, 3}},
		{"Acdb64a", []int64{64, 64, 3, 3}, []int64{64, 64, 3, 3}},
		{"AB16b64a", []int64{10, 256}, []int64{64, 256}},
		{"ABcd4b16a4b", []int64{20, 20, 3, 3}, []int64{32, 32, 3, 3}},
		{"abcd", []int64{2, 3, 4, 5}, []int64{2, 3, 4, 5}},
		{"abc", []int64{2, 3, 4, 5}, []int64{2, 3, 4, 5}}, // does not fit: left alone
	} {
		got := paddedDims(Tensor{FormatKind: "blocked", Tag: tc.tag}, tc.dims)
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%s %v: padded %v, want %v", tc.tag, tc.dims, got, tc.want)
		}
	}
	for _, bad := range []string{"aB", "16b", "ab16", "a16"} {
		if _, _, err := parseTag(bad); err == nil {
			t.Errorf("parseTag(%q) accepted", bad)
		}
	}
}
