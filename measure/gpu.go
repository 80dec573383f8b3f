package measure

import (
	"time"

	"github.com/rprof/rprof/gpu/cupti"
	"github.com/rprof/rprof/gpu/metrics"
	"github.com/rprof/rprof/roofline"
)

// GPUConfig is one run of a CUDA program whose kernels CUPTI records from
// inside it (rprof run --gpu; package cupti).
type GPUConfig struct {
	// Target is the program; Label is not used (each point is named by
	// its kernel).
	Target Target
	// Runtime is the private directory the injection library is written
	// under (rundir.Default()).
	Runtime string
	// CUPTI is the libcupti the target opens (cupti.Find).
	CUPTI string
	// Device describes a device by its ordinal, from the driver (nil, or
	// an error: the points carry the ordinal alone).
	Device func(ordinal int) (*cupti.Device, error)
	// Machine describes the host in the points.
	Machine roofline.Machine
	// Roofs, read from RoofsFile, places the kernels the range profiler
	// measured under their device's GPU roofs (nil: not placed).
	Roofs     *roofline.Roofs
	RoofsFile string
}

// GPURun is what a recorded run gave.
type GPURun struct {
	// Points are one per kernel and device, in the order of their first
	// launch: the launches' GPU time summed, with W and Q by level where
	// CUPTI's range profiler measured every launch (placed under Roofs),
	// else flagged gpu-times-only with the reason; with the device and
	// its clocks.
	Points   []roofline.Point
	Launches int
	// CUPTIVersion is the CUPTI API version the target opened.
	CUPTIVersion int
	// Wall is the target's wall time, Exit its status.
	Wall time.Duration
	Exit roofline.Exit
	// Devices are the driver's failures to describe a device.
	Devices []error
}

// gpuPoints turns a recording into the run's points.
func gpuPoints(c GPUConfig, rec cupti.Recording, run *GPURun, created time.Time) error {
	launches, err := rec.Launches()
	if err != nil {
		return err
	}
	run.Launches, run.CUPTIVersion = len(launches), rec.Version()
	devices := map[int]*cupti.Device{}
	flags := rec.Flags()
	for _, g := range cupti.Groups(launches) {
		dev, seen := devices[g.Device]
		if !seen && c.Device != nil {
			d, err := c.Device(g.Device)
			if err != nil {
				run.Devices = append(run.Devices, err)
			}
			devices[g.Device], dev = d, d
		}
		p := g.Point(dev, rec.Profile(g), c.Machine, created)
		p.Command, p.Exit = c.Target.Command, run.Exit
		if p.WorkFlops != nil && metrics.Place(&p, c.Roofs) {
			p.RoofsFile = c.RoofsFile
		}
		p.Flags = append(p.Flags, flags...)
		run.Points = append(run.Points, p)
	}
	return nil
}
