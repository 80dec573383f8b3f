// Command gen writes package ptx's kernels: kernels.ptx (one PTX module)
// and zkernels.go (the table describing each kernel).
//
// Design: FMA kernels keep ILP accumulators per thread and run a loop
// marked nounroll whose body is Unroll copies of one FMA per accumulator,
// so ptxas's loop body holds exactly ILP x Unroll FMA instructions. The
// multiplier and addend keep each chain finite (a converges to
// c / (1 - m)), and the result is stored only when its bits are all ones,
// which never happens but which the compiler cannot know, so nothing is
// eliminated. Memory kernels move 16-byte vectors in a grid-stride loop
// repeated passes times: one kernel serves HBM, L2 and L1 by the size of
// its working set.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"go/format"
	"log"
	"math"
	"os"
	"path/filepath"
	"strings"
)

// prec is one precision's PTX spelling.
type prec struct {
	name  string // "fp64"
	reg   string // register type: "f64", "f32", "b32"
	fma   string // the FMA instruction
	add   string // adding two accumulators
	bits  string // the bit type of the same width
	sass  string // the SASS instruction the FMA compiles to
	lanes int    // FMAs per instruction
	m, c  string // multiplier and addend: immediates, or registers set by setup
	setup []string
	// init turns the thread index (%r1, u32) into accumulator %a<j>.
	init func(j int) []string
}

var precs = []prec{
	{name: "fp64", reg: "f64", fma: "fma.rn.f64", add: "add.f64", bits: "b64", sass: "DFMA", lanes: 1,
		m: "0d3FEFFF2E48E8A71E", c: "0d3F50624DD2F1A9FC", // 0.9999, 0.001
		init: func(j int) []string {
			return []string{fmt.Sprintf("cvt.rn.f64.u32 %%a%d, %%r1;", j), fmt.Sprintf("add.f64 %%a%d, %%a%d, 0d%016X;", j, j, f64bits(j))}
		}},
	{name: "fp32", reg: "f32", fma: "fma.rn.f32", add: "add.f32", bits: "b32", sass: "FFMA", lanes: 1,
		m: "0f3F7FF972", c: "0f3A83126F", // 0.9999, 0.001
		init: func(j int) []string {
			return []string{fmt.Sprintf("cvt.rn.f32.u32 %%a%d, %%r1;", j), fmt.Sprintf("add.f32 %%a%d, %%a%d, 0f%08X;", j, j, f32bits(j))}
		}},
	{name: "fp16", reg: "b32", fma: "fma.rn.f16x2", add: "add.rn.f16x2", bits: "b32", sass: "HFMA2", lanes: 2,
		// 0.9995 and 0.000977 in both halves.
		m: "%m", c: "%c", setup: []string{"mov.b32 %m, 0x3BFF3BFF;", "mov.b32 %c, 0x14001400;"},
		init: func(j int) []string {
			// The index modulo 1024 (f16 holds it exactly), plus j.
			return []string{
				"and.b32 %r2, %r1, 1023;",
				fmt.Sprintf("add.u32 %%r2, %%r2, %d;", j),
				"cvt.rn.f32.u32 %ft, %r2;",
				"cvt.rn.f16.f32 %h, %ft;",
				fmt.Sprintf("mov.b32 %%a%d, {%%h, %%h};", j),
			}
		}},
}

// The tuning space of the FMA kernels.
var (
	ilps    = []int{1, 2, 4, 8}
	unrolls = []int{4, 8, 16}
	// ladder is the FMAs per element of the ERT-style ladder: 2 FLOPs
	// each over 16 bytes read and written per 8-byte element, so the
	// intensity runs from 1/8 to 32 FLOP/byte.
	ladder = []int{1, 2, 4, 8, 16, 32, 64, 128, 256}
)

func f64bits(j int) uint64 { return math.Float64bits(float64(j)) }

func f32bits(j int) uint32 { return math.Float32bits(float32(j)) }

// kernel is one generated entry: its table row (Go) and its PTX.
type kernel struct {
	row string
	ptx string
}

// w accumulates PTX lines, indented as a body.
type w struct{ b strings.Builder }

func (w *w) l(format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	if !strings.HasSuffix(s, ":") && !strings.HasPrefix(s, ".visible") && s != "{" && s != "}" {
		s = "\t" + s
	}
	w.b.WriteString(s + "\n")
}

// threadIndex sets %r1 to the global thread index.
func (w *w) threadIndex() {
	w.l("mov.u32 %%r1, %%ctaid.x;")
	w.l("mov.u32 %%r2, %%ntid.x;")
	w.l("mov.u32 %%r3, %%tid.x;")
	w.l("mad.lo.u32 %%r1, %%r1, %%r2, %%r3;")
}

func fmaKernel(p prec, ilp, unroll int) kernel {
	name := fmt.Sprintf("fma_%s_ilp%d_u%d", p.name, ilp, unroll)
	var w w
	w.l(".visible .entry %s(.param .u64 out, .param .u64 iters)", name)
	w.l("{")
	w.l(".reg .pred %%p<2>;")
	w.l(".reg .b32 %%r<4>;")
	w.l(".reg .b64 %%rd<3>;")
	w.l(".reg .b64 %%t<4>;")
	w.l(".reg .%s %%a<%d>;", p.reg, ilp)
	w.l(".reg .%s %%s;", p.bits)
	if p.name == "fp16" {
		w.l(".reg .b32 %%m, %%c;")
		w.l(".reg .f32 %%ft;")
		w.l(".reg .b16 %%h;")
	}
	w.l("ld.param.u64 %%rd0, [out];")
	w.l("ld.param.u64 %%rd1, [iters];")
	w.l("cvt.u32.u64 %%r0, %%rd1;")
	w.threadIndex()
	for _, s := range p.setup {
		w.l("%s", s)
	}
	for j := range ilp {
		for _, s := range p.init(j) {
			w.l("%s", s)
		}
	}
	// The clocks around the loop: the global timer (ns) and the SM's
	// cycle counter, stored by thread 0 (clockRecord).
	w.l("mov.u64 %%t0, %%globaltimer;")
	w.l("mov.u64 %%t1, %%clock64;")
	w.l("setp.eq.u32 %%p0, %%r0, 0;")
	w.l("@%%p0 bra DONE;")
	w.l("LOOP:")
	w.l(".pragma \"nounroll\";")
	for range unroll {
		for j := range ilp {
			w.l("%s %%a%d, %%a%d, %s, %s;", p.fma, j, j, p.m, p.c)
		}
	}
	w.l("sub.u32 %%r0, %%r0, 1;")
	w.l("setp.ne.u32 %%p1, %%r0, 0;")
	w.l("@%%p1 bra LOOP;")
	w.l("DONE:")
	clockRecord(&w)
	for j := 1; j < ilp; j++ {
		w.l("%s %%a0, %%a0, %%a%d;", p.add, j)
	}
	w.l("mov.%s %%s, %%a0;", p.bits)
	storeIfAllOnes(&w, p.bits, "%rd0", "%r1")
	w.l("}")
	row := fmt.Sprintf("{Name: %q, Kind: FMA, Precision: %q, ILP: %d, Unroll: %d, Flops: %d, SASS: %q, SASSPerIter: %d},",
		name, p.name, ilp, unroll, 2*p.lanes*ilp*unroll, p.sass, ilp*unroll)
	return kernel{row: row, ptx: w.b.String()}
}

// clockRecord has thread 0 of the grid store the clocks read before the
// loop (%t0, %t1) and after it at out: four u64, the global timer and the
// cycle counter before, then after, so that the host can tell the SM
// clock the kernel ran at.
func clockRecord(w *w) {
	w.l("mov.u64 %%t2, %%globaltimer;")
	w.l("mov.u64 %%t3, %%clock64;")
	w.l("setp.ne.u32 %%p1, %%r1, 0;")
	w.l("@%%p1 bra SKIPCLOCK;")
	w.l("st.global.v2.u64 [%%rd0], {%%t0, %%t1};")
	w.l("st.global.v2.u64 [%%rd0+16], {%%t2, %%t3};")
	w.l("SKIPCLOCK:")
}

// storeIfAllOnes stores %s (of bits type) at base + index*width when its
// bits are all ones, which the kernels never produce, and returns.
func storeIfAllOnes(w *w, bits, base, index string) {
	width := 4
	if bits == "b64" {
		width = 8
	}
	w.l("setp.ne.%s %%p0, %%s, -1;", bits)
	w.l("@%%p0 bra END;")
	w.l("mul.wide.u32 %%rd2, %s, %d;", index, width)
	w.l("add.u64 %%rd2, %s, %%rd2;", base)
	w.l("st.global.%s [%%rd2], %%s;", bits)
	w.l("END:")
	w.l("ret;")
}

// gridStride opens the passes and grid-stride loops over n vectors:
// %rd10 the vector index, %rd11 the stride, %rd12 n, %r0 passes left.
func gridStride(w *w) {
	w.l("mov.u32 %%r1, %%ctaid.x;")
	w.l("mov.u32 %%r2, %%ntid.x;")
	w.l("mov.u32 %%r3, %%tid.x;")
	w.l("mul.wide.u32 %%rd13, %%r1, %%r2;")
	w.l("cvt.u64.u32 %%rd14, %%r3;")
	w.l("add.u64 %%rd13, %%rd13, %%rd14;") // first index
	w.l("mov.u32 %%r1, %%nctaid.x;")
	w.l("mul.wide.u32 %%rd11, %%r1, %%r2;")
	w.l("setp.eq.u32 %%p0, %%r0, 0;")
	w.l("@%%p0 bra DONE;")
	w.l("PASS:")
	w.l("mov.u64 %%rd10, %%rd13;")
	w.l("setp.ge.u64 %%p1, %%rd10, %%rd12;")
	w.l("@%%p1 bra NEXT;")
	w.l("ELEM:")
	w.l("shl.b64 %%rd15, %%rd10, 4;") // byte offset of the vector
}

// closeGridStride closes gridStride's loops.
func closeGridStride(w *w) {
	w.l("add.u64 %%rd10, %%rd10, %%rd11;")
	w.l("setp.lt.u64 %%p1, %%rd10, %%rd12;")
	w.l("@%%p1 bra ELEM;")
	w.l("NEXT:")
	w.l("sub.u32 %%r0, %%r0, 1;")
	w.l("setp.ne.u32 %%p0, %%r0, 0;")
	w.l("@%%p0 bra PASS;")
	w.l("DONE:")
}

// bandwidth ops: what one vector does, with its bytes moved.
var ops = []struct {
	name  string
	bytes int
	flops int
	body  []string
}{
	{"read", 16, 2, []string{
		"add.u64 %rd16, %rd1, %rd15;",
		"ld.global.v2.f64 {%x0, %x1}, [%rd16];",
		"add.f64 %s0, %s0, %x0;",
		"add.f64 %s1, %s1, %x1;",
	}},
	{"copy", 32, 0, []string{
		"add.u64 %rd16, %rd1, %rd15;",
		"ld.global.v2.f64 {%x0, %x1}, [%rd16];",
		"add.u64 %rd16, %rd2, %rd15;",
		"st.global.v2.f64 [%rd16], {%x0, %x1};",
	}},
	{"triad", 48, 4, []string{ // a = b + 1.5 c
		"add.u64 %rd16, %rd2, %rd15;",
		"ld.global.v2.f64 {%x0, %x1}, [%rd16];",
		"add.u64 %rd16, %rd3, %rd15;",
		"ld.global.v2.f64 {%y0, %y1}, [%rd16];",
		"fma.rn.f64 %x0, %y0, 0d3FF8000000000000, %x0;",
		"fma.rn.f64 %x1, %y1, 0d3FF8000000000000, %x1;",
		"add.u64 %rd16, %rd1, %rd15;",
		"st.global.v2.f64 [%rd16], {%x0, %x1};",
	}},
}

func bandwidthKernel(i int) kernel {
	op := ops[i]
	name := "bw_" + op.name
	var w w
	w.l(".visible .entry %s(.param .u64 a, .param .u64 b, .param .u64 c, .param .u64 n, .param .u64 passes)", name)
	w.l("{")
	w.l(".reg .pred %%p<2>;")
	w.l(".reg .b32 %%r<4>;")
	w.l(".reg .b64 %%rd<17>;")
	w.l(".reg .f64 %%x0, %%x1, %%y0, %%y1, %%s0, %%s1;")
	w.l(".reg .b64 %%s;")
	w.l("ld.param.u64 %%rd1, [a];")
	w.l("ld.param.u64 %%rd2, [b];")
	w.l("ld.param.u64 %%rd3, [c];")
	w.l("ld.param.u64 %%rd12, [n];")
	w.l("ld.param.u64 %%rd4, [passes];")
	w.l("cvt.u32.u64 %%r0, %%rd4;")
	w.l("mov.f64 %%s0, 0d0000000000000000;")
	w.l("mov.f64 %%s1, 0d0000000000000000;")
	gridStride(&w)
	for _, s := range op.body {
		w.l("%s", s)
	}
	closeGridStride(&w)
	w.l("add.f64 %%s0, %%s0, %%s1;")
	w.l("mov.b64 %%s, %%s0;")
	w.l("cvt.u32.u64 %%r1, %%rd13;")
	storeIfAllOnes(&w, "b64", "%rd1", "%r1")
	w.l("}")
	row := fmt.Sprintf("{Name: %q, Kind: Bandwidth, Precision: \"fp64\", Flops: %d, Bytes: %d, Op: %q},", name, op.flops, op.bytes, op.name)
	return kernel{row: row, ptx: w.b.String()}
}

func ladderKernel(fmas int) kernel {
	name := fmt.Sprintf("ladder_fp64_f%d", fmas)
	var w w
	w.l(".visible .entry %s(.param .u64 a, .param .u64 n, .param .u64 passes)", name)
	w.l("{")
	w.l(".reg .pred %%p<2>;")
	w.l(".reg .b32 %%r<4>;")
	w.l(".reg .b64 %%rd<17>;")
	w.l(".reg .f64 %%x0, %%x1;")
	w.l("ld.param.u64 %%rd1, [a];")
	w.l("ld.param.u64 %%rd12, [n];")
	w.l("ld.param.u64 %%rd4, [passes];")
	w.l("cvt.u32.u64 %%r0, %%rd4;")
	gridStride(&w)
	w.l("add.u64 %%rd16, %%rd1, %%rd15;")
	w.l("ld.global.v2.f64 {%%x0, %%x1}, [%%rd16];")
	for range fmas {
		w.l("fma.rn.f64 %%x0, %%x0, %s, %s;", precs[0].m, precs[0].c)
		w.l("fma.rn.f64 %%x1, %%x1, %s, %s;", precs[0].m, precs[0].c)
	}
	w.l("st.global.v2.f64 [%%rd16], {%%x0, %%x1};")
	closeGridStride(&w)
	w.l("ret;")
	w.l("}")
	row := fmt.Sprintf("{Name: %q, Kind: Ladder, Precision: \"fp64\", Flops: %d, Bytes: 32},", name, 4*fmas)
	return kernel{row: row, ptx: w.b.String()}
}

func kernels() []kernel {
	var ks []kernel
	for _, p := range precs {
		for _, ilp := range ilps {
			for _, u := range unrolls {
				ks = append(ks, fmaKernel(p, ilp, u))
			}
		}
	}
	for i := range ops {
		ks = append(ks, bandwidthKernel(i))
	}
	for _, f := range ladder {
		ks = append(ks, ladderKernel(f))
	}
	return ks
}

func main() {
	dir := flag.String("dir", ".", "directory of package ptx")
	flag.Parse()
	ks := kernels()
	var p, g bytes.Buffer
	p.WriteString("// Code generated by internal/gen; DO NOT EDIT.\n\n.version 7.0\n.target sm_80\n.address_size 64\n")
	g.WriteString("// Code generated by internal/gen; DO NOT EDIT.\n\npackage ptx\n\n// Kernels are the entries of Module.\nvar Kernels = []Kernel{\n")
	for _, k := range ks {
		p.WriteString("\n" + k.ptx)
		g.WriteString(k.row + "\n")
	}
	g.WriteString("}\n")
	src, err := format.Source(g.Bytes())
	if err != nil {
		log.Fatal(err)
	}
	for name, b := range map[string][]byte{"kernels.ptx": p.Bytes(), "zkernels.go": src} {
		if err := os.WriteFile(filepath.Join(*dir, name), b, 0o644); err != nil {
			log.Fatal(err)
		}
	}
}
