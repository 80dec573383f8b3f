// Package dnnbench runs oneDNN primitives itself, through the library's C
// API loaded at run time (no cgo), and times them: seed 004's experiments
// by name, or any shape given as a oneDNN verbose problem descriptor, so a
// shape seen in a trace can be replayed. The work and traffic of each
// problem come from package dnn's model.
//
// oneDNN 2.x (api2_linux.go) and 3.x (api3_linux.go, whose C API replaced
// 2.x's operation descriptors with one primitive-descriptor call per kind)
// are supported; dnnl_version() picks the binding and another major
// version is refused. A further API generation is one more file
// implementing the generation interface of core_linux.go.
package dnnbench

import (
	"errors"
	"fmt"
	"strings"

	"github.com/rprof/rprof/dnn"
)

// Layouts of the activations (src and dst) of 4D problems, by oneDNN
// format tag name, with the tag's letters as the verbose trace prints them.
var Layouts = map[string]string{
	"nchw":    "abcd",
	"nhwc":    "acdb",
	"nChw16c": "aBcd16b",
	"nChw8c":  "aBcd8b",
}

// Problem is one primitive to run.
type Problem struct {
	// Kind is a oneDNN primitive kind: convolution, inner_product, matmul,
	// pooling or eltwise.
	Kind string
	// Alg is the algorithm of pooling (pooling_max,
	// pooling_avg_include_padding, pooling_avg_exclude_padding) and
	// eltwise (eltwise_gelu_erf, eltwise_gelu_tanh).
	Alg string
	// Layout is the activations' format tag (a key of Layouts) for 4D
	// problems; weights are left to the library (format any).
	Layout string
	// Descriptor is the problem in the verbose trace's grammar:
	// mb1_ic64oc64_ih56oh56kh3sh1dh0ph1_iw56ow56kw3sw1dw0pw1 (convolution),
	// mb128ic1024oc1024 (inner product), 128x1024:1024x1024 (matmul),
	// mb8ic64_ih112oh56kh3sh2dh0ph1_iw112ow56kw3sw2dw0pw1 (pooling),
	// 64x3x227x227 (eltwise).
	Descriptor string
}

func (p Problem) String() string {
	parts := []string{p.Kind}
	if p.Alg != "" {
		parts = append(parts, p.Alg)
	}
	if p.Layout != "" {
		parts = append(parts, p.Layout)
	}
	return strings.Join(append(parts, p.Descriptor), " ")
}

// Experiment is a named problem of seed 004.
type Experiment struct {
	Name    string
	Summary string
	Problem Problem
}

// Shapes of the experiments: ResNet-50's first convolution (7x7, stride
// 2) and a 3x3 one of its first stage; a BERT-sized inner product; the
// 3x3 stride-2 pooling after ResNet's first convolution; seed 004's GELU
// input with 3 channels (256x3x227x227 there, a quarter of the batch
// here).
const (
	conv7x7 = "mb1_ic3oc64_ih224oh112kh7sh2dh0ph3_iw224ow112kw7sw2dw0pw3"
	conv3x3 = "mb1_ic64oc64_ih56oh56kh3sh1dh0ph1_iw56ow56kw3sw1dw0pw1"
	ip      = "mb128ic1024oc1024"
	pool    = "mb8ic64_ih112oh56kh3sh2dh0ph1_iw112ow56kw3sw2dw0pw1"
	gelu    = "64x3x227x227"
)

// Experiments lists seed 004's experiments.
var Experiments = func() []Experiment {
	var out []Experiment
	for _, l := range []string{"nchw", "nhwc", "nChw16c"} {
		out = append(out,
			Experiment{"conv7x7-" + l, "7x7 stride-2 convolution, activations " + l, Problem{"convolution", "", l, conv7x7}},
			Experiment{"conv3x3-" + l, "3x3 convolution, activations " + l, Problem{"convolution", "", l, conv3x3}})
	}
	out = append(out, Experiment{"ip", "inner product, 128x1024 by 1024x1024", Problem{"inner_product", "", "", ip}})
	for _, l := range []string{"nchw", "nChw16c"} {
		out = append(out,
			Experiment{"maxpool-" + l, "3x3 stride-2 max pooling, " + l, Problem{"pooling", "pooling_max", l, pool}},
			Experiment{"avgpool-" + l, "3x3 stride-2 average pooling, " + l, Problem{"pooling", "pooling_avg_include_padding", l, pool}})
	}
	for _, alg := range []string{"erf", "tanh"} {
		for _, l := range []string{"nchw", "nChw8c"} {
			out = append(out, Experiment{"gelu-" + alg + "-" + l, "GELU (" + alg + ") on 3 channels, " + l, Problem{"eltwise", "eltwise_gelu_" + alg, l, gelu}})
		}
	}
	return out
}()

// ErrProblem is wrapped by the errors of problems the harness cannot run.
var ErrProblem = errors.New("bad problem")

// ErrNoKind is wrapped when a descriptor does not tell its problem's kind
// and none was given.
var ErrNoKind = fmt.Errorf("%w: cannot tell the kind", ErrProblem)

// Lookup returns the experiment of a name.
func Lookup(name string) (Experiment, bool) {
	for _, e := range Experiments {
		if e.Name == name {
			return e, true
		}
	}
	return Experiment{}, false
}

// Resolve makes a problem of an argument: a seed 004 experiment's name, or
// a descriptor parsed by ParseProblem with kind, alg and layout. name is
// the experiment's name, or the problem's kind, algorithm, layout and
// descriptor joined by '-'.
func Resolve(arg, kind, alg, layout string) (p Problem, name string, err error) {
	if x, ok := Lookup(arg); ok {
		return x.Problem, x.Name, nil
	}
	if p, err = ParseProblem(arg, kind, alg, layout); err != nil {
		return Problem{}, "", err
	}
	return p, strings.ReplaceAll(p.String(), " ", "-"), nil
}

// ResolveAll makes the problems of arguments: experiments' names, "all"
// (every experiment), or descriptors (Resolve). An argument that is
// neither fails, named.
func ResolveAll(args []string, kind, alg, layout string) ([]Problem, error) {
	var problems []Problem
	for _, a := range args {
		if a == "all" {
			for _, x := range Experiments {
				problems = append(problems, x.Problem)
			}
			continue
		}
		p, _, err := Resolve(a, kind, alg, layout)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", a, err)
		}
		problems = append(problems, p)
	}
	return problems, nil
}

// ParseProblem makes a problem of a verbose descriptor. The kind is told
// from the descriptor when kind is "": named fields with oc and a kernel
// are a convolution, with oc and no kernel an inner product, with a kernel
// and no oc a pooling; A:B dimensions a matmul, one dimension list an
// eltwise. Pooling defaults to max, eltwise to GELU with erf, 4D
// activations to nChw16c.
func ParseProblem(desc, kind, alg, layout string) (Problem, error) {
	p := Problem{Kind: kind, Alg: alg, Layout: layout, Descriptor: desc}
	// The descriptor is parsed even when the kind is given, to refuse a
	// malformed one.
	told, err := kindOf(desc)
	if err != nil {
		return Problem{}, err
	}
	if p.Kind == "" {
		if told == "" {
			return Problem{}, fmt.Errorf("%w of %q", ErrNoKind, desc)
		}
		p.Kind = told
	}
	if err := p.defaultAlg(); err != nil {
		return Problem{}, err
	}
	if p.Layout == "" && (p.Kind == "convolution" || p.Kind == "pooling" || p.Kind == "eltwise") {
		p.Layout = "nChw16c"
	}
	if _, ok := Layouts[p.Layout]; p.Layout != "" && !ok {
		return Problem{}, fmt.Errorf("%w: layout %q: want nchw, nhwc, nChw16c or nChw8c", ErrProblem, p.Layout)
	}
	return p, nil
}

// kindOf parses a descriptor and tells its kind; "" when named fields fit
// no kind.
func kindOf(desc string) (string, error) {
	if strings.ContainsAny(desc, "x:") && !strings.Contains(desc, "mb") {
		parts, err := dnn.Dims(desc)
		if err != nil {
			return "", fmt.Errorf("%w: %v", ErrProblem, err)
		}
		if len(parts) > 1 {
			return "matmul", nil
		}
		return "eltwise", nil
	}
	d, err := dnn.ParseDescriptor(desc)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrProblem, err)
	}
	kernel := d.Has("kh") || d.Has("kw")
	switch {
	case d.Has("oc") && kernel:
		return "convolution", nil
	case d.Has("oc"):
		return "inner_product", nil
	case kernel:
		return "pooling", nil
	}
	return "", nil
}

// defaultAlg checks the kind, gives pooling and eltwise their default
// algorithm, refuses one for the other kinds and prefixes a short one with
// the kind ("max" for pooling_max, "gelu_tanh" for eltwise_gelu_tanh).
func (p *Problem) defaultAlg() error {
	switch p.Kind {
	case "pooling":
		if p.Alg == "" {
			p.Alg = "pooling_max"
		}
	case "eltwise":
		if p.Alg == "" {
			p.Alg = "eltwise_gelu_erf"
		}
	case "convolution", "inner_product", "matmul":
		if p.Alg != "" {
			return fmt.Errorf("%w: %s takes no algorithm", ErrProblem, p.Kind)
		}
	default:
		return fmt.Errorf("%w: the harness runs convolution, inner_product, matmul, pooling and eltwise, not %q", ErrProblem, p.Kind)
	}
	if p.Alg != "" && !strings.HasPrefix(p.Alg, p.Kind) {
		p.Alg = p.Kind + "_" + p.Alg
	}
	return nil
}

// SrcLayout is the layout of a convolution's source: Layout, except that
// a blocked layout whose block does not divide the input channels leaves
// the source plain (nchw), as frameworks do for a network's first layer:
// oneDNN's JIT convolutions read a 3-channel image in nchw and write
// nChw16c, and a padded nChw16c source falls back to the reference
// implementation.
func (p Problem) SrcLayout() string {
	block := map[string]int64{"nChw16c": 16, "nChw8c": 8}[p.Layout]
	if p.Kind != "convolution" || block == 0 {
		return p.Layout
	}
	d, err := dnn.ParseDescriptor(p.Descriptor)
	if err != nil || int64(d.Get("ic", 0))%block == 0 {
		return p.Layout
	}
	return "nchw"
}

// record is the problem as the verbose trace would print it, for dnn's
// model: each tensor in the layout chosen (the library's choice where
// chosen returns one, as for weights in format any, so that their padding
// counts in Q), else the one asked for.
func (p Problem) record(impl string, chosen func(arg string) string) dnn.Record {
	r := dnn.Record{Kind: p.Kind, Implementation: impl, PropKind: "forward_inference", Problem: p.Descriptor, Operation: "exec", Engine: "cpu"}
	act := Layouts[p.Layout]
	t := func(arg, tag string) dnn.Tensor {
		if c := chosen(arg); c != "" {
			tag = c
		}
		return dnn.Tensor{Arg: arg, DataType: "f32", FormatKind: "blocked", Tag: tag}
	}
	switch p.Kind {
	case "convolution":
		r.Tensors = []dnn.Tensor{t("src", Layouts[p.SrcLayout()]), t("wei", "abcd"), t("bia", "a"), t("dst", act)}
		r.Auxiliary = "alg:convolution_direct"
	case "inner_product":
		r.Tensors = []dnn.Tensor{t("src", "ab"), t("wei", "ab"), t("bia", "a"), t("dst", "ab")}
	case "matmul":
		r.PropKind = "undef"
		tag := "ab"
		if n := strings.Count(strings.Split(p.Descriptor, ":")[0], "x") + 1; n == 3 {
			tag = "abc"
		}
		r.Tensors = []dnn.Tensor{t("src", tag), t("wei", tag), t("dst", tag)}
	case "pooling", "eltwise":
		r.Tensors = []dnn.Tensor{t("src", act), t("dst", act)}
		r.Auxiliary = "alg:" + p.Alg
	}
	return r
}
