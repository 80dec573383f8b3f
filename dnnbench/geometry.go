package dnnbench

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/rprof/rprof/dnn"
)

// Execution arguments (DNNL_ARG_*; the same in the 2.x and 3.x C APIs,
// checked against the headers by the tests).
const (
	argSrc       = 1
	argDst       = 17
	argWeights   = 33
	argBias      = 41
	argWorkspace = 64
)

// tensorSpec is one tensor of a problem as the C APIs take it: its
// execution argument, its logical dimensions and its format tag by name
// (a key of Layouts, or "any", "a", "ab", "abc").
type tensorSpec struct {
	arg   int
	shape []int64
	tag   string
}

// geometry is a problem in the terms both C API generations take: the
// tensors of its primitive and, for convolution and pooling, the window.
// Each binding maps the tag and algorithm names to its own enumerators.
type geometry struct {
	src, wei, bia, dst *tensorSpec
	// Windows of 2D-spatial problems, oneDNN's dnnl_dims_t: strides,
	// dilations (0 is dense), left and right padding, kernel.
	strides, dil, padL, padR, kernel dims
	// args are the execution arguments the primitive takes; an argument
	// whose memory descriptor is empty is skipped (a max pool's
	// inference workspace).
	args []int
}

type dims [12]int64 // dnnl_dims_t

// geometryOf works out the tensors and window of p.
func geometryOf(p Problem) (geometry, error) {
	switch p.Kind {
	case "convolution":
		return convGeometry(p)
	case "inner_product":
		return innerProductGeometry(p)
	case "matmul":
		return matmulGeometry(p)
	case "pooling":
		return poolingGeometry(p)
	case "eltwise":
		return eltwiseGeometry(p)
	}
	return geometry{}, fmt.Errorf("%w: kind %q", ErrProblem, p.Kind)
}

func convGeometry(p Problem) (geometry, error) {
	s, err := parse2d(p.Descriptor, true)
	if err != nil {
		return geometry{}, err
	}
	wshape := []int64{s.oc, s.ic, s.k[0], s.k[1]}
	if s.g > 1 {
		wshape = []int64{s.g, s.oc / s.g, s.ic / s.g, s.k[0], s.k[1]}
	}
	g := geometry{
		src:  &tensorSpec{argSrc, []int64{s.mb, s.ic, s.i[0], s.i[1]}, p.SrcLayout()},
		wei:  &tensorSpec{argWeights, wshape, "any"},
		bia:  &tensorSpec{argBias, []int64{s.oc}, "a"},
		dst:  &tensorSpec{argDst, []int64{s.mb, s.oc, s.o[0], s.o[1]}, p.Layout},
		args: []int{argSrc, argWeights, argBias, argDst},
	}
	s.window(&g)
	return g, nil
}

func innerProductGeometry(p Problem) (geometry, error) {
	d, err := dnn.ParseDescriptor(p.Descriptor)
	if err != nil {
		return geometry{}, err
	}
	if !d.Has("mb", "ic", "oc") || d.Has("ih") || d.Has("iw") || d.Has("id") {
		return geometry{}, fmt.Errorf("%w: %q: the harness runs 2D inner products (mb, ic, oc)", ErrProblem, p.Descriptor)
	}
	mb, ic, oc := int64(d["mb"]), int64(d["ic"]), int64(d["oc"])
	return geometry{
		src:  &tensorSpec{argSrc, []int64{mb, ic}, "ab"},
		wei:  &tensorSpec{argWeights, []int64{oc, ic}, "any"},
		bia:  &tensorSpec{argBias, []int64{oc}, "a"},
		dst:  &tensorSpec{argDst, []int64{mb, oc}, "ab"},
		args: []int{argSrc, argWeights, argBias, argDst},
	}, nil
}

func matmulGeometry(p Problem) (geometry, error) {
	parts, err := dnn.Dims(p.Descriptor)
	if err != nil {
		return geometry{}, err
	}
	n := len(parts[0])
	if len(parts) < 2 || (n != 2 && n != 3) || len(parts[1]) != n || parts[0][n-1] != parts[1][n-2] {
		return geometry{}, fmt.Errorf("%w: %q: want MxK:KxN or BxMxK:BxKxN", ErrProblem, p.Descriptor)
	}
	tag := map[int]string{2: "ab", 3: "abc"}[n]
	dshape := append(append([]int64(nil), parts[0][:n-1]...), parts[1][n-1])
	return geometry{
		src:  &tensorSpec{argSrc, parts[0], tag},
		wei:  &tensorSpec{argWeights, parts[1], tag},
		dst:  &tensorSpec{argDst, dshape, tag},
		args: []int{argSrc, argWeights, argDst},
	}, nil
}

func poolingGeometry(p Problem) (geometry, error) {
	s, err := parse2d(p.Descriptor, false)
	if err != nil {
		return geometry{}, err
	}
	g := geometry{
		src:  &tensorSpec{argSrc, []int64{s.mb, s.ic, s.i[0], s.i[1]}, p.Layout},
		dst:  &tensorSpec{argDst, []int64{s.mb, s.ic, s.o[0], s.o[1]}, p.Layout},
		args: []int{argSrc, argDst, argWorkspace},
	}
	s.window(&g)
	return g, nil
}

func eltwiseGeometry(p Problem) (geometry, error) {
	parts, err := dnn.Dims(p.Descriptor)
	if err != nil {
		return geometry{}, err
	}
	if len(parts) != 1 || len(parts[0]) != 4 {
		return geometry{}, fmt.Errorf("%w: %q: the harness runs 4D eltwise problems (NxCxHxW)", ErrProblem, p.Descriptor)
	}
	return geometry{
		src:  &tensorSpec{argSrc, parts[0], p.Layout},
		dst:  &tensorSpec{argDst, parts[0], p.Layout},
		args: []int{argSrc, argDst},
	}, nil
}

// shape2d is a 2D-spatial problem: batch, channels, spatial sizes and
// window of each axis.
type shape2d struct {
	mb, ic, oc, g    int64
	i, o, k, s, d, p [2]int64
}

func parse2d(desc string, needOC bool) (shape2d, error) {
	d, err := dnn.ParseDescriptor(desc)
	if err != nil {
		return shape2d{}, err
	}
	if !d.Has("mb", "ic", "ih", "oh", "kh") || needOC && !d.Has("oc") {
		return shape2d{}, fmt.Errorf("%w: %q: the harness runs 2D problems with mb, ic, ih, oh, kh (and oc)", ErrProblem, desc)
	}
	if d.Has("id") || d.Has("od") {
		return shape2d{}, fmt.Errorf("%w: %q: 3D problems are not supported by the harness", ErrProblem, desc)
	}
	s := shape2d{mb: int64(d["mb"]), ic: int64(d["ic"]), oc: int64(d.Get("oc", 0)), g: int64(d.Get("g", 1))}
	for j, ax := range []string{"h", "w"} {
		get := func(pre string, def float64) int64 {
			if v, ok := d[pre+ax]; ok {
				return int64(v)
			}
			return int64(d.Get(pre+"h", def)) // square shorthand
		}
		s.i[j], s.o[j], s.k[j] = get("i", 1), get("o", 1), get("k", 1)
		s.s[j], s.d[j], s.p[j] = get("s", 1), get("d", 0), get("p", 0)
	}
	return s, nil
}

// window fills g's strides, dilations, paddings and kernel; the right
// padding is the one that makes the output size.
func (s shape2d) window(g *geometry) {
	for j := range 2 {
		g.strides[j], g.dil[j], g.padL[j], g.kernel[j] = s.s[j], s.d[j], s.p[j], s.k[j]
		g.padR[j] = (s.o[j]-1)*s.s[j] + (s.k[j]-1)*(s.d[j]+1) + 1 - s.i[j] - s.p[j]
	}
}

// blocking is a blocked memory descriptor's layout as both C APIs give it:
// the padded dimensions, the strides of the outer blocks, and the inner
// blocks (sizes and the dimension each blocks, innermost last).
type blocking struct {
	padded, strides      []int64
	innerBlks, innerIdxs []int64
}

// tag renders the layout as oneDNN's verbose trace prints it: outer
// dimensions by decreasing stride (ties by decreasing outer size), a
// blocked one in capitals, then the inner blocks ("ABcd16b16a"). A plain
// layout has no inner blocks ("acdb").
func (b blocking) tag() string {
	n := len(b.padded)
	block := make([]int64, n)
	for i := range block {
		block[i] = 1
	}
	for i, d := range b.innerIdxs {
		if d >= 0 && int(d) < n {
			block[d] *= b.innerBlks[i]
		}
	}
	type dim struct {
		letter         byte
		stride, blocks int64
	}
	order := make([]dim, n)
	for d := range n {
		c := byte('a' + d)
		if block[d] != 1 {
			c = byte('A' + d)
		}
		order[d] = dim{c, b.strides[d], b.padded[d] / block[d]}
	}
	// oneDNN sorts with a stable bubble sort; SortStableFunc gives the same
	// order.
	slices.SortStableFunc(order, func(x, y dim) int {
		if c := cmp.Compare(y.stride, x.stride); c != 0 {
			return c
		}
		return cmp.Compare(y.blocks, x.blocks)
	})
	var s strings.Builder
	for _, d := range order {
		s.WriteByte(d.letter)
	}
	for i, d := range b.innerIdxs {
		s.WriteString(strconv.FormatInt(b.innerBlks[i], 10))
		s.WriteByte(byte('a' + d))
	}
	return s.String()
}
