package ncu

import (
	"fmt"
	"strings"
	"time"

	"github.com/rprof/rprof/gpu/metrics"
	"github.com/rprof/rprof/roofline"
)

// Kernel is one kernel's launches on one device, summed.
type Kernel struct {
	Name       string
	Device     int
	DeviceName string
	CC         string
	Launches   int
	// Sums are each metric summed over the launches; a metric some launch
	// lacks is absent, and Missing names it with the reason.
	Sums    map[string]float64
	Missing map[string]string
	// smWeighted and memWeighted are the clocks times the launches' time.
	smWeighted, memWeighted float64
}

// Kernels groups launches by kernel name and device, in the order of
// their first launch, and sums each group's metrics.
func Kernels(ls []Launch) []Kernel {
	groups := metrics.ByKernel(ls, func(l Launch) (int, string) { return l.Device, l.Kernel })
	out := make([]Kernel, len(groups))
	for i, g := range groups {
		out[i] = sum(g)
	}
	return out
}

// sum adds up a kernel's launches: a metric is summed when every launch
// has it, else missing with the first launch's reason.
func sum(ls []Launch) Kernel {
	l0 := ls[0]
	k := Kernel{Name: l0.Kernel, Device: l0.Device, DeviceName: l0.DeviceName, CC: l0.CC, Launches: len(ls),
		Sums: map[string]float64{}, Missing: map[string]string{}}
	names := map[string]bool{}
	for _, l := range ls {
		for m := range l.Values {
			names[m] = true
		}
		for m := range l.Problems {
			names[m] = true
		}
	}
	for m := range names {
		for _, l := range ls {
			v, ok := l.Values[m]
			if !ok {
				why := l.Problems[m]
				if why == "" {
					why = "absent"
				}
				k.Missing[m] = fmt.Sprintf("launch %s: %s", l.ID, why)
				delete(k.Sums, m)
				break
			}
			k.Sums[m] += v
		}
	}
	for _, l := range ls {
		t := l.Values[MetricTime]
		k.smWeighted += l.Values[MetricSMClock] * t
		k.memWeighted += l.Values[MetricMemClock] * t
	}
	return k
}

// Lacks names the metrics the kernel needs to be placed and lacks, with
// why: "dram__bytes.sum (not in the report)".
func (k *Kernel) Lacks() []string {
	var out []string
	for _, m := range Required() {
		if _, ok := k.Sums[m]; ok {
			continue
		}
		why, ok := k.Missing[m]
		if !ok {
			why = "not in the report"
		}
		out = append(out, m+" ("+why+")")
	}
	return out
}

// Point is the kernel's point: W, Q (DRAM) and T summed over its
// launches, Q by level, the device and clocks. It must have no Lacks.
func (k *Kernel) Point(here roofline.Machine, created time.Time) roofline.Point {
	t := k.Sums[MetricTime]
	g := &roofline.GPUKernel{Kernel: k.Name, Launches: k.Launches, Device: k.Device, DeviceName: k.DeviceName,
		ComputeCapability: k.CC, Tool: "ncu"}
	if _, ok := k.Sums[MetricSMClock]; ok && t > 0 {
		g.SMClockMHz = k.smWeighted / t / 1e6
	}
	if _, ok := k.Sums[MetricMemClock]; ok && t > 0 {
		g.MemClockMHz = k.memWeighted / t / 1e6
	}
	p := metrics.Point(g, roofline.KernelLabel(k.Name), t, here, created)
	metrics.Evaluate(k.Sums).Set(&p)
	return p
}

// Points turns the kernels that have their metrics into points, placed
// under their device's GPU roofs when roofs (read from roofsFile) has
// them, and says why of the others.
func Points(ks []Kernel, roofs *roofline.Roofs, roofsFile string, here roofline.Machine, created time.Time) (points []roofline.Point, unplaced []string) {
	for i := range ks {
		k := &ks[i]
		if lacks := k.Lacks(); len(lacks) > 0 {
			unplaced = append(unplaced, fmt.Sprintf("%s (device %d): lacks %s", k.Name, k.Device, strings.Join(lacks, ", ")))
			continue
		}
		p := k.Point(here, created)
		if metrics.Place(&p, roofs) {
			p.RoofsFile = roofsFile
		}
		points = append(points, p)
	}
	return points, unplaced
}
