package main

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"strings"

	"gonum.org/v1/plot/vg"

	"github.com/rprof/rprof/cmd/rprof/internal/chart"
	"github.com/rprof/rprof/internal/docfile"
)

var cmdPlot = &command{
	Name:      "plot",
	UsageLine: "rprof plot [--ascii] [-o FILE.png|.svg|.pdf] [flags] [POINT.json...]",
	Short:     "draw the roofline chart of roofs and points",
	Long: `
Plot draws the roofs of this machine and the given points on a log-log
roofline chart: arithmetic intensity (FLOP per byte of DRAM traffic)
across, GFLOP/s up. Every compute roof (per ISA and precision, and DGEMM)
and every bandwidth roof (per memory level) is drawn and labelled with its
value and confidence interval; crosses mark the ridge points where the
bandwidth roofs meet the compute peak. Each point carries its confidence
interval as an error bar; a triangle marks a memory-bound point, a square a
compute-bound one; hollow markers are analytic points, red ones flagged
points (above their roof, multiplexed counters, ...). Above ` + strconv.Itoa(chart.MaxPointLabels) + ` points
the image chart draws small unlabelled markers without CI bars, and says so
on stderr (labels would smear into a blob).

POINT.json files are written by 'rprof run --json'; each holds one point or
a set of points. Points with an unknown or zero intensity or performance
cannot sit on log axes: they are left out with a note on stderr. The roofs
drawn are those of one thread scope (--threads, else the first point's);
points measured with another thread count are drawn but not placed.
Points measured on another machine than the roofs (CPU, cores, host) are
flagged foreign-roofs, drawn red, with a note.

The output format follows the file extension of -o: .png, .svg or .pdf.
--ascii prints a text chart to stdout instead (or as well), for terminals
without an image viewer; it fits 80 columns.

`,
	Run: runPlot,
}

func runPlot(ctx context.Context, e *env, args []string) error {
	fset := newFlagSet(e, "plot")
	var draw drawFlags
	draw.register(fset)
	out := fset.String("o", "", "write the chart to `FILE` (.png, .svg or .pdf)")
	fset.StringVar(&draw.title, "title", "", "chart title `TEXT` (default: CPU, thread scope and date)")
	ascii := fset.Bool("ascii", false, "print a text chart to stdout (80 columns)")
	size := fset.String("size", "9x6", "image size in inches, `WxH` (PNG at 120 dots per inch)")
	files, err := parseInterspersed(fset, args)
	if err != nil {
		return err
	}
	width, height, err := parseSize(*size)
	if err != nil {
		return err
	}
	if *out == "" && !*ascii {
		return usagef("no output: give -o FILE (.png, .svg or .pdf) or --ascii")
	}
	if *out != "" {
		if _, err := chart.FormatOf(*out); err != nil {
			return usagef("-o %v", err)
		}
	}
	in, err := draw.load(e, "plot", *out, files)
	if err != nil {
		return err
	}
	opts := draw.options()
	opts.Width, opts.Height = width, height
	if *ascii {
		notes, err := chart.WriteText(e.stdout, in.Roofs, in.Points, opts)
		if err != nil {
			return err
		}
		if *out == "" {
			printNotes(e, "plot", notes)
		}
	}
	if *out != "" {
		notes, err := chart.Write(ctx, *out, in.Roofs, in.Points, opts)
		if err != nil {
			return err
		}
		printNotes(e, "plot", notes)
		fmt.Fprintf(e.stderr, "rprof plot: wrote %s\n", *out)
	}
	return nil
}

// parseSize reads --size: "WxH" in inches, each between 2 and 40.
func parseSize(s string) (w, h vg.Length, err error) {
	ws, hs, ok := strings.Cut(s, "x")
	wi, werr := strconv.ParseFloat(ws, 64)
	hi, herr := strconv.ParseFloat(hs, 64)
	if !ok || werr != nil || herr != nil {
		return 0, 0, usagef("--size %q: want WIDTHxHEIGHT in inches, e.g. 9x6", s)
	}
	if wi < 2 || hi < 2 || wi > 40 || hi > 40 {
		return 0, 0, usagef("--size %q: width and height must be between 2 and 40 inches", s)
	}
	return vg.Length(wi) * vg.Inch, vg.Length(hi) * vg.Inch, nil
}

func printNotes(e *env, cmd string, notes []string) {
	for _, n := range notes {
		fmt.Fprintf(e.stderr, "rprof %s: note: %s\n", cmd, n)
	}
}

// drawFlags are the flags plot and report share: the roofs drawn (the
// CPU's or a GPU's), their scope, how many and the title; each command
// words its own --title.
type drawFlags struct {
	roofs, title          string
	threads, device       int
	theoretical, allRoofs bool
	onGPU                 bool
}

func (f *drawFlags) register(fset *flag.FlagSet) {
	fset.StringVar(&f.roofs, "roofs", "", "roofs document `FILE` (default: the one 'rprof roofs' wrote, if any)")
	fset.IntVar(&f.threads, "threads", 0, "thread scope of the roofs to draw, `N` threads (default: the points')")
	fset.BoolVar(&f.theoretical, "theoretical", false, "also draw each compute roof's theoretical peak, dashed")
	fset.BoolVar(&f.allRoofs, "all-roofs", false, "draw every compute roof (default: per precision the best FMA and scalar roofs, and DGEMM)")
	fset.BoolVar(&f.onGPU, "gpu", false, "draw the GPU's roofs ('rprof roofs --gpu') instead of the CPU's, as one scope")
	fset.IntVar(&f.device, "device", 0, "with --gpu: the GPU, by the driver's index `N`")
}

// options are the chart's options of the flags.
func (f *drawFlags) options() chart.Options {
	return chart.Options{Threads: f.threads, Theoretical: f.theoretical, AllRoofs: f.allRoofs, Title: f.title}
}

// load checks the flags and the output out, then reads what plot and
// report draw (docfile.LoadDrawing) from the roofs and the point files,
// the GPU's roofs when asked, checks the thread scope before anything is
// drawn, and prints the notes.
func (f *drawFlags) load(e *env, cmd, out string, files []string) (*docfile.Drawing, error) {
	if f.threads < 0 {
		return nil, usagef("--threads %d: want a positive thread count", f.threads)
	}
	if err := checkOutputs([]string{out}, append(files, docfile.RoofsInput(f.roofs))...); err != nil {
		return nil, err
	}
	d, err := docfile.LoadDrawing(f.roofs, files)
	if err != nil {
		return nil, &exitError{code: exitUsage, err: err}
	}
	if d.Roofs == nil && len(d.Points) == 0 {
		return nil, usagef("no points and no roofs: give POINT.json files or --roofs FILE (or run 'rprof roofs' first)")
	}
	if err := selectGPU(d, f.onGPU, f.device, &f.title); err != nil {
		return nil, err
	}
	// A scope the roofs lack is a bad command line, found before drawing.
	if _, err := chart.ThreadScope(d.Roofs, d.Points, f.threads); err != nil {
		return nil, &exitError{code: exitUsage, err: err}
	}
	var notes []string
	if d.Missing != "" {
		notes = append(notes, fmt.Sprintf("no roofs at %s (run 'rprof roofs' or give --roofs): drawing points only", d.Missing))
	}
	drawn := "no roofs"
	if d.Roofs != nil {
		drawn = d.RoofsPath
	}
	for _, o := range d.OtherRoofs {
		notes = append(notes, fmt.Sprintf("point %q was placed under %s, not the roofs drawn (%s): --roofs %s draws it under its own", o.Label, o.RoofsFile, drawn, o.RoofsFile))
	}
	printNotes(e, cmd, append(notes, d.Foreign...))
	return d, nil
}

// parseInterspersed parses flags that may come before, between or after
// the file arguments ("rprof plot a.json -o x.png"), returning the files.
func parseInterspersed(fset *flag.FlagSet, args []string) ([]string, error) {
	var files []string
	for {
		if err := parseFlags(fset, args); err != nil {
			return nil, err
		}
		rest := fset.Args()
		if len(rest) == 0 {
			return files, nil
		}
		// "--" ends the flags; flag.Parse has consumed it.
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			return append(files, rest...), nil
		}
		files = append(files, rest[0])
		args = rest[1:]
	}
}
