package dnnbench

import (
	"errors"
	"strings"
	"testing"

	"github.com/rprof/rprof/dnn"
)

func TestParseProblemTellsTheKindFromTheDescriptor(t *testing.T) {
	for _, tc := range []struct {
		desc, kind, alg, layout string
		want                    Problem
	}{
		{"mb1_ic64oc64_ih56oh56kh3sh1dh0ph1_iw56ow56kw3sw1dw0pw1", "", "", "", Problem{"convolution", "", "nChw16c", "mb1_ic64oc64_ih56oh56kh3sh1dh0ph1_iw56ow56kw3sw1dw0pw1"}},
		{"mb128ic1024oc1024", "", "", "", Problem{"inner_product", "", "", "mb128ic1024oc1024"}},
		{"128x1024:1024x1024", "", "", "", Problem{"matmul", "", "", "128x1024:1024x1024"}},
		{"mb8ic64_ih112oh56kh3sh2dh0ph1_iw112ow56kw3sw2dw0pw1", "", "avg_include_padding", "nchw", Problem{"pooling", "pooling_avg_include_padding", "nchw", "mb8ic64_ih112oh56kh3sh2dh0ph1_iw112ow56kw3sw2dw0pw1"}},
		{"64x3x227x227", "", "gelu_tanh", "nChw8c", Problem{"eltwise", "eltwise_gelu_tanh", "nChw8c", "64x3x227x227"}},
		{"2x64x112x112", "", "", "", Problem{"eltwise", "eltwise_gelu_erf", "nChw16c", "2x64x112x112"}},
	} {
		got, err := ParseProblem(tc.desc, tc.kind, tc.alg, tc.layout)
		if err != nil || got != tc.want {
			t.Errorf("ParseProblem(%q, %q, %q, %q) = %+v, %v; want %+v", tc.desc, tc.kind, tc.alg, tc.layout, got, err, tc.want)
		}
	}
	for _, bad := range [][4]string{
		{"mb2ic3", "", "", ""},               // no oc, no kernel
		{"64x3", "softmax", "", ""},          // a kind the harness does not run
		{"mb128ic1024oc1024", "", "max", ""}, // an algorithm for an inner product
		{"2x3x4x5", "", "", "nCdhw16c"},      // unknown layout
		{"mb1_ic64", "", "", ""},             // incomplete
	} {
		if _, err := ParseProblem(bad[0], bad[1], bad[2], bad[3]); !errors.Is(err, ErrProblem) {
			t.Errorf("ParseProblem(%q): error %v, want ErrProblem", bad, err)
		}
	}
}

// Every experiment is a problem the model has a formula for, with the
// padding of seed 004's GELU lesson where its layout pads.
func TestExperimentsAreModelled(t *testing.T) {
	seen := map[string]bool{}
	for _, x := range Experiments {
		if seen[x.Name] {
			t.Errorf("experiment %s listed twice", x.Name)
		}
		seen[x.Name] = true
		rec := x.Problem.record("test", func(string) string { return "" })
		a := dnn.Model(&rec)
		if a.WorkFlops == nil || a.TrafficBytes == nil {
			t.Errorf("%s: W %v Q %v, flags %v", x.Name, a.WorkFlops, a.TrafficBytes, a.Flags)
		}
		padded := a.PaddedWorkFlops != nil && *a.PaddedWorkFlops > *a.WorkFlops
		if want := x.Problem.Layout == "nChw8c"; padded != want {
			t.Errorf("%s: padded work %v, want %v", x.Name, padded, want)
		}
	}
	for _, name := range []string{"conv7x7-nchw", "conv3x3-nChw16c", "conv3x3-nhwc", "ip", "maxpool-nchw", "avgpool-nChw16c", "gelu-erf-nchw", "gelu-tanh-nChw8c"} {
		if !seen[name] {
			t.Errorf("no experiment %s", name)
		}
	}
}

// The tag of a blocked layout, as the verbose trace prints it, from the
// strides and inner blocks a memory descriptor holds.
func TestBlockingTagNamesTheLayoutAsTheTraceDoes(t *testing.T) {
	for _, tc := range []struct {
		b    blocking
		want string
	}{
		{blocking{padded: []int64{2, 3, 4, 5}, strides: []int64{60, 20, 5, 1}}, "abcd"},
		{blocking{padded: []int64{2, 3, 4, 5}, strides: []int64{60, 1, 15, 3}}, "acdb"},
		{blocking{padded: []int64{2, 32, 4, 5}, strides: []int64{640, 320, 80, 16}, innerBlks: []int64{16}, innerIdxs: []int64{1}}, "aBcd16b"},
		// Equal outer strides: the dimension with more outer blocks first.
		{blocking{padded: []int64{32, 16, 3, 3}, strides: []int64{2304, 2304, 768, 256}, innerBlks: []int64{16, 16}, innerIdxs: []int64{1, 0}}, "ABcd16b16a"},
		{blocking{padded: []int64{32, 3, 3, 3}, strides: []int64{144, 1, 48, 16}, innerBlks: []int64{16}, innerIdxs: []int64{0}}, "Acdb16a"},
		// Size-1 dimensions share stride 1: their order is kept.
		{blocking{padded: []int64{1, 16, 1, 1}, strides: []int64{16, 1, 1, 1}}, "abcd"},
		{blocking{padded: []int64{64, 1024}, strides: []int64{1024, 1}}, "ab"},
		{blocking{padded: []int64{2, 32, 32, 3, 3}, strides: []int64{9216, 4608, 2304, 768, 256}, innerBlks: []int64{16, 16}, innerIdxs: []int64{2, 1}}, "aBCde16c16b"},
	} {
		got := tc.b.tag()
		if got != tc.want {
			t.Errorf("%+v: tag %q, want %q", tc.b, got, tc.want)
		}
		if _, err := dnn.ParseTensor("x_f32::blocked:" + got + ":f0"); err != nil {
			t.Errorf("%q does not parse: %v", got, err)
		}
	}
}

func TestResolveAllExpandsAllAndNamesTheArgumentItCannotResolve(t *testing.T) {
	all, err := ResolveAll([]string{"all"}, "", "", "")
	if err != nil || len(all) != len(Experiments) {
		t.Fatalf("ResolveAll(all) = %d problems, %v; want %d", len(all), err, len(Experiments))
	}
	two, err := ResolveAll([]string{Experiments[0].Name, "mb128ic1024oc1024"}, "", "", "")
	if err != nil || len(two) != 2 || two[0] != Experiments[0].Problem {
		t.Fatalf("ResolveAll(experiment, descriptor) = %v, %v", two, err)
	}
	_, err = ResolveAll([]string{"all", "nonsense"}, "", "", "")
	if err == nil || !strings.HasPrefix(err.Error(), "nonsense: ") {
		t.Errorf("ResolveAll(nonsense) err = %v, want one naming the argument", err)
	}
}
