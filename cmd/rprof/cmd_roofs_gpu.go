package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/rprof/rprof/cmd/rprof/internal/render"
	"github.com/rprof/rprof/gpu"
	"github.com/rprof/rprof/gpu/cuda"
	"github.com/rprof/rprof/internal/lock"
	"github.com/rprof/rprof/internal/unit"
	"github.com/rprof/rprof/roofline"
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
// at path (gpuDocument).
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
	p := newProgress(e.stderr)
	o.Progress = p.show
	start := time.Now()
	g, err := gpu.Measure(ctx, drv, o)
	p.clear()
	var re *cuda.DeviceRangeError
	switch {
	case ctx.Err() != nil:
		return &exitError{code: exitInterrupted, err: errors.New("interrupted; no roofs document written")}
	case errors.As(err, &re):
		return usagef("--device %d: %v", o.Device, err)
	case err != nil:
		return &exitError{code: exitInternal, err: err}
	}
	doc, note := gpuDocument(path, g, e.machine().Describe())
	writeGPUTable(e.stderr, g, time.Since(start))
	if err := writeDoc(ctx, e, path, doc); err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "wrote %s (%s)\n", path, note)
	return nil
}

// gpuDocument is the document to write: the one at path with g in place
// of the same device's roofs, when it is this machine's; else a new one
// holding only g. The note says which.
func gpuDocument(path string, g *roofline.GPURoofs, here roofline.Machine) (roofline.Roofs, string) {
	doc := roofline.Roofs{Schema: roofline.RoofsSchema, Machine: here, Compute: []roofline.ComputeRoof{}, Bandwidth: []roofline.BandwidthRoof{}}
	note := "a new document with the GPU's roofs only"
	if old, err := readRoofs(path); err == nil && roofline.ForeignRoofs(old.Machine, here) == "" {
		doc, note = *old, "the GPU's roofs added to this machine's roofs there"
	}
	doc.Created = time.Now().UTC()
	doc.GPUs = slices.DeleteFunc(doc.GPUs, func(o roofline.GPURoofs) bool { return o.Device.Index == g.Device.Index })
	doc.GPUs = append(doc.GPUs, *g)
	return doc, note
}

// writeGPUTable shows a GPU's roofs as the CPU's table does.
func writeGPUTable(w io.Writer, g *roofline.GPURoofs, took time.Duration) {
	d := g.Device
	fmt.Fprintf(w, "GPU %d: %s (compute capability %s, %d SMs, %s memory; driver %s), measured in %.1f s\n",
		d.Index, d.Name, d.ComputeCapability, d.SMs, unit.Bytes(d.MemoryBytes), d.Driver, took.Seconds())
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "roof\tvalue\t%s interval\tof theory\tconfiguration\tclocks (MHz)\n", unit.RoundPercent(gpu.Confidence))
	for _, c := range g.Compute {
		fmt.Fprintf(tw, "%s\t%.4g GFLOP/s\t%s\t%s\t%s, %dx%d\t%s\n", c.Name, c.GFlops, render.Interval(c.CI, c.IntervalUnknown),
			ofTheory(c.GFlops, c.TheoreticalGFlops), c.Kernel, c.Launch.Blocks, c.Launch.Threads, clocksLine(c.Clocks))
	}
	for _, m := range g.Memory {
		fmt.Fprintf(tw, "%s\t%.4g GB/s\t%s\t%s\t%s over %s, %dx%d\t%s\n", m.Level, m.GBytesPerS, render.Interval(m.CI, m.IntervalUnknown),
			ofTheory(m.GBytesPerS, m.TheoreticalGBytesPerS), m.Kernel, unit.Bytes(m.WorkingSetBytes), m.Launch.Blocks, m.Launch.Threads, clocksLine(m.Clocks))
	}
	tw.Flush()
	if len(g.Ladder) > 0 {
		var steps []string
		for _, s := range g.Ladder {
			steps = append(steps, fmt.Sprintf("%s: %s", unit.Value(s.FlopsPerByte), unit.Value(s.GFlops)))
		}
		fmt.Fprintf(w, "ladder (FLOP/byte: GFLOP/s): %s\n", strings.Join(steps, ", "))
	}
	for _, f := range g.Flags {
		fmt.Fprintf(w, "%s: %s\n", f.Code, f.Message)
	}
}

func ofTheory(v, peak float64) string {
	if peak <= 0 {
		return "-"
	}
	return unit.RoundPercent(v/peak) + " of " + unit.Sig(peak)
}

func clocksLine(c roofline.GPUClocks) string {
	return fmt.Sprintf("SM %.0f, memory %.0f (%s)", c.SMClockMHz, c.MemClockMHz, c.Source)
}

// gpuRoofsVar defines plot's and report's --gpu and --device.
func gpuRoofsVar(fs *flag.FlagSet) (onGPU *bool, device *int) {
	return fs.Bool("gpu", false, "draw the GPU's roofs (rprof roofs --gpu)"), fs.Int("device", 0, "with --gpu: the GPU's index")
}

// selectGPU replaces the roofs drawn by GPU device's (roofline.GPUView),
// titled after it unless title is given.
func (in *inputs) selectGPU(onGPU bool, device int, title *string) error {
	switch {
	case !onGPU && device != 0:
		return usagef("--device needs --gpu")
	case !onGPU:
		return nil
	case in.roofs == nil:
		return usagef("--gpu needs a roofs document with GPU roofs (rprof roofs --gpu, or --roofs FILE)")
	}
	g, ok := in.roofs.GPU(device)
	if !ok {
		return usagef("--gpu: %s has no roofs of GPU %d (rprof roofs --gpu --device %d measures them)", in.roofsPath, device, device)
	}
	if *title == "" {
		*title = fmt.Sprintf("%s (GPU %d), measured %s", g.Device.Name, device, in.roofs.Created.Format("2006-01-02"))
	}
	in.roofs = in.roofs.GPUView(g)
	return nil
}
