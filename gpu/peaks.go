package gpu

import (
	"fmt"

	"github.com/rprof/rprof/roofline"
)

// fmaRate is the FMA results one SM completes per clock in each precision
// (fp16: half-precision lanes, two per HFMA2), and where the figures come
// from.
type fmaRate struct {
	fp64, fp32, fp16 float64
	source           string
}

// fmaRates are per compute capability. Each is a peak FLOP/s NVIDIA
// publishes for a product, divided by its SM count, its boost clock and 2
// FLOPs per FMA; none has been measured by rprof yet (no GPU was at hand
// when the table was written: see docs/gpu.md).
var fmaRates = map[[2]int]fmaRate{
	// A100 SXM4 (NVIDIA A100 Tensor Core GPU Architecture whitepaper):
	// 108 SMs at 1410 MHz, FP64 9.7, FP32 19.5, FP16 (non-tensor) 78
	// TFLOP/s.
	{8, 0}: {32, 64, 256, "NVIDIA A100 whitepaper (non-tensor peaks / SMs / boost clock)"},
	// GA102 (NVIDIA Ampere GA102 GPU Architecture whitepaper): FP32 128
	// per SM, FP16 non-tensor at the FP32 rate, FP64 1/64 of FP32.
	{8, 6}: {2, 128, 128, "NVIDIA GA102 whitepaper (per-SM rates)"},
	// AD102 (NVIDIA Ada GPU Architecture whitepaper): as GA102.
	{8, 9}: {2, 128, 128, "NVIDIA Ada whitepaper (per-SM rates)"},
	// H100 SXM5 (NVIDIA H100 datasheet and Hopper whitepaper): 132 SMs at
	// 1980 MHz, FP64 34, FP32 67, FP16 (non-tensor) 134 TFLOP/s.
	{9, 0}: {64, 128, 256, "NVIDIA H100 datasheet (non-tensor peaks / SMs / boost clock)"},
}

// minMajor is the oldest compute capability the kernels run on: the PTX
// module targets sm_80.
const minMajor = 8

// UnsupportedError is a device whose compute capability rprof's kernels
// cannot run on.
type UnsupportedError struct {
	Name         string
	Major, Minor int
}

func (e *UnsupportedError) Error() string {
	return fmt.Sprintf("%s: compute capability %d.%d is not supported (rprof's kernels need %d.0 or later)", e.Name, e.Major, e.Minor, minMajor)
}

// theoretical is a precision's peak GFLOP/s at an SM clock, and the
// figures' source; 0 and "" when the table lacks the compute capability.
func theoretical(major, minor, sms int, smMHz float64, precision string) (float64, string) {
	r, ok := fmaRates[[2]int{major, minor}]
	if !ok {
		return 0, ""
	}
	per := map[string]float64{roofline.Double: r.fp64, roofline.Single: r.fp32, roofline.Half: r.fp16}[precision]
	return float64(sms) * per * 2 * smMHz / 1000, r.source
}

// dramPeak is the memory's theoretical bandwidth in GB/s: two transfers
// per memory clock (the driver reports HBM's and GDDR's clocks so) over
// the bus width.
func dramPeak(memMHz float64, busBits int) float64 {
	return 2 * memMHz * 1e6 * float64(busBits) / 8 / 1e9
}
