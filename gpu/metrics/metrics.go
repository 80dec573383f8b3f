// Package metrics is what a kernel's NVIDIA performance metrics mean on
// the roofline, for every source of them (Nsight Compute's report, CUPTI's
// range profiler): the metric names rprof reads, W from the FP64, FP32 and
// FP16 add, multiply and FMA thread instructions (FMA counted twice), Q by
// level from the DRAM, L2 and L1 bytes (the hierarchical GPU roofline of
// Yang et al.), launches grouped per kernel and device, and a kernel's
// point placed under its device's roofs.
package metrics

import (
	"fmt"
	"time"

	"github.com/rprof/rprof/roofline"
)

// The byte metrics, one per level.
const (
	DRAM = "dram__bytes.sum"
	L2   = "lts__t_bytes.sum"
	L1   = "l1tex__t_bytes.sum"
)

// precisions are the instruction metrics' precision letters with the
// precision each counts.
var precisions = []struct{ letter, name string }{{"d", "fp64"}, {"f", "fp32"}, {"h", "fp16"}}

// levels are the byte metrics by roofline level.
var levels = []struct{ level, metric string }{{roofline.LevelDRAM, DRAM}, {roofline.LevelL2, L2}, {roofline.LevelL1, L1}}

// Work is the thread-instruction metric of a precision letter (d, f, h)
// and operation (add, mul, fma).
func Work(letter, op string) string {
	return "sm__sass_thread_inst_executed_op_" + letter + op + "_pred_on.sum"
}

// Required are the metrics a kernel must have to be placed: its nine
// instruction counts and its DRAM bytes.
func Required() []string {
	var out []string
	for _, p := range precisions {
		for _, op := range []string{"add", "mul", "fma"} {
			out = append(out, Work(p.letter, op))
		}
	}
	return append(out, DRAM)
}

// All are every metric Evaluate reads: Required and the L2 and L1 bytes.
func All() []string {
	return append(Required(), L2, L1)
}

// Figures are a kernel's W and Q from its metrics.
type Figures struct {
	// Flops is W: adds, multiplies and twice the FMAs of every precision.
	Flops float64
	// ByPrecision is W per precision (fp64, fp32, fp16), those above zero.
	ByPrecision map[string]float64
	// LevelBytes are the bytes at each level whose metric is there; DRAM's
	// is Q.
	LevelBytes map[string]float64
}

// Evaluate turns metric values (summed over a kernel's launches) into
// its figures. The values must hold Required.
func Evaluate(v map[string]float64) Figures {
	f := Figures{ByPrecision: map[string]float64{}, LevelBytes: map[string]float64{}}
	for _, p := range precisions {
		w := v[Work(p.letter, "add")] + v[Work(p.letter, "mul")] + 2*v[Work(p.letter, "fma")]
		f.Flops += w
		if w > 0 {
			f.ByPrecision[p.name] = w
		}
	}
	for _, l := range levels {
		if b, ok := v[l.metric]; ok {
			f.LevelBytes[l.level] = b
		}
	}
	return f
}

// Set gives p its W, Q (DRAM's bytes) and rates from f, and the kernel
// its bytes by level; p's Seconds must be set. The figures are counted,
// so p's source becomes roofline.SourceCounters.
func (f Figures) Set(p *roofline.Point) {
	w, q, t := f.Flops, f.LevelBytes[roofline.LevelDRAM], p.Seconds
	p.Source = roofline.SourceCounters
	p.WorkFlops, p.WorkByPrecision, p.TrafficBytes = &w, f.ByPrecision, &q
	if p.GPU != nil {
		p.GPU.LevelBytes = f.LevelBytes
	}
	if t > 0 {
		gflops, gbytes := roofline.Rate(w, t), roofline.Rate(q, t)
		p.GFlops, p.GBytesPerS = &gflops, &gbytes
	}
	if q > 0 {
		ai := w / q
		p.Intensity = &ai
	}
}

// ByKernel groups launches by kernel and device (key gives a launch's
// device and kernel name), in the order of their first launch: every
// source of a GPU's kernels sums them alike.
func ByKernel[T any](launches []T, key func(T) (device int, name string)) [][]T {
	type kernel struct {
		device int
		name   string
	}
	var groups [][]T
	index := map[kernel]int{}
	for _, l := range launches {
		d, n := key(l)
		i, ok := index[kernel{d, n}]
		if !ok {
			i = len(groups)
			index[kernel{d, n}] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], l)
	}
	return groups
}

// Point is the point of kernel k labelled label, whose launches took
// seconds of GPU time, each measured once (no interval): its time only
// (roofline.SourceTimes) until Figures.Set gives it W and Q.
func Point(k *roofline.GPUKernel, label string, seconds float64, here roofline.Machine, created time.Time) roofline.Point {
	return roofline.Point{Schema: roofline.PointSchema, Label: label, Command: []string{}, Created: created,
		Source: roofline.SourceTimes, Seconds: seconds, Events: []roofline.EventCount{},
		CI:    roofline.Uncertainty{N: 1, Seconds: roofline.Interval{Lo: seconds, Hi: seconds}},
		Flags: []roofline.Flag{}, Machine: here, Threads: roofline.GPUThreads, GPU: k}
}

// Place places a kernel's point under its device's roofs, flagging roofs
// of another GPU (by name) as foreign; false when roofs has none for the
// device.
func Place(p *roofline.Point, roofs *roofline.Roofs) bool {
	if roofs == nil {
		return false
	}
	g, ok := roofs.GPU(p.GPU.Device)
	if !ok {
		return false
	}
	if p.GPU.DeviceName != "" && g.Device.Name != p.GPU.DeviceName {
		p.Flags = append(p.Flags, roofline.Flag{Code: roofline.FlagForeignRoofs, Subject: roofline.SubjectPlacement,
			Message: fmt.Sprintf("the kernel ran on %s, the roofs are of %s", p.GPU.DeviceName, g.Device.Name)})
	}
	roofs.GPUView(g).PlaceAt(p, roofline.GPUThreads)
	return true
}
