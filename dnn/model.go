package dnn

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/rprof/rprof/roofline"

	"github.com/rprof/rprof/internal/unit"
)

// Per-element FLOP constants of the kinds whose work is not a product of
// shapes, counted the way Intel's FP_ARITH_INST_RETIRED events count (an
// FMA is two; min and max count too). Where docs/dnn.md says so they are
// read off the instruction mix of oneDNN 2.6.3's AVX-512 JIT kernels
// (ONEDNN_JIT_DUMP=1); other versions and ISAs may differ, so every use is
// flagged as approximate.
const (
	// GELU with erf: 13 FMA, 7 mul, 1 div, 1 add, 1 sub, 1 min, 1 max per
	// vector of 16 elements (36 without the min and max).
	GeluErfFlops = 38
	// GELU with erf in oneDNN 3.7.2's AVX-512 kernel, a table-driven
	// polynomial: 5 FMA, 2 mul, 1 add; taken for every 3.x.
	GeluErf3Flops = 13
	// GELU with tanh: 7 FMA, 5 mul, 1 add, 1 sub.
	GeluTanhFlops = 21
	// Softmax: the max pass (1 max), the exp-and-sum pass (6 FMA, 3 mul,
	// 2 add, 2 sub, 1 min, 1 max) and the scaling pass (2 mul).
	SoftmaxFlops = 24
	// Log-softmax: softmax's count and a log, an estimate.
	LogSoftmaxFlops = 25
	// Normalisations with given statistics fold scale and shift per
	// channel and do one FMA per element: an estimate.
	NormGlobalFlops = 2
	// Normalisations that compute their statistics add a mean (1) and a
	// variance (3) pass to that: an estimate.
	NormStatsFlops = 6
)

// Analytic is the modelled work and traffic of one execution.
type Analytic struct {
	// WorkFlops is W of one execution; nil when the kind has no formula.
	WorkFlops *float64
	// TrafficBytes is the compulsory Q of one execution: every tensor read
	// or written once, at its data type, blocked dimensions padded.
	TrafficBytes *float64
	// PaddedWorkFlops is W had the kernel also computed the padding of a
	// blocked layout (elementwise kinds); equal to WorkFlops otherwise.
	PaddedWorkFlops *float64
	// Precision is the roofline precision of the work ("" for integer or
	// mixed data types).
	Precision string
	Flags     []roofline.Flag
}

func (a *Analytic) flag(code, format string, args ...any) {
	subject := roofline.SubjectWork
	if code == roofline.FlagPadded {
		subject = roofline.SubjectTraffic
	}
	a.Flags = append(a.Flags, roofline.Flag{Code: code, Subject: subject, Message: fmt.Sprintf(format, args...)})
}

// Model computes the analytic work and compulsory traffic of a record.
func Model(r *Record) Analytic {
	var a Analytic
	a.Precision = precisionOf(r)
	m := modelers[r.Kind]
	if m == nil {
		a.flag(roofline.FlagNoFormula, "%s: rprof has no formula for this kind; time only", r.Kind)
		return a
	}
	shapes, w, err := m(r, &a)
	if err != nil {
		a.WorkFlops = nil
		a.flag(roofline.FlagNoFormula, "%s: %v; time only", r.Kind, err)
		return a
	}
	if w != nil {
		a.WorkFlops = w
		if a.PaddedWorkFlops == nil {
			a.PaddedWorkFlops = w
		}
	}
	q, err := traffic(r, shapes, &a)
	if err != nil {
		a.flag(roofline.FlagNoFormula, "%s: traffic: %v", r.Kind, err)
		return a
	}
	a.TrafficBytes = &q
	return a
}

// A modeler returns the logical dimensions of each tensor the record names
// (by argument, without "diff_"), the work, and flags what it
// approximates.
type modeler func(r *Record, a *Analytic) (map[string][]int64, *float64, error)

var modelers = map[string]modeler{
	"convolution":         convolution,
	"deconvolution":       convolution,
	"inner_product":       innerProduct,
	"matmul":              matmul,
	"pooling":             pooling,
	"eltwise":             eltwise,
	"batch_normalization": batchNorm,
	"layer_normalization": layerNorm,
	"softmax":             softmax,
	"logsoftmax":          softmax,
	"reorder":             reorder,
}

func ptr(v float64) *float64 { return &v }

func i64(v float64) int64 { return int64(v) }

// convolution: W = 2·MB·OC·OD·OH·OW·(IC/G)·KD·KH·KW (deconvolution: the
// same with the roles of input and output swapped), plus MB·OC·OD·OH·OW for
// the bias, plus the post-ops.
func convolution(r *Record, a *Analytic) (map[string][]int64, *float64, error) {
	d, err := ParseDescriptor(r.Problem)
	if err != nil {
		return nil, nil, err
	}
	if !d.Has("mb", "ic", "oc") {
		return nil, nil, fmt.Errorf("problem %q lacks mb, ic or oc", r.Problem)
	}
	axes := d.spatial("o")
	if len(axes) == 0 {
		return nil, nil, fmt.Errorf("problem %q has no spatial dimensions", r.Problem)
	}
	g, mb, ic, oc := d.Get("g", 1), d["mb"], d["ic"], d["oc"]
	src, dst := []int64{i64(mb), i64(ic)}, []int64{i64(mb), i64(oc)}
	var wei []int64
	if g > 1 || weightsHaveGroups(r, len(axes)) {
		wei = []int64{i64(g), i64(oc / g), i64(ic / g)}
	} else {
		wei = []int64{i64(oc), i64(ic)}
	}
	osp, isp, ksp := 1.0, 1.0, 1.0
	inImage := 1.0 // taps that fall inside the input, over all output points
	for _, ax := range axes {
		i, o, k := d.size("i", ax, 1), d.size("o", ax, 1), d.size("k", ax, 1)
		osp, isp, ksp = osp*o, isp*i, ksp*k
		src, dst, wei = append(src, i64(i)), append(dst, i64(o)), append(wei, i64(k))
		if r.Kind == "convolution" {
			inImage *= tapsInside(i64(i), i64(o), i64(k), i64(d.size("s", ax, 1)), i64(d.size("d", ax, 0)), i64(d.size("p", ax, 0)))
		}
	}
	var w float64
	if r.Kind == "deconvolution" {
		w = 2 * mb * ic * isp * (oc / g) * ksp
	} else {
		w = 2 * mb * oc * osp * (ic / g) * ksp
		if all := osp * ksp; inImage < all*0.95 {
			a.flag(roofline.FlagPaddingTaps, "%.0f%% of the formula's kernel taps fall on zero padding; kernels that skip them do %s FLOP", 100*(1-inImage/all), unit.Sig(2*mb*oc*(ic/g)*inImage))
		}
	}
	if hasTensor(r, "bia") {
		w += mb * oc * osp
	}
	w += postOpsWork(r, mb*oc*osp, a)
	return map[string][]int64{"src": src, "wei": wei, "bia": {i64(oc)}, "dst": dst}, &w, nil
}

// tapsInside counts, over the n outputs of one axis, the kernel taps whose
// input index lies inside [0, in): the taps a convolution that skips zero
// padding computes (benchdnn counts its operations this way).
func tapsInside(in, out, k, stride, dil, pad int64) float64 {
	var n int64
	for o := int64(0); o < out; o++ {
		for t := int64(0); t < k; t++ {
			if x := o*stride - pad + t*(dil+1); x >= 0 && x < in {
				n++
			}
		}
	}
	return float64(n)
}

// weightsHaveGroups reports whether the weights' tag has a dimension more
// than an ungrouped convolution's (g1 descriptors with grouped weights).
func weightsHaveGroups(r *Record, spatial int) bool {
	for _, t := range r.Tensors {
		if baseArg(t.Arg) == "wei" && t.FormatKind == "blocked" {
			if outer, _, err := parseTag(t.Tag); err == nil {
				return len(outer) == spatial+3
			}
		}
	}
	return false
}

// innerProduct: W = 2·MB·OC·IC·ID·IH·IW, plus MB·OC for the bias.
func innerProduct(r *Record, a *Analytic) (map[string][]int64, *float64, error) {
	d, err := ParseDescriptor(r.Problem)
	if err != nil {
		return nil, nil, err
	}
	if !d.Has("mb", "ic", "oc") {
		return nil, nil, fmt.Errorf("problem %q lacks mb, ic or oc", r.Problem)
	}
	mb, ic, oc := d["mb"], d["ic"], d["oc"]
	src, wei := []int64{i64(mb), i64(ic)}, []int64{i64(oc), i64(ic)}
	isp := 1.0
	for _, ax := range d.spatial("i") {
		i := d.size("i", ax, 1)
		isp *= i
		src, wei = append(src, i64(i)), append(wei, i64(i))
	}
	w := 2 * mb * oc * ic * isp
	if hasTensor(r, "bia") {
		w += mb * oc
	}
	w += postOpsWork(r, mb*oc, a)
	return map[string][]int64{"src": src, "wei": wei, "bia": {i64(oc)}, "dst": {i64(mb), i64(oc)}}, &w, nil
}

// matmul: W = 2·B·M·K·N, plus B·M·N for the bias. The problem is
// src:wei[:dst] dimensions; B is the product of dst's batch dimensions.
func matmul(r *Record, a *Analytic) (map[string][]int64, *float64, error) {
	parts, err := Dims(r.Problem)
	if err != nil {
		return nil, nil, err
	}
	if len(parts) < 2 || len(parts[0]) < 2 || len(parts[0]) != len(parts[1]) {
		return nil, nil, fmt.Errorf("problem %q is not src:wei[:dst] of one rank >= 2", r.Problem)
	}
	src, wei := parts[0], parts[1]
	n := len(src)
	m, k, nn := src[n-2], src[n-1], wei[n-1]
	if wei[n-2] != k {
		return nil, nil, fmt.Errorf("problem %q: K of src %d and wei %d differ", r.Problem, k, wei[n-2])
	}
	dst := make([]int64, n)
	if len(parts) > 2 {
		dst = parts[2]
	} else {
		for i := 0; i < n-2; i++ {
			dst[i] = max(src[i], wei[i])
		}
		dst[n-2], dst[n-1] = m, nn
	}
	b := 1.0
	for _, v := range dst[:n-2] {
		b *= float64(v)
	}
	w := 2 * b * float64(m) * float64(k) * float64(nn)
	bia := make([]int64, n)
	for i := range bia {
		bia[i] = 1
	}
	bia[n-1] = nn
	if hasTensor(r, "bia") {
		w += b * float64(m) * float64(nn)
		a.flag(roofline.FlagApproximate, "matmul bias: its broadcast mask is not in the trace; counted as a 1x..xN vector")
	}
	w += postOpsWork(r, b*float64(m)*float64(nn), a)
	return map[string][]int64{"src": src, "wei": wei, "dst": dst, "bia": bia}, &w, nil
}

// pooling: average one FLOP per kernel tap, max none (a maximum is not a
// floating-point operation to FP counters).
func pooling(r *Record, a *Analytic) (map[string][]int64, *float64, error) {
	d, err := ParseDescriptor(r.Problem)
	if err != nil {
		return nil, nil, err
	}
	if !d.Has("mb", "ic") {
		return nil, nil, fmt.Errorf("problem %q lacks mb or ic", r.Problem)
	}
	mb, c := d["mb"], d["ic"]
	src, dst := []int64{i64(mb), i64(c)}, []int64{i64(mb), i64(c)}
	osp, ksp := 1.0, 1.0
	for _, ax := range d.spatial("o") {
		i, o, k := d.size("i", ax, 1), d.size("o", ax, 1), d.size("k", ax, 1)
		osp, ksp = osp*o, ksp*k
		src, dst = append(src, i64(i)), append(dst, i64(o))
	}
	alg := auxValue(r.Auxiliary, "alg")
	var w float64
	switch {
	case alg == "pooling_max":
	case strings.HasPrefix(alg, "pooling_avg"):
		w = mb * c * osp * ksp
	default:
		return nil, nil, fmt.Errorf("no formula for algorithm %q", alg)
	}
	return map[string][]int64{"src": src, "dst": dst, "ws": dst}, &w, nil
}

// eltwise: a per-element constant for the algorithms that have one.
func eltwise(r *Record, a *Analytic) (map[string][]int64, *float64, error) {
	dims, err := singleDims(r.Problem)
	if err != nil {
		return nil, nil, err
	}
	per, ok := eltwiseFlops(auxValue(r.Auxiliary, "alg"), r.Version, a)
	if !ok {
		return nil, nil, fmt.Errorf("no formula for algorithm %q", auxValue(r.Auxiliary, "alg"))
	}
	n := product(dims)
	w := per * n
	if padded, ok := paddedElements(r, dims); ok && padded > n {
		a.PaddedWorkFlops = ptr(per * padded)
	}
	return map[string][]int64{"src": dims, "dst": dims, "data": dims}, &w, nil
}

// eltwiseFlops is the per-element work of an eltwise algorithm (also used
// for eltwise post-ops) in the kernels of the library version (as the
// trace's header prints it, "v3.7.2"; "" when unknown, taken for 2.x),
// flagged as approximate.
func eltwiseFlops(alg, version string, a *Analytic) (float64, bool) {
	switch strings.TrimPrefix(alg, "eltwise_") {
	case "gelu_erf", "gelu":
		if strings.HasPrefix(version, "v3.") {
			a.flag(roofline.FlagApproximate, "gelu_erf: %d FLOP per element, the instruction mix of oneDNN 3.7.2's AVX-512 kernel, for oneDNN 3.x (docs/dnn.md)", GeluErf3Flops)
			return GeluErf3Flops, true
		}
		a.flag(roofline.FlagApproximate, "gelu_erf: %d FLOP per element, the instruction mix of oneDNN 2.6.3's AVX-512 kernel (docs/dnn.md)", GeluErfFlops)
		return GeluErfFlops, true
	case "gelu_tanh":
		a.flag(roofline.FlagApproximate, "gelu_tanh: %d FLOP per element, the instruction mix of oneDNN 2.6.3's AVX-512 kernel (docs/dnn.md)", GeluTanhFlops)
		return GeluTanhFlops, true
	case "relu":
		// max(x, 0) is no FP arithmetic to the counters; a negative slope
		// (alpha) adds a multiply, not modelled.
		return 0, true
	}
	return 0, false
}

func batchNorm(r *Record, a *Analytic) (map[string][]int64, *float64, error) {
	d, err := ParseDescriptor(r.Problem)
	if err != nil {
		return nil, nil, err
	}
	if !d.Has("mb", "ic") {
		return nil, nil, fmt.Errorf("problem %q lacks mb or ic", r.Problem)
	}
	dims := []int64{i64(d["mb"]), i64(d["ic"])}
	for _, ax := range d.spatial("i") {
		dims = append(dims, i64(d.size("i", ax, 1)))
	}
	w := normFlops(r, product(dims), a)
	c := []int64{dims[1]}
	return map[string][]int64{"src": dims, "dst": dims, "data": dims, "mean": c, "variance": c, "scale": c, "shift": c}, &w, nil
}

func layerNorm(r *Record, a *Analytic) (map[string][]int64, *float64, error) {
	dims, err := singleDims(r.Problem)
	if err != nil {
		return nil, nil, err
	}
	w := normFlops(r, product(dims), a)
	last := []int64{dims[len(dims)-1]}
	return map[string][]int64{"src": dims, "dst": dims, "data": dims, "stats": dims[:len(dims)-1], "scale": last, "shift": last}, &w, nil
}

// normFlops is the per-element work of a normalisation: with given (global)
// statistics one FMA, else the statistics passes as well.
func normFlops(r *Record, n float64, a *Analytic) float64 {
	per := NormStatsFlops
	if normFlagGlobal(auxValue(r.Auxiliary, "flags")) {
		per = NormGlobalFlops
	}
	a.flag(roofline.FlagApproximate, "%s: %d FLOP per element, an estimate (docs/dnn.md)", r.Kind, per)
	return float64(per) * n
}

// normFlagGlobal reads "flags:GS" (2.x and later: G for global statistics)
// or "flags:3" (1.x: bit 1).
func normFlagGlobal(flags string) bool {
	if v, err := strconv.Atoi(flags); err == nil {
		return v&1 != 0
	}
	return strings.Contains(flags, "G")
}

func softmax(r *Record, a *Analytic) (map[string][]int64, *float64, error) {
	dims, err := singleDims(r.Problem)
	if err != nil {
		return nil, nil, err
	}
	per, how := SoftmaxFlops, "the instruction mix of oneDNN 2.6.3's AVX-512 kernel"
	if r.Kind == "logsoftmax" || auxValue(r.Auxiliary, "alg") == "softmax_log" {
		per, how = LogSoftmaxFlops, "an estimate"
	}
	a.flag(roofline.FlagApproximate, "%s: %d FLOP per element, %s (docs/dnn.md)", r.Kind, per, how)
	w := float64(per) * product(dims)
	return map[string][]int64{"src": dims, "dst": dims, "data": dims}, &w, nil
}

// reorder moves data: no work, src and dst traffic at their own layouts.
func reorder(r *Record, a *Analytic) (map[string][]int64, *float64, error) {
	dims, err := singleDims(r.Problem)
	if err != nil {
		return nil, nil, err
	}
	w := 0.0
	return map[string][]int64{"src": dims, "dst": dims}, &w, nil
}

func singleDims(problem string) ([]int64, error) {
	parts, err := Dims(problem)
	if err != nil {
		return nil, err
	}
	if len(parts) != 1 {
		return nil, fmt.Errorf("problem %q: want one tensor's dimensions", problem)
	}
	return parts[0], nil
}

func product(dims []int64) float64 {
	p := 1.0
	for _, d := range dims {
		p *= float64(d)
	}
	return p
}

// postOpsWork is the work of the post-ops in "attr-post-ops:sum+eltwise_gelu_erf"
// over the n elements of dst.
func postOpsWork(r *Record, n float64, a *Analytic) float64 {
	ops := postOps(r.Attributes)
	w := 0.0
	for _, op := range ops {
		name, _, _ := strings.Cut(op, ":")
		switch {
		case name == "sum":
			w += n // an add (an FMA with a scale: not told apart)
		case strings.HasPrefix(name, "eltwise_"):
			per, ok := eltwiseFlops(name, r.Version, a)
			if !ok {
				a.flag(roofline.FlagApproximate, "post-op %s: no formula, its work is not counted", name)
			}
			w += per * n
		case strings.HasPrefix(name, "binary_"):
			w += n
			a.flag(roofline.FlagApproximate, "post-op %s: one FLOP per element; its second source is not in Q", name)
		default:
			a.flag(roofline.FlagApproximate, "post-op %s: no formula, its work is not counted", name)
		}
	}
	return w
}

// postOps lists the post-ops of an attribute string, 2.x and 3.x
// ("attr-post-ops:sum+eltwise_gelu_erf") or 1.x ("post_ops:'sum;eltwise_relu;'").
func postOps(attrs string) []string {
	for _, f := range strings.Fields(attrs) {
		if v, ok := strings.CutPrefix(f, "attr-post-ops:"); ok {
			return strings.Split(v, "+")
		}
		if v, ok := strings.CutPrefix(f, "post_ops:"); ok {
			var out []string
			for _, op := range strings.Split(strings.Trim(v, "';"), ";") {
				if op != "" {
					out = append(out, op)
				}
			}
			return out
		}
	}
	return nil
}

func hasPostOp(attrs, name string) bool {
	for _, op := range postOps(attrs) {
		if n, _, _ := strings.Cut(op, ":"); n == name {
			return true
		}
	}
	return false
}

// auxValue is the value of key in "alg:eltwise_gelu_erf alpha:0 beta:0".
func auxValue(aux, key string) string {
	for _, f := range strings.Fields(aux) {
		if v, ok := strings.CutPrefix(f, key+":"); ok {
			return v
		}
	}
	return ""
}

func baseArg(arg string) string { return strings.TrimPrefix(arg, "diff_") }

func hasTensor(r *Record, arg string) bool {
	for _, t := range r.Tensors {
		if baseArg(t.Arg) == arg && t.Present() {
			return true
		}
	}
	return false
}

// traffic sums the bytes of the present tensors. A tensor written in place
// ("data" with no dst: 2.x eltwise and normalisations) is read and written;
// a sum post-op reads dst before writing it.
func traffic(r *Record, shapes map[string][]int64, a *Analytic) (float64, error) {
	q := 0.0
	hasDst := hasTensor(r, "dst")
	var padded []string
	for _, t := range r.Tensors {
		if !t.Present() {
			continue
		}
		arg := baseArg(t.Arg)
		if strings.HasPrefix(arg, "src") && shapes[arg] == nil {
			arg = "src" // binary's src_0, src_1; sum's srcs
		}
		dims, ok := shapes[arg]
		if !ok {
			return 0, fmt.Errorf("tensor %q: no shape for it in this kind's problem", t.Arg)
		}
		b, pad, err := tensorBytes(t, dims)
		if err != nil {
			return 0, err
		}
		if pad > 1 {
			padded = append(padded, fmt.Sprintf("%s %s pads %s to %s (x%.2f)", t.Arg, t.Tag, dimString(dims), dimString(paddedDims(t, dims)), pad))
		}
		times := 1.0
		if arg == "data" && !hasDst || arg == "dst" && hasPostOp(r.Attributes, "sum") {
			times = 2
		}
		q += times * b
	}
	if len(padded) > 0 {
		msg := strings.Join(padded, "; ")
		if a.PaddedWorkFlops != nil && a.WorkFlops != nil && *a.PaddedWorkFlops > *a.WorkFlops {
			msg += fmt.Sprintf("; a kernel that computes the padding does %s FLOP, not %s", unit.Sig(*a.PaddedWorkFlops), unit.Sig(*a.WorkFlops))
		}
		a.flag(roofline.FlagPadded, "%s", msg)
	}
	return q, nil
}

func dimString(dims []int64) string {
	s := make([]string, len(dims))
	for i, d := range dims {
		s[i] = strconv.FormatInt(d, 10)
	}
	return strings.Join(s, "x")
}

// precisionOf names the roofline precision of a record's work from the data
// type of its first source ("" for integer data).
func precisionOf(r *Record) string {
	for _, t := range r.Tensors {
		if !t.Present() {
			continue
		}
		switch t.DataType {
		case "f64":
			return roofline.Double
		case "f32":
			return roofline.Single
		case "f16":
			return roofline.Half
		case "bf16":
			return roofline.BF16
		}
		return ""
	}
	return ""
}

// paddedElements is the element count of the record's first present tensor
// at its padded dimensions.
func paddedElements(r *Record, dims []int64) (float64, bool) {
	for _, t := range r.Tensors {
		if t.Present() {
			return product(paddedDims(t, dims)), true
		}
	}
	return 0, false
}

// tensorBytes is a tensor's size at its data type and padded dimensions,
// and the factor padding multiplies it by.
func tensorBytes(t Tensor, dims []int64) (bytes, padFactor float64, err error) {
	size := DataTypeBytes(t.DataType)
	if size == 0 {
		return 0, 0, fmt.Errorf("tensor %q: unknown data type %q", t.Arg, t.DataType)
	}
	logical := product(dims)
	p := product(paddedDims(t, dims))
	factor := 1.0
	if logical > 0 {
		factor = p / logical
	}
	return size * p, factor, nil
}

// paddedDims rounds each blocked dimension of a blocked tag up to the
// product of its blocks: aBcd16b pads dimension b to a multiple of 16.
// Tags that do not fit dims (opaque and packed formats) leave dims as they
// are.
func paddedDims(t Tensor, dims []int64) []int64 {
	out := append([]int64(nil), dims...)
	if t.FormatKind != "blocked" {
		return out
	}
	outer, blocks, err := parseTag(t.Tag)
	if err != nil || len(outer) != len(dims) {
		return out
	}
	for dim, b := range blocks {
		if dim < len(out) && b > 1 {
			out[dim] = (out[dim] + b - 1) / b * b
		}
	}
	return out
}

// parseTag splits a oneDNN format tag into its outer dimension letters and
// the product of the inner block sizes per dimension index: "ABcd16b16a"
// gives "ABcd" and {0: 16, 1: 16}; "aBcd4b16a4b" blocks b by 16.
func parseTag(tag string) (outer string, blocks map[int]int64, err error) {
	i := 0
	for i < len(tag) && isLetter(tag[i]) {
		i++
	}
	outer, blocks = tag[:i], map[int]int64{}
	if outer == "" {
		return "", nil, fmt.Errorf("tag %q: no dimensions", tag)
	}
	for i < len(tag) {
		j := i
		for j < len(tag) && tag[j] >= '0' && tag[j] <= '9' {
			j++
		}
		if j == i || j >= len(tag) || !isLetter(tag[j]) {
			return "", nil, fmt.Errorf("tag %q: bad inner block at %q", tag, tag[i:])
		}
		n, _ := strconv.ParseInt(tag[i:j], 10, 64)
		dim := int(lower(tag[j]) - 'a')
		if blocks[dim] == 0 {
			blocks[dim] = 1
		}
		blocks[dim] *= n
		i = j + 1
	}
	for _, c := range []byte(outer) {
		if c >= 'A' && c <= 'Z' && blocks[int(c-'A')] == 0 {
			return "", nil, fmt.Errorf("tag %q: %c is blocked but has no block", tag, c)
		}
	}
	return outer, blocks, nil
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// Intensity is W/Q, or NaN when either is unknown or Q is zero.
func (a Analytic) Intensity() float64 { return intensity(a.WorkFlops, a.TrafficBytes) }

// intensity is w/q, NaN when either is unknown or q is 0.
func intensity(w, q *float64) float64 {
	if w == nil || q == nil || *q == 0 {
		return math.NaN()
	}
	return *w / *q
}
