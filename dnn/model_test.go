package dnn

import (
	"math"
	"testing"

	"github.com/rprof/rprof/roofline"
)

func mustParse(t *testing.T, line string) *Record {
	t.Helper()
	r, ok, err := ParseLine(line)
	if err != nil || !ok {
		t.Fatalf("ParseLine(%q): ok %v, %v", line, ok, err)
	}
	return &r
}

// Each case's W and Q are worked out by hand in its comment.
func TestModelMatchesHandComputedShapes(t *testing.T) {
	for _, tc := range []struct {
		name string
		line string
		w, q float64
	}{{
		// 2·2·64·56·56·64·3·3 = 462,422,016 MAC·2, bias 2·64·56·56 = 401,408.
		// Q: src and dst 2·64·56·56·4 = 1,605,632 each, wei 64·64·9·4 =
		// 147,456, bias 256.
		"conv blocked with bias",
		"onednn_verbose,exec,cpu,convolution,jit:avx512_core,forward_inference,src_f32::blocked:aBcd16b:f0 wei_f32::blocked:ABcd16b16a:f0 bia_f32::blocked:a:f0 dst_f32::blocked:aBcd16b:f0,,alg:convolution_direct,mb2_ic64oc64_ih56oh56kh3sh1dh0ph1_iw56ow56kw3sw1dw0pw1,2.35083",
		462422016 + 401408, 2*1605632 + 147456 + 256,
	}, {
		// Groups 2, IC/G 32: 2·2·32·28·28·32·9 = 28,901,376; bias, sum and
		// GELU per dst element (2·32·784 = 50,176): 1 + 1 + 38.
		// Q: src 2·64·784·4 = 401,408; wei 2·16·32·9·4 = 36,864, padded
		// 16→16, 32→32 (aBCde16c16b: c=IC/G 32, b=OC/G 16); bias 128;
		// dst 2·32·784·4 = 200,704, read for the sum and written.
		"grouped conv with sum and gelu post-ops",
		"onednn_verbose,exec,cpu,convolution,jit:avx512_core,forward_training,src_f32::blocked:aBcd16b:f0 wei_f32::blocked:aBCde16c16b:f0 bia_f32::blocked:a:f0 dst_f32::blocked:aBcd16b:f0,attr-scratchpad:user attr-post-ops:sum+eltwise_gelu_erf ,alg:convolution_direct,g2mb2_ic64oc32_ih28oh28kh3sh1dh1ph2_iw28ow28kw3sw1dw1pw2,0.200928",
		28901376 + 40*50176, 401408 + 36864 + 128 + 2*200704,
	}, {
		// 2·128·1024·1024; Q (128·1024 + 1024·1024 + 128·1024)·4.
		"matmul", "onednn_verbose,exec,cpu,matmul,brg:avx512_core,undef,src_f32::blocked:ab:f0 wei_f32::blocked:ab:f0 dst_f32::blocked:ab:f0,,,128x1024:1024x1024:128x1024,2.20117",
		268435456, 5242880,
	}, {
		// Batched, dst not given: B = 4, M 8, K 16, N 32: 2·4·8·16·32.
		// Q (4·8·16 + 4·16·32 + 4·8·32)·2 bytes (bf16).
		"batched bf16 matmul, 3.x", "onednn_verbose,primitive,exec,cpu,matmul,brg:avx512_core_amx,undef,src_bf16::blocked:abc::f0 wei_bf16::blocked:abc::f0 dst_bf16::blocked:abc::f0,attr-scratchpad:user ,,4x8x16:4x16x32,1.21704",
		32768, (512 + 2048 + 1024) * 2,
	}, {
		// n = 2·64·112·112 = 1,605,632: 38n; read and written in place.
		"gelu erf", "onednn_verbose,exec,cpu,eltwise,jit:avx512_core,forward_inference,data_f32::blocked:abcd:f0 diff_undef::undef::f0,,alg:eltwise_gelu_erf alpha:0 beta:0,2x64x112x112,4.23804",
		38 * 1605632, 2 * 4 * 1605632,
	}, {
		// Seed 004's GELU: 256x3x227x227 on nChw8c pads 3 channels to 8:
		// W on the 39,574,272 logical elements, Q on 105,531,392 padded.
		"gelu tanh padded", "onednn_verbose,exec,cpu,eltwise,jit:avx512_core,forward_inference,data_f32:p:blocked:aBcd8b:f0 diff_undef::undef::f0,,alg:eltwise_gelu_tanh alpha:0 beta:0,256x3x227x227,100",
		21 * 39574272, 2 * 4 * 105531392,
	}, {
		// 2·16·14·14 outputs · 9 taps; Q 2·16·28·28·4 + 2·16·14·14·4.
		"avg pool", "onednn_verbose,exec,cpu,pooling_v2,jit:avx512_core,forward_inference,src_f32::blocked:abcd:f0 dst_f32::blocked:abcd:f0 ws_undef::undef::f0,,alg:pooling_avg_include_padding,mb2ic16_ih28oh14kh3sh2dh0ph1_iw28ow14kw3sw2dw0pw1,0.0151367",
		56448, 100352 + 25088,
	}, {
		// Max pool: no FLOPs; the u8 workspace is written: 1·64·56·56.
		"max pool with workspace", "dnnl_verbose,exec,cpu,pooling,ref:any,forward_training,src_f32::blocked:aBcd16b:f0 dst_f32::blocked:abcd:f0 ws_u8::blocked:abcd:f0,,alg:pooling_max,mb1ic64_ih112oh56kh3sh2ph1_iw112ow56kw3sw2pw1,12.4121",
		0, 64*112*112*4 + 64*56*56*4 + 64*56*56,
	}, {
		// 2·32·256·512 + bias 32·256; wei AB16b64a pads nothing
		// (256 = 16·16, 512 = 8·64).
		"inner product", "onednn_verbose,exec,cpu,inner_product,brgemm:avx512_core,forward_inference,src_f32::blocked:ab:f0 wei_f32::blocked:AB16b64a:f0 bia_f32::blocked:a:f0 dst_f32::blocked:ab:f0,,,mb32ic512oc256,0.351074",
		8388608 + 8192, (32*512 + 256*512 + 256 + 32*256) * 4,
	}, {
		// IP with spatial source: 2·2·10·16·7·7; no bias.
		"inner product 4D src", "onednn_verbose,exec,cpu,inner_product,gemm:jit,forward_inference,src_f32::blocked:abcd:f0 wei_f32::blocked:abcd:f0 bia_undef::undef::f0 dst_f32::blocked:ab:f0,,,mb2ic16ih7iw7oc10,0.1",
		2 * 2 * 10 * 16 * 49, (2*16*49 + 10*16*49 + 2*10) * 4,
	}, {
		// Reorder to a padded blocked layout: 2x24x14x14 read, 2x32x14x14
		// written.
		"reorder to padded", "onednn_verbose,exec,cpu,reorder,jit:uni,undef,src_f32::blocked:abcd:f0 dst_f32:p:blocked:aBcd16b:f0,,,2x24x14x14,0.0168457",
		0, (2*24*196 + 2*32*196) * 4,
	}, {
		// Batch norm with global statistics: 2 FLOP per element; in place.
		"batch norm", "onednn_verbose,exec,cpu,batch_normalization,bnorm_jit:avx512_core,forward_inference,data_f32::blocked:aBcd16b:f0 diff_undef::undef::f0,,flags:GS,mb2ic32ih14iw14,0.08",
		2 * 12544, 2 * 4 * 12544,
	}, {
		// 3D convolution, 1 group: 2·1·8·4·4·4·4·3·3·3, no padding taps.
		"conv 3d", "onednn_verbose,exec,cpu,convolution,gemm:jit,forward_training,src_f32::blocked:abcde:f0 wei_f32::blocked:abcde:f0 bia_undef::undef::f0 dst_f32::blocked:abcde:f0,,alg:convolution_direct,mb1_ic4oc8_id6od4kd3sd1dd0pd0_ih6oh4kh3sh1dh0ph0_iw6ow4kw3sw1dw0pw0,0.5",
		2 * 8 * 64 * 4 * 27, (4*216 + 8*4*27 + 8*64) * 4,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			a := Model(mustParse(t, tc.line))
			if a.WorkFlops == nil || *a.WorkFlops != tc.w {
				t.Errorf("W = %v, want %g (flags %v)", num(a.WorkFlops), tc.w, a.Flags)
			}
			if a.TrafficBytes == nil || *a.TrafficBytes != tc.q {
				t.Errorf("Q = %v, want %g (flags %v)", num(a.TrafficBytes), tc.q, a.Flags)
			}
		})
	}
}

func TestPaddedGeluReportsTheWorkOfThePadding(t *testing.T) {
	a := Model(mustParse(t, "onednn_verbose,exec,cpu,eltwise,jit:avx512_core,forward_inference,data_f32:p:blocked:aBcd8b:f0 diff_undef::undef::f0,,alg:eltwise_gelu_erf alpha:0 beta:0,256x3x227x227,100"))
	if got, want := *a.PaddedWorkFlops / *a.WorkFlops, 8.0/3; math.Abs(got-want) > 1e-12 {
		t.Errorf("padded W / W = %g, want 8/3", got)
	}
	var codes []string
	for _, f := range a.Flags {
		codes = append(codes, f.Code)
	}
	if len(codes) != 2 || codes[0] != roofline.FlagApproximate || codes[1] != roofline.FlagPadded {
		t.Errorf("flags %v, want approximate then padded", codes)
	}
}

func TestKindsWithoutAFormulaAreTimeOnly(t *testing.T) {
	for _, line := range []string{
		"onednn_verbose,exec,cpu,binary,jit:uni,undef,src_f32::blocked:abcd:f0 src_f32::blocked:abcd:f0 dst_f32::blocked:abcd:f0,,alg:binary_add,2x16x14x14:2x16x14x14,0.00585938",
		"onednn_verbose,exec,cpu,lrn,jit:avx2,forward_inference,data_f32::blocked:abcd:f0 diff_undef::undef::f0,,alg:lrn_across_channels,mb2ic16ih14iw14ls5beta0.75,0.0349121",
		"onednn_verbose,exec,cpu,eltwise,jit:avx512_core,forward_inference,data_f32::blocked:abcd:f0 diff_undef::undef::f0,,alg:eltwise_swish alpha:1 beta:0,2x64,0.1",
		"onednn_verbose,exec,cpu,matmul,brg:avx512_core,undef,src_f32::blocked:ab:f0 wei_f32::blocked:ab:f0 dst_f32::blocked:ab:f0,,,*x1024:1024x1024,2.2",
	} {
		a := Model(mustParse(t, line))
		if a.WorkFlops != nil || a.TrafficBytes != nil || len(a.Flags) == 0 || a.Flags[len(a.Flags)-1].Code != roofline.FlagNoFormula {
			t.Errorf("%s: W %s Q %s flags %v, want time only, flagged", line, num(a.WorkFlops), num(a.TrafficBytes), a.Flags)
		}
	}
}

func TestConvolutionFlagsTapsOnZeroPadding(t *testing.T) {
	// 7x7 input, 5x5 kernel, padding 2: per axis 3+4+5+5+5+4+3 = 29 of 35
	// taps land inside, so (29/35)^2 of the formula's taps are computed.
	a := Model(mustParse(t, "onednn_verbose,exec,cpu,convolution,jit:avx512_core,forward_training,src_f32::blocked:aBcd16b:f0 wei_f32::blocked:ABcd16b16a:f0 bia_undef::undef::f0 dst_f32::blocked:aBcd16b:f0,,alg:convolution_direct,mb2_ic16oc16_ih7oh7kh5sh1dh0ph2_iw7ow7kw5sw1dw0pw2,0.08"))
	if got := tapsInside(7, 7, 5, 1, 0, 2); got != 29 {
		t.Errorf("taps inside = %g, want 29", got)
	}
	if len(a.Flags) != 1 || a.Flags[0].Code != roofline.FlagPaddingTaps {
		t.Errorf("flags %v, want one padding-taps flag", a.Flags)
	}
}
