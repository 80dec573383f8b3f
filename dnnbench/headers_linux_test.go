package dnnbench

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"github.com/rprof/rprof/internal/testutil"
)

// constant is a value a binding hard-codes and the C expression that gives
// it in the headers.
type constant struct {
	expr string
	want int64
}

// commonConstants are the values of a generation's headers that core and
// the binding use.
func commonConstants(major int64, tags, algs map[string]int32) []constant {
	cs := []constant{
		{"DNNL_VERSION_MAJOR", major},
		{"dnnl_cpu", dnnlCPU}, {"dnnl_f32", dnnlF32}, {"dnnl_forward_inference", dnnlForwardInference},
		{"dnnl_convolution_direct", dnnlConvolutionDirect}, {"dnnl_stream_default_flags", dnnlStreamDefault},
		{"dnnl_query_impl_info_str", dnnlQueryImplInfoStr}, {"dnnl_query_exec_arg_md", dnnlQueryExecArgMD},
		{"dnnl_blocked", dnnlBlocked}, {"DNNL_RUNTIME_OMP", runtimeOMP},
		{"DNNL_ARG_SRC", argSrc}, {"DNNL_ARG_DST", argDst}, {"DNNL_ARG_WEIGHTS", argWeights},
		{"DNNL_ARG_BIAS", argBias}, {"DNNL_ARG_WORKSPACE", argWorkspace},
		{"sizeof(dnnl_exec_arg_t)", int64(unsafe.Sizeof(execArg{}))},
		{"offsetof(dnnl_version_t, hash)", 16}, {"offsetof(dnnl_version_t, cpu_runtime)", 24},
	}
	for name, v := range tags {
		expr := "dnnl_" + name
		if name == "any" {
			expr = "dnnl_format_tag_any"
		}
		cs = append(cs, constant{expr, int64(v)})
	}
	for name, v := range algs {
		cs = append(cs, constant{"dnnl_" + name, int64(v)})
	}
	return cs
}

// checkConstants compiles a program printing every expression against the
// headers under include and compares with the binding's values.
func checkConstants(t *testing.T, include string, cs []constant) {
	t.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed")
	}
	var prog strings.Builder
	prog.WriteString("#include <stdio.h>\n#include <stddef.h>\n#include <oneapi/dnnl/dnnl.h>\nint main(void) {\n")
	for _, c := range cs {
		fmt.Fprintf(&prog, "\tprintf(\"%%ld\\n\", (long)(%s));\n", c.expr)
	}
	prog.WriteString("\treturn 0;\n}\n")
	dir := t.TempDir()
	src, bin := filepath.Join(dir, "c.c"), filepath.Join(dir, "c")
	if err := os.WriteFile(src, []byte(prog.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("gcc", "-I", include, "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	out, err := exec.Command(bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Fields(string(out))
	if len(got) != len(cs) {
		t.Fatalf("%d values printed for %d expressions", len(got), len(cs))
	}
	for i, c := range cs {
		if got[i] != fmt.Sprint(c.want) {
			t.Errorf("%s: headers say %s, the binding has %d", c.expr, got[i], c.want)
		}
	}
}

// The descriptor sizes, offsets and enumerators the 2.x binding hard-codes
// are those of the installed headers.
func TestAPI2ConstantsMatchTheInstalledHeaders(t *testing.T) {
	if _, err := os.Stat("/usr/include/oneapi/dnnl/dnnl_types.h"); err != nil {
		t.Skip("libdnnl-dev not installed (scripts/test.sh installs it)")
	}
	cs := append(commonConstants(2, tags2, algs2),
		constant{"sizeof(dnnl_memory_desc_t)", memoryDescSize}, constant{"sizeof(dnnl_convolution_desc_t)", convDescSize},
		constant{"sizeof(dnnl_inner_product_desc_t)", ipDescSize}, constant{"sizeof(dnnl_pooling_v2_desc_t)", poolDescSize},
		constant{"sizeof(dnnl_eltwise_desc_t)", eltwiseSize}, constant{"sizeof(dnnl_matmul_desc_t)", matmulDescSize},
		constant{"offsetof(dnnl_memory_desc_t, ndims)", mdNdims}, constant{"offsetof(dnnl_memory_desc_t, padded_dims)", mdPadded},
		constant{"offsetof(dnnl_memory_desc_t, format_kind)", mdFormatKind},
		constant{"offsetof(dnnl_memory_desc_t, format_desc.blocking.strides)", mdStrides},
		constant{"offsetof(dnnl_memory_desc_t, format_desc.blocking.inner_nblks)", mdInnerNblks},
		constant{"offsetof(dnnl_memory_desc_t, format_desc.blocking.inner_blks)", mdInnerBlks},
		constant{"offsetof(dnnl_memory_desc_t, format_desc.blocking.inner_idxs)", mdInnerIdxs})
	checkConstants(t, "/usr/include", cs)
}

// The enumerators and queries the 3.x binding hard-codes are those of
// oneDNN 3.7's headers (Debian 13's libdnnl-dev, unpacked by
// scripts/test.sh).
func TestAPI3ConstantsMatchThe37Headers(t *testing.T) {
	tree := testutil.FindOneDNN3(t)
	cs := append(commonConstants(3, tags3, algs3),
		constant{"dnnl_query_strides", queryStrides}, constant{"dnnl_query_ndims_s32", queryNdims},
		constant{"dnnl_query_padded_dims", queryPadded}, constant{"dnnl_query_format_kind", queryFormatKind},
		constant{"dnnl_query_inner_nblks_s32", queryInnerNblks}, constant{"dnnl_query_inner_blks", queryInnerBlks},
		constant{"dnnl_query_inner_idxs", queryInnerIdxs})
	checkConstants(t, tree.Include(), cs)
}
