package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/rprof/rprof/cmd/rprof/internal/render"
	"github.com/rprof/rprof/gpu/cuda"
	"github.com/rprof/rprof/gpu/cupti"
	"github.com/rprof/rprof/internal/docfile"
	"github.com/rprof/rprof/internal/lock"
	"github.com/rprof/rprof/internal/rundir"
	"github.com/rprof/rprof/measure"
	"github.com/rprof/rprof/roofline"
)

// runGPUFlags are the run flags that apply with --gpu.
var runGPUFlags = []string{"gpu", "json", "roofs", "lock-timeout"}

// runGPU is rprof run --gpu: target's GPU kernels, recorded by CUPTI from
// inside it, one point each.
func runGPU(ctx context.Context, e *env, fset *flag.FlagSet, target measure.Target, jsonPath, roofsPath string, lockTimeout time.Duration) error {
	var err error
	fset.Visit(func(f *flag.Flag) {
		if err == nil && !slices.Contains(runGPUFlags, f.Name) {
			err = usagef("--%s does not apply with --gpu (only --json, --roofs and --lock-timeout do): --gpu records the program's GPU kernels, not its CPU's counters", f.Name)
		}
	})
	if err != nil {
		return err
	}
	if err := checkOutputs([]string{jsonPath}, docfile.RoofsInput(roofsPath)); err != nil {
		return err
	}
	roofs, err := docfile.LoadRoofs(roofsPath)
	if err != nil {
		return &exitError{code: exitUsage, err: err}
	}
	target.Stdout = targetStdout(e, jsonPath)
	lib, err := cupti.Find("", os.Getenv)
	if err != nil {
		return &exitError{code: exitInternal, err: err}
	}
	release, err := holdMachine(ctx, e, "run", lock.Shared, lockTimeout)
	if err != nil {
		return err
	}
	c := measure.GPUConfig{Target: target, Runtime: rundir.Default(), CUPTI: lib, Machine: e.machine().Describe(),
		Roofs: roofs.Roofs, RoofsFile: roofs.Path}
	// The driver numbers the devices as the target's does: both see the
	// same CUDA_VISIBLE_DEVICES. Without a driver the kernels keep their
	// device's index alone, and a note says why.
	describe, derr := e.gpuDevices()
	c.Device = func(i int) (*cupti.Device, error) {
		if derr != nil {
			return nil, derr
		}
		return describe(i)
	}
	run, err := measure.RunGPU(ctx, c)
	release()
	if err != nil {
		return gpuRunFailure(err, run)
	}
	render.WriteGPUKernels(e.stderr, run.Points, run.Wall)
	for _, d := range run.Devices {
		fmt.Fprintf(e.stderr, "rprof run: note: the driver could not describe a device, so its kernels carry its index alone: %v\n", d)
	}
	if jsonPath != "" {
		if err := docfile.Write(ctx, jsonPath, e.stdout, roofline.PointSet{Schema: roofline.PointSetSchema, Points: run.Points}); err != nil {
			return writeFailure(err)
		}
	}
	if run.Exit.Code != 0 {
		return &exitError{code: run.Exit.Code}
	}
	return nil
}

// gpuRunFailure is one line: the target's own failures as run's, and
// why nothing was recorded (exit 125; the target's status is said when
// it failed too).
func gpuRunFailure(err error, run *measure.GPURun) error {
	if run == nil {
		return measureFailure(err, "")
	}
	if run.Exit.Code != 0 {
		err = fmt.Errorf("%w (the target exited with status %d)", err, run.Exit.Code)
	}
	return &exitError{code: exitInternal, err: err}
}

// gpuDevices describes the devices from the CUDA driver, without a
// context: their names, compute capabilities and peak clocks, by ordinal.
func (e *env) gpuDevices() (func(int) (*cupti.Device, error), error) {
	drv, err := e.cudaDriver()
	if err != nil {
		return nil, err
	}
	infos, err := cuda.Devices(drv)
	if err != nil {
		return nil, err
	}
	return func(ordinal int) (*cupti.Device, error) {
		if ordinal < 0 || ordinal >= len(infos) {
			return nil, &cuda.DeviceRangeError{Index: ordinal, Count: len(infos)}
		}
		i := infos[ordinal]
		return &cupti.Device{Name: i.Name, ComputeCapability: fmt.Sprintf("%d.%d", i.Major, i.Minor),
			SMClockMHz: float64(i.SMClockKHz) / 1000, MemClockMHz: float64(i.MemClockKHz) / 1000}, nil
	}, nil
}
