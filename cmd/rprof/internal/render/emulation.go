package render

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/rprof/rprof/measure/emulate"
	"github.com/rprof/rprof/roofline"

	"github.com/rprof/rprof/internal/unit"
)

// writeInterleavedAdvice says, when flags hold roofline.FlagInterleaved,
// how to get a modelled Q that repeats: one thread per process.
func writeInterleavedAdvice(w io.Writer, indent string, flags []roofline.Flag) {
	if slices.ContainsFunc(flags, func(f roofline.Flag) bool { return f.Code == roofline.FlagInterleaved }) {
		fmt.Fprintf(w, "%sQ depends on how the threads interleaved, so it differs between identical runs; for a Q that repeats to the byte (a baseline gated with no tolerance), count the target on one thread: OMP_NUM_THREADS=1, or its own thread setting\n", indent)
	}
}

// shownFunctions is how many functions the summary lists.
const shownFunctions = 10

// writeEmulation prints how an emulated point was counted: the emulator,
// the traffic between each pair of levels (the cache-aware roofline's
// intensities) and the functions doing the most work.
func writeEmulation(w io.Writer, p *roofline.Point, line func(value, unit, what, detail string)) {
	em := p.Emulation
	if em == nil {
		return
	}
	fmt.Fprintf(w, "\n  counted by %s (plugin API %d), %s; %s, %s; emulated run %.2f s\n",
		em.Emulator, em.PluginAPI, em.ISA, Plural(em.Images, "process image"), Plural(em.Threads, "thread"), em.Seconds)
	if c := em.CPU; c != nil && c.Vendor != "" {
		fmt.Fprintf(w, "  the target saw %s family %d model %d (%s) with QEMU's features", c.Vendor, c.Family, c.Model, c.Brand)
		if len(c.NotEmulated) > 0 {
			fmt.Fprintf(w, ", without %s", emulate.CPU{NotEmulated: c.NotEmulated}.NotEmulatedSummary())
		}
		fmt.Fprintln(w)
	} else if c != nil {
		fmt.Fprintf(w, "  the target saw QEMU's %s CPU model\n", c.QEMUOption)
	}
	writeInterleavedAdvice(w, "  ", p.Flags)
	// The widths and the functions are the target's run; W, Q and the
	// levels above them are net of the overhead run.
	gross := ""
	if p.Overhead != nil && len(p.Overhead.Command) > 0 {
		gross = " (the target's run, the overhead run not subtracted)"
	}
	var widths []string
	for _, k := range []string{"scalar", "128", "256", "x87"} {
		if v, ok := em.WorkByWidth[k]; ok {
			name := k
			if k == "128" || k == "256" {
				name = k + "-bit"
			}
			widths = append(widths, name+" "+unit.Count(v))
		}
	}
	if len(widths) > 0 {
		fmt.Fprintf(w, "  work by width%s: %s FLOP\n", gross, strings.Join(widths, ", "))
	}
	if len(p.Levels) > 0 {
		fmt.Fprintf(w, "\n  traffic between levels (modelled: %s, from %s):\n", em.CacheModel, em.CacheModelSource)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "  \tlevels\tread B\twrite B\tFLOP/B\t\n")
		for _, l := range p.Levels {
			fmt.Fprintf(tw, "  \t%s-%s\t%s\t%s\t%s\t\n", l.Upper, l.Lower, unit.Count(l.ReadBytes), unit.Count(l.WriteBytes), OrUnknown(l.Intensity, unit.Value))
		}
		tw.Flush()
	}
	if len(p.Functions) > 0 {
		fmt.Fprintf(w, "\n  top functions (FLOPs, then DRAM bytes)%s:\n", gross)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "  \tFLOP\tDRAM B\tFLOP/B\tfunction\n")
		for i, f := range p.Functions {
			if i == shownFunctions {
				fmt.Fprintf(tw, "  \t\t\t\t(%d more in the point document)\n", len(p.Functions)-i)
				break
			}
			name := f.Name
			if f.Object != "" {
				name += " (" + f.Object + ")"
			}
			fmt.Fprintf(tw, "  \t%s\t%s\t%s\t%s\n", unit.Count(f.WorkFlops), unit.Count(f.TrafficBytes), OrUnknown(f.Intensity, unit.Value), name)
		}
		tw.Flush()
	}
}
