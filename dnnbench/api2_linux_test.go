package dnnbench

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The descriptor sizes and enumerators the binding hard-codes are those of
// the installed headers.
func TestAPI2ConstantsMatchTheInstalledHeaders(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed")
	}
	if _, err := os.Stat("/usr/include/oneapi/dnnl/dnnl_types.h"); err != nil {
		t.Skip("libdnnl-dev not installed (scripts/test.sh installs it)")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "c.c")
	prog := `#include <stdio.h>
#include <oneapi/dnnl/dnnl.h>
int main(void) {
	printf("%zu %zu %zu %zu %zu %zu %zu\n", sizeof(dnnl_memory_desc_t), sizeof(dnnl_convolution_desc_t),
		sizeof(dnnl_inner_product_desc_t), sizeof(dnnl_pooling_v2_desc_t), sizeof(dnnl_eltwise_desc_t),
		sizeof(dnnl_matmul_desc_t), sizeof(dnnl_exec_arg_t));
	printf("%d %d %d %d %d %d %d %d %d %d %d %d\n", dnnl_cpu, dnnl_f32, dnnl_forward_inference, dnnl_convolution_direct,
		dnnl_stream_default_flags, dnnl_query_impl_info_str, dnnl_query_exec_arg_md, dnnl_format_tag_any, dnnl_a, dnnl_ab, dnnl_abc, DNNL_RUNTIME_OMP);
	printf("%d %d %d %d %d\n", DNNL_ARG_SRC, DNNL_ARG_DST, DNNL_ARG_WEIGHTS, DNNL_ARG_BIAS, DNNL_ARG_WORKSPACE);
	printf("%d %d %d %d\n", dnnl_nchw, dnnl_nhwc, dnnl_nChw16c, dnnl_nChw8c);
	printf("%d %d %d %d %d\n", dnnl_pooling_max, dnnl_pooling_avg_include_padding, dnnl_pooling_avg_exclude_padding, dnnl_eltwise_gelu_erf, dnnl_eltwise_gelu_tanh);
	return 0;
}
`
	if err := os.WriteFile(src, []byte(prog), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "c")
	if out, err := exec.Command("gcc", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	out, err := exec.Command(bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("%d %d %d %d %d %d %d\n%d %d %d %d %d %d %d %d %d %d %d %d\n%d %d %d %d %d\n%d %d %d %d\n%d %d %d %d %d\n",
		memoryDescSize, convDescSize, ipDescSize, poolDescSize, eltwiseSize, matmulDescSize, 16,
		dnnlCPU, dnnlF32, dnnlForwardInference, dnnlConvolutionDirect, dnnlStreamDefault, dnnlQueryImplInfoStr, dnnlQueryExecArgMD,
		dnnlFormatAny, dnnlTagA, dnnlTagAB, dnnlTagABC, runtimeOMP,
		argSrc, argDst, argWeights, argBias, argWorkspace,
		tagValues["nchw"], tagValues["nhwc"], tagValues["nChw16c"], tagValues["nChw8c"],
		algValues["pooling_max"], algValues["pooling_avg_include_padding"], algValues["pooling_avg_exclude_padding"], algValues["eltwise_gelu_erf"], algValues["eltwise_gelu_tanh"])
	if string(out) != want {
		t.Errorf("headers say\n%s\nthe binding has\n%s", out, want)
	}
	if strings.Count(string(out), "\n") != 5 {
		t.Errorf("unexpected output %q", out)
	}
}
