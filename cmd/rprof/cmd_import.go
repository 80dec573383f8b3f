package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/rprof/rprof/cmd/rprof/internal/render"
	"github.com/rprof/rprof/gpu/ncu"
	"github.com/rprof/rprof/internal/docfile"
	"github.com/rprof/rprof/roofline"
)

var cmdImport = &command{
	Name:      "import",
	UsageLine: "rprof import ncu [--roofs FILE] [-o FILE] REPORT.csv",
	Short:     "place GPU kernels from an Nsight Compute report",
	Long: `
Import ncu places the GPU kernels of an Nsight Compute report under the
GPU's roofs ('rprof roofs --gpu'). The report is ncu's CSV export of the
raw page with the metrics rprof reads:

  ncu --csv --page raw --metrics \
    gpu__time_duration.sum,dram__bytes.sum,lts__t_bytes.sum,l1tex__t_bytes.sum,\
    sm__cycles_elapsed.avg.per_second,dram__cycles_elapsed.avg.per_second,\
    device__attribute_display_name,\
    sm__sass_thread_inst_executed_op_{d,f,h}{add,mul,fma}_pred_on.sum \
    PROGRAM > REPORT.csv

(the braces spelled out: nine instruction metrics). Each kernel's
launches on a device are summed: W is the FP64, FP32 and FP16 add and
multiply instructions plus twice the FMAs, Q the DRAM bytes (L2 and L1
bytes are kept beside them), T the GPU time; the clocks the profiler saw
are recorded. A kernel missing a metric W, Q or T needs is named with
what it lacks; the others are placed. Lines before the table (ncu's
progress lines) are skipped; the details page's long form is read too.
See docs/gpu.md.

The table goes to stderr; -o writes the points (a point set,
docs/schema-point.md), which plot --gpu and report --gpu draw.

`,
	Run: runImport,
}

func runImport(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "import")
	roofsPath := fs.String("roofs", "", "roofs document `FILE` with GPU roofs (default: the one 'rprof roofs' wrote, if any)")
	out := fs.String("o", "", "write the kernels' points to `FILE`")
	files, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(files) != 2 || files[0] != "ncu" {
		return usagef("want 'ncu' and one report file (the only source rprof imports is Nsight Compute's CSV)")
	}
	if err := checkOutputs([]string{*out}); err != nil {
		return err
	}
	f, err := os.Open(files[1])
	if err != nil {
		return usagef("%v", err)
	}
	defer f.Close()
	launches, err := ncu.Parse(f)
	if err != nil {
		return usagef("%s: %v", files[1], err)
	}
	roofs, err := docfile.LoadRoofs(*roofsPath)
	if err != nil {
		return &exitError{code: exitUsage, err: err}
	}
	points, unplaced := ncu.Points(ncu.Kernels(launches), roofs.Roofs, roofs.Path, e.machine().Describe(), time.Now().UTC())
	render.WriteImportTable(e.stderr, points, unplaced)
	if len(points) == 0 {
		return &exitError{code: exitUsage, err: errors.New("no kernel of the report has the metrics to be placed (see 'rprof help import')")}
	}
	if *out == "" {
		return nil
	}
	if err := docfile.Write(ctx, *out, e.stdout, roofline.PointSet{Schema: roofline.PointSetSchema, Points: points}); err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "rprof import: wrote %s\n", *out)
	return nil
}
