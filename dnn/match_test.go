package dnn

import (
	"slices"
	"strings"
	"testing"

	"github.com/rprof/rprof/roofline"
)

// smallCalls are the call records the plugin wrote for the emulated run
// of count-2.6.3-small (measure/emulate/testdata/calls-small): fp64 and
// fp32 FLOPs, DRAM bytes read (none written while the calls ran).
var smallCalls = []CallCount{
	{WorkByPrecision: map[string]float64{"fp64": 852, "fp32": 74944}, TrafficBytes: ptr(1888256)},
	{WorkByPrecision: map[string]float64{"fp64": 12, "fp32": 61952}, TrafficBytes: ptr(2816)},
	{WorkByPrecision: map[string]float64{"fp64": 12, "fp32": 44688}, TrafficBytes: ptr(12160)},
	{WorkByPrecision: map[string]float64{"fp64": 12, "fp32": 119168}, TrafficBytes: ptr(26048)},
}

func TestCountedGroupsMatchTheTimedOnesByProblem(t *testing.T) {
	native := readTrace(t, "testdata/count-2.6.3-small/native.txt").Groups()
	emulated := readTrace(t, "testdata/count-2.6.3-small/emulated.txt")
	if err := emulated.Join(smallCalls); err != nil {
		t.Fatal(err)
	}
	MatchCounted(native, emulated.Groups())
	points := Points(native, PointOptions{Confidence: 0.95, CountSource: roofline.SourceEmulated})
	for _, tc := range []struct {
		label string // prefix
		w     float64
		flags []string // the match's flag codes
	}{
		// Same implementation and layouts natively and emulated.
		{"convolution convolution_direct x64:gemm:jit forward_inference abcd", 74944 + 852, []string{roofline.FlagCountedGap}},
		// brgconv:avx512_core natively, jit:avx2 emulated; the user's
		// NHWC layout is the same, the weights' differ. 3x3 taps on 8x8
		// with padding 1: 22/24 inside per axis, so 0.84 of the formula,
		// no bias FLOPs: inside the W gap ratio.
		{"convolution convolution_direct brgconv:avx512_core forward_inference acdb", 61952 + 12, []string{roofline.FlagCountedOther}},
		{"eltwise eltwise_gelu_erf jit:avx512_core forward_inference abcd", 44688 + 12, []string{roofline.FlagCountedOther}},
		// Seed 004's lesson: 3 channels padded to 8, 8/3 the FLOPs.
		{"eltwise eltwise_gelu_erf jit:avx512_core forward_inference aBcd8b", 119168 + 12, []string{roofline.FlagCountedOther, roofline.FlagCountedGap}},
	} {
		i := slices.IndexFunc(points, func(p roofline.Point) bool { return strings.HasPrefix(p.Label, tc.label) })
		if i < 0 {
			t.Errorf("no point %q", tc.label)
			continue
		}
		p, g := points[i], native[i]
		var codes []string
		for _, f := range g.Match.Flags {
			codes = append(codes, f.Code)
		}
		if p.Source != roofline.SourceEmulated || p.WorkFlops == nil || *p.WorkFlops != tc.w || p.Analytic == nil || !slices.Equal(codes, tc.flags) {
			t.Errorf("%s: source %s, W %v, analytic %v, flags %v; want emulated, W %g, flags %v", tc.label, p.Source, deref(p.WorkFlops), p.Analytic, codes, tc.w, tc.flags)
			continue
		}
		if r := p.Analytic.WorkRatio; r == nil || *r != tc.w / *p.Analytic.WorkFlops {
			t.Errorf("%s: work ratio %v, want %g", tc.label, deref(r), tc.w / *p.Analytic.WorkFlops)
		}
		if hasCode(p.Flags, roofline.FlagAnalytic) {
			t.Errorf("%s: a counted point keeps the analytic flag", tc.label)
		}
	}
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

func TestMatchCountedNeverGuesses(t *testing.T) {
	line := func(impl, tag, problem string) string {
		return "onednn_verbose,exec,cpu,eltwise," + impl + ",forward_inference,data_f32::blocked:" + tag + ":f0 diff_undef::undef::f0,,alg:eltwise_gelu_erf alpha:0 beta:0," + problem + ",1"
	}
	group := func(lines ...string) []*Group {
		tr := traceOf(lines...)
		var calls []CallCount
		for range lines {
			calls = append(calls, CallCount{WorkByPrecision: map[string]float64{"fp32": 1000}, TrafficBytes: ptr(10)})
		}
		if err := tr.Join(calls); err != nil {
			t.Fatal(err)
		}
		return tr.Groups()
	}
	for _, tc := range []struct {
		name           string
		timed, counted []*Group
		matched        bool
		code           string // a flag code the match must carry
	}{
		{"the same layout", group(line("jit:avx512_core", "aBcd16b", "2x32x4x4")), group(line("jit:avx2", "aBcd16b", "2x32x4x4")), true, roofline.FlagCountedOther},
		{"other inner blocks, one candidate", group(line("jit:avx512_core", "aBcd16b", "2x32x4x4")), group(line("jit:avx2", "aBcd8b", "2x32x4x4")), true, roofline.FlagCountedOther},
		{"two candidates", group(line("jit:avx512_core", "aBcd16b", "2x32x4x4")), group(line("jit:avx2", "aBcd8b", "2x32x4x4"), line("jit:avx2", "aBcd4b", "2x32x4x4")), false, roofline.FlagUncounted},
		{"two timed groups for one candidate", group(line("jit:avx512_core", "aBcd16b", "2x32x4x4"), line("jit:avx512_core", "aBcd4b", "2x32x4x4")), group(line("jit:avx2", "aBcd8b", "2x32x4x4")), false, roofline.FlagUncounted},
		{"another user layout", group(line("jit:avx512_core", "abcd", "2x32x4x4")), group(line("jit:avx2", "acdb", "2x32x4x4")), false, roofline.FlagUncounted},
		{"another problem", group(line("jit:avx512_core", "abcd", "2x32x4x4")), group(line("jit:avx2", "abcd", "2x32x4x8")), false, roofline.FlagUncounted},
	} {
		MatchCounted(tc.timed, tc.counted)
		m := tc.timed[0].Match
		if (m.Counted.WorkFlops != nil) != tc.matched || !hasCode(m.Flags, tc.code) {
			t.Errorf("%s: matched %v, flags %v; want matched %v with %s", tc.name, m.Counted.WorkFlops != nil, m.Flags, tc.matched, tc.code)
		}
	}
}
