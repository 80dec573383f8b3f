package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"slices"
	"time"

	"github.com/rprof/rprof/cmd/rprof/internal/render"
	"github.com/rprof/rprof/gpu"
	"github.com/rprof/rprof/gpu/cuda"
	"github.com/rprof/rprof/internal/docfile"
	"github.com/rprof/rprof/internal/lock"
)

// gpuFlags are the roofs flags that apply with --gpu.
var gpuFlags = []string{"gpu", "device", "o", "quick", "fixed", "method", "lock-timeout"}

// checkGPUFlags refuses --device without --gpu, and with --gpu the flags
// of the CPU's measurement.
func checkGPUFlags(fs *flag.FlagSet, onGPU bool) error {
	var err error
	fs.Visit(func(f *flag.Flag) {
		switch {
		case err != nil:
		case f.Name == "device" && !onGPU:
			err = usagef("--device needs --gpu")
		case onGPU && !slices.Contains(gpuFlags, f.Name):
			err = usagef("--%s does not apply with --gpu (only -o, --device, --quick, --fixed, --method and --lock-timeout do)", f.Name)
		}
	})
	return err
}

// cudaDriver loads the CUDA driver (e.cuda in tests).
func (e *env) cudaDriver() (cuda.Driver, error) {
	if e.cuda != nil {
		return e.cuda()
	}
	return cuda.Load()
}

// gpuRoofs measures a GPU's roofs and writes them to the roofs document
// at path (docfile.AddGPU).
func gpuRoofs(ctx context.Context, e *env, path string, o gpu.Options, lockTimeout time.Duration) error {
	drv, err := e.cudaDriver()
	if err != nil {
		return &exitError{code: exitInternal, err: err}
	}
	release, err := holdMachine(ctx, e, "roofs", lock.Exclusive, lockTimeout)
	if err != nil {
		return err
	}
	defer release()
	p := render.NewProgress(e.stderr, isTerminal(e.stderr))
	o.Progress = p.Show
	start := time.Now()
	g, err := gpu.Measure(ctx, drv, o)
	p.Clear()
	var re *cuda.DeviceRangeError
	switch {
	case ctx.Err() != nil:
		return &exitError{code: exitInterrupted, err: errors.New("interrupted; no roofs document written")}
	case errors.As(err, &re):
		return usagef("--device %d: %v", o.Device, err)
	case err != nil:
		return &exitError{code: exitInternal, err: err}
	}
	doc, added := docfile.AddGPU(path, *g, e.machine().Describe(), time.Now().UTC())
	note := "a new document with the GPU's roofs only"
	if added {
		note = "the GPU's roofs added to this machine's roofs there"
	}
	render.WriteGPUTable(e.stderr, g, time.Since(start))
	if err := docfile.Write(ctx, path, e.stdout, doc); err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "wrote %s (%s)\n", path, note)
	return nil
}

// selectGPU replaces the roofs drawn by GPU device's (roofline.GPUView),
// titled after it unless title is given.
func selectGPU(in *docfile.Drawing, onGPU bool, device int, title *string) error {
	switch {
	case !onGPU && device != 0:
		return usagef("--device needs --gpu")
	case !onGPU:
		return nil
	case in.Roofs == nil:
		return usagef("--gpu needs a roofs document with GPU roofs (rprof roofs --gpu, or --roofs FILE)")
	}
	g, ok := in.Roofs.GPU(device)
	if !ok {
		return usagef("--gpu: %s has no roofs of GPU %d (rprof roofs --gpu --device %d measures them)", in.RoofsPath, device, device)
	}
	if *title == "" {
		*title = fmt.Sprintf("%s (GPU %d), measured %s", g.Device.Name, device, in.Roofs.Created.Format("2006-01-02"))
	}
	in.Roofs = in.Roofs.GPUView(g)
	return nil
}
