package dnn

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/rprof/rprof/roofline"
)

// joinTrace is a recorded oneDNN 2.6.3 trace (emulated: jit:avx2 chose
// 8-channel blocks) of a convolution, GELU twice, a reorder, and a creation
// line, which is no call.
const joinTrace = `onednn_verbose,info,oneDNN v2.6.3 (commit N/A)
onednn_verbose,create:cache_miss,cpu,eltwise,jit:avx2,forward_inference,data_f32::blocked:aBcd8b:f0 diff_undef::undef::f0,,alg:eltwise_gelu_erf alpha:0 beta:0,1x3x8x8,0.0571289
onednn_verbose,exec,cpu,convolution,jit:avx2,forward_inference,src_f32::blocked:aBcd8b:f0 wei_f32::blocked:ABcd8b8a:f0 bia_f32::blocked:a:f0 dst_f32::blocked:aBcd8b:f0,,alg:convolution_direct,mb1_ic8oc8_ih8oh8kh3sh1dh0ph1_iw8ow8kw3sw1dw0pw1,1.5
onednn_verbose,exec,cpu,eltwise,jit:avx2,forward_inference,data_f32::blocked:aBcd8b:f0 diff_undef::undef::f0,,alg:eltwise_gelu_erf alpha:0 beta:0,1x3x8x8,0.5
onednn_verbose,exec,cpu,reorder,jit:uni,undef,src_f32::blocked:abcd:f0 dst_f32::blocked:aBcd8b:f0,,,1x3x8x8,0.1
onednn_verbose,exec,cpu,eltwise,jit:avx2,forward_inference,data_f32::blocked:aBcd8b:f0 diff_undef::undef::f0,,alg:eltwise_gelu_erf alpha:0 beta:0,1x3x8x8,0.5
`

// traceOf is the trace of lines.
func traceOf(lines ...string) *Trace {
	tr := &Trace{Ordered: true}
	for _, l := range lines {
		tr.Add(l)
	}
	return tr
}

func fp32(w float64) map[string]float64 { return map[string]float64{roofline.Single: w} }

func TestJoinAttributesTheKthCallToTheKthExecution(t *testing.T) {
	q := func(v float64) *float64 { return &v }
	for _, tc := range []struct {
		name  string
		calls []CallCount
		// want: per group in trace order, the counted mean W and Q, the
		// calls summarised and overlapped; mismatch: a CallMismatchError.
		want     map[string]Counted
		mismatch bool
	}{{
		name: "one count per execution",
		calls: []CallCount{
			{WorkByPrecision: fp32(9728), TrafficBytes: q(4096)},
			{WorkByPrecision: fp32(19456), TrafficBytes: q(2048)},
			{WorkByPrecision: fp32(0), TrafficBytes: q(1024)},
			{WorkByPrecision: fp32(19456), TrafficBytes: q(0)},
		},
		want: map[string]Counted{
			"convolution": {Calls: 1, WorkFlops: q(9728), MinWork: 9728, MaxWork: 9728, TrafficBytes: q(4096), MinTraffic: 4096, MaxTraffic: 4096},
			"eltwise":     {Calls: 2, WorkFlops: q(19456), MinWork: 19456, MaxWork: 19456, TrafficBytes: q(1024), MinTraffic: 0, MaxTraffic: 2048},
			"reorder":     {Calls: 1, WorkFlops: q(0), TrafficBytes: q(1024), MinTraffic: 1024, MaxTraffic: 1024},
		},
	}, {
		name: "an overlapped call is left out of its group",
		calls: []CallCount{
			{WorkByPrecision: fp32(9728)},
			{WorkByPrecision: fp32(40000), Overlapped: true},
			{WorkByPrecision: fp32(0)},
			{WorkByPrecision: fp32(19456)},
		},
		want: map[string]Counted{
			"convolution": {Calls: 1, WorkFlops: q(9728), MinWork: 9728, MaxWork: 9728},
			"eltwise":     {Calls: 1, Overlapped: 1, WorkFlops: q(19456), MinWork: 19456, MaxWork: 19456},
			"reorder":     {Calls: 1, WorkFlops: q(0)},
		},
	}, {
		name: "time only (uprobes without FP counters)",
		calls: []CallCount{
			{Seconds: q(1e-3)}, {Seconds: q(2e-3)}, {Seconds: q(1e-3)}, {Seconds: q(4e-3)},
		},
		want: map[string]Counted{
			"convolution": {Calls: 1, Seconds: q(1e-3)},
			"eltwise":     {Calls: 2, Seconds: q(3e-3)},
			"reorder":     {Calls: 1, Seconds: q(1e-3)},
		},
	}, {
		name:     "a call fewer than executions",
		calls:    []CallCount{{}, {}, {}},
		mismatch: true,
	}, {
		name:     "a call more than executions",
		calls:    []CallCount{{}, {}, {}, {}, {}},
		mismatch: true,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			tr := traceOf(strings.Split(strings.TrimSpace(joinTrace), "\n")...)
			err := tr.Join(tc.calls)
			var me *CallMismatchError
			if tc.mismatch {
				if !errors.As(err, &me) || me.Execs != 4 || me.Calls != len(tc.calls) || slices.ContainsFunc(tr.Groups(), func(g *Group) bool { return g.Counts != nil }) {
					t.Fatalf("Join: %v; want a CallMismatchError of 4 executions and no group counted", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, g := range tr.Groups() {
				got, ok := g.Counted()
				if !ok {
					t.Fatalf("%s: no counts", g.Kind)
				}
				got.WorkByPrecision = nil
				if want := tc.want[g.Kind]; !reflect.DeepEqual(got, want) {
					t.Errorf("%s: %s, want %s", g.Kind, show(got), show(want))
				}
			}
		})
	}
}

func show(c Counted) string {
	f := func(p *float64) any {
		if p == nil {
			return "nil"
		}
		return *p
	}
	return fmt.Sprint("calls ", c.Calls, " overlapped ", c.Overlapped, " W ", f(c.WorkFlops), " [", c.MinWork, ", ", c.MaxWork,
		"] Q ", f(c.TrafficBytes), " [", c.MinTraffic, ", ", c.MaxTraffic, "] s ", f(c.Seconds))
}

func TestCountFlagsMarkLargeGapsOnly(t *testing.T) {
	lines := strings.Split(joinTrace, "\n") // lines[1] is the creation
	conv, gelu := Model(mustParse(t, lines[2])), Model(mustParse(t, lines[3]))
	q := func(v float64) *float64 { return &v }
	for _, tc := range []struct {
		name  string
		a     Analytic
		c     Counted
		codes []string // want flag code:subject
	}{
		{"counted W equal to the analytic", conv, Counted{Calls: 1, WorkFlops: q(*conv.WorkFlops)}, nil},
		{"padding taps skipped: 0.8x", conv, Counted{Calls: 1, WorkFlops: q(*conv.WorkFlops * 0.81)}, nil},
		// 3 channels padded to 8: 8/3 the FLOPs.
		{"GELU on padded channels", gelu, Counted{Calls: 1, WorkFlops: q(*gelu.WorkFlops * 8 / 3)},
			[]string{"counted-gap:work_flops"}},
		{"far fewer FLOPs than the formula", conv, Counted{Calls: 1, WorkFlops: q(*conv.WorkFlops / 2)},
			[]string{"counted-gap:work_flops"}},
		{"Q beyond twice the compulsory", gelu, Counted{Calls: 1, TrafficBytes: q(*gelu.TrafficBytes * 2.5)},
			[]string{"counted-gap:traffic_bytes"}},
		{"Q of a write-allocate elementwise kernel, 1.5x", gelu, Counted{Calls: 1, TrafficBytes: q(*gelu.TrafficBytes * 1.5)}, nil},
		{"Q below compulsory (cached between calls)", gelu, Counted{Calls: 1, TrafficBytes: q(0)}, nil},
		{"overlapped calls", conv, Counted{Calls: 1, Overlapped: 2, WorkFlops: q(*conv.WorkFlops)},
			[]string{"overlapped-calls:work_flops"}},
		{"no formula", Analytic{}, Counted{Calls: 1, WorkFlops: q(5)}, nil},
	} {
		var got []string
		for _, f := range CountFlags(tc.a, tc.c) {
			got = append(got, f.Code+":"+f.Subject)
		}
		if !reflect.DeepEqual(got, tc.codes) {
			t.Errorf("%s: flags %v, want %v", tc.name, got, tc.codes)
		}
	}
}
