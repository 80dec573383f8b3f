package render

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/rprof/rprof/internal/kfs"
	"github.com/rprof/rprof/machine"
	"github.com/rprof/rprof/pmu"
)

// EventsDoc is the JSON of rprof events.
type EventsDoc struct {
	CPU      CPUJSON       `json:"cpu"`
	Counters int           `json:"counters_per_thread"`
	Work     []WorkJSON    `json:"work"`
	Traffic  []TrafficJSON `json:"traffic"`
	Problems []string      `json:"problems"`
	Details  []ProblemJSON `json:"problem_details"`
}

type CPUJSON struct {
	Vendor    string `json:"vendor"`
	Family    int    `json:"family"`
	Model     int    `json:"model"`
	Stepping  int    `json:"stepping"`
	ModelName string `json:"model_name,omitempty"`
	Microarch string `json:"microarch"`
	// MicroarchSource is "model" or "features" (machine.Identity).
	MicroarchSource string `json:"microarch_source,omitempty"`
	MicroarchNote   string `json:"microarch_note,omitempty"`
	PerfKey         string `json:"perf_key"`
}

type WorkJSON struct {
	Name          string  `json:"name"`
	PMU           string  `json:"pmu"`
	Type          uint32  `json:"type"`
	Config        string  `json:"config"`
	Config1       string  `json:"config1,omitempty"`
	FlopsPerCount float64 `json:"flops_per_count"`
	Precision     string  `json:"precision"`
	Group         int     `json:"group"`
	Counters      int     `json:"counters"`
	Source        string  `json:"source"`
	Unverified    string  `json:"unverified,omitempty"`
}

type TrafficJSON struct {
	Name          string  `json:"name"`
	PMU           string  `json:"pmu"`
	Type          uint32  `json:"type"`
	Config        string  `json:"config"`
	Config1       string  `json:"config1,omitempty"`
	BytesPerCount float64 `json:"bytes_per_count"`
	Direction     string  `json:"direction"`
	CPUs          []int   `json:"cpus"`
	Alias         string  `json:"alias,omitempty"`
	Terms         string  `json:"terms"`
	Source        string  `json:"source"`
	Unverified    string  `json:"unverified,omitempty"`
}

type ProblemJSON struct {
	Code string `json:"code"`
	What string `json:"what"`
	Fix  string `json:"fix,omitempty"`
}

func hex(v uint64) string { return "0x" + strconv.FormatUint(v, 16) }

func hexOmit(v uint64) string {
	if v == 0 {
		return ""
	}
	return hex(v)
}

func CPUDoc(p pmu.Plan) CPUJSON {
	return CPUJSON{
		Vendor: p.CPU.Vendor, Family: p.CPU.Family, Model: p.CPU.Model, Stepping: p.CPU.Stepping,
		ModelName: p.CPU.ModelName, Microarch: p.Identity.Microarch, MicroarchSource: p.Identity.Source,
		MicroarchNote: p.Identity.Note, PerfKey: p.CPU.PerfKey(),
	}
}

// EventsJSON is the plan's document; the command adds the problems with
// their fixes.
func EventsJSON(p pmu.Plan) EventsDoc {
	doc := EventsDoc{
		CPU: CPUDoc(p), Counters: p.Counters,
		Work: []WorkJSON{}, Traffic: []TrafficJSON{}, Problems: []string{}, Details: []ProblemJSON{},
	}
	for gi, g := range p.Groups() {
		for _, w := range g {
			doc.Work = append(doc.Work, WorkJSON{
				Name: w.Name, PMU: w.PMU, Type: w.Attr.Type, Config: hex(w.Attr.Config), Config1: hexOmit(w.Attr.Config1),
				FlopsPerCount: w.FlopsPerCount, Precision: w.Precision, Group: gi + 1, Counters: w.Slots,
				Source: w.Source, Unverified: w.Unverified,
			})
		}
	}
	for _, t := range p.Traffic {
		doc.Traffic = append(doc.Traffic, TrafficJSON{
			Name: t.Name, PMU: t.PMU, Type: t.Attr.Type, Config: hex(t.Attr.Config), Config1: hexOmit(t.Attr.Config1),
			BytesPerCount: t.BytesPerCount, Direction: t.Direction, CPUs: t.CPUs, Alias: t.Alias, Terms: t.Terms,
			Source: t.Source, Unverified: t.Unverified,
		})
	}
	return doc
}

// sourceIndex numbers distinct sources in order of first use, for the
// footnotes under the tables.
type sourceIndex struct{ names []string }

func (s *sourceIndex) ref(name string) string {
	i := slices.Index(s.names, name)
	if i < 0 {
		s.names = append(s.names, name)
		i = len(s.names) - 1
	}
	return "[" + strconv.Itoa(i+1) + "]"
}

func WriteEventsText(w io.Writer, p pmu.Plan, fix func(pmu.Problem) string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "CPU: %s\n", CPULine(p))
	var src sourceIndex
	groups := p.Groups()
	if len(p.Work) == 0 {
		b.WriteString("\nFP work W: no events (see problems)\n")
	} else {
		limit := "no counter limit recorded"
		if p.Counters > 0 {
			limit = fmt.Sprintf("%d counters per thread", p.Counters)
		}
		fmt.Fprintf(&b, "\nFP work W = sum of count x FLOPs/count; counted per process, %s in %s (%s):\n", Plural(len(p.Work), "event"), Plural(len(groups), "group"), limit)
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  group\tevent\tpmu\ttype\tconfig\tFLOPs/count\tprecision\tsource")
		for gi, g := range groups {
			for _, e := range g {
				fmt.Fprintf(tw, "  %d\t%s\t%s\t%d\t%s\t%g\t%s\t%s\n", gi+1, markUnverified(e.Name, e.Unverified), e.PMU, e.Attr.Type, configText(e.Attr), e.FlopsPerCount, e.Precision, src.ref(e.Source))
			}
		}
		tw.Flush()
	}
	if len(p.Traffic) == 0 {
		b.WriteString("\nDRAM traffic Q: no events (see problems)\n")
	} else {
		fmt.Fprintf(&b, "\nDRAM traffic Q = sum of count x bytes/count; counted system-wide, one counter per box on each CPU listed (%s):\n", Plural(len(p.Traffic), "event"))
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  event\tpmu\ttype\tconfig\tbytes/count\tdirection\tcpus\tencoded from\tsource")
		for _, t := range p.Traffic {
			from := "raw " + t.Terms
			if t.Alias != "" {
				from = "kernel alias"
			}
			fmt.Fprintf(tw, "  %s\t%s\t%d\t%s\t%g\t%s\t%s\t%s\t%s\n", markUnverified(t.Name, t.Unverified), t.PMU, t.Attr.Type, configText(t.Attr), t.BytesPerCount, t.Direction, kfs.FormatList(t.CPUs), from, src.ref(t.Source))
		}
		tw.Flush()
	}
	if len(src.names) > 0 {
		b.WriteString("\nSources:\n")
		for i, s := range src.names {
			fmt.Fprintf(&b, "  [%d] %s\n", i+1, s)
		}
	}
	WriteProblems(&b, p.Problems, fix)
	_, err := io.WriteString(w, b.String())
	return err
}

func CPULine(p pmu.Plan) string {
	c := p.CPU
	id := fmt.Sprintf("%s family %d model %#x stepping %d", c.Vendor, c.Family, c.Model, c.Stepping)
	if c.Arm {
		id = fmt.Sprintf("%s part %#x (MIDR %s)", c.Vendor, c.Part, c.PerfKey())
	}
	if c.ModelName != "" {
		id += " (" + c.ModelName + ")"
	}
	switch p.Identity.Source {
	case "":
		return id + ", microarchitecture unknown"
	case machine.IdentityFeatures:
		return id + ", microarchitecture " + p.Identity.Microarch + " (from its features: " + p.Identity.Note + ")"
	}
	return id + ", microarchitecture " + p.Identity.Microarch + " (from its model)"
}

// markUnverified flags an event whose entry the sources do not confirm.
func markUnverified(name, unverified string) string {
	if unverified != "" {
		return name + " (UNVERIFIED)"
	}
	return name
}

func configText(a pmu.Attr) string {
	s := hex(a.Config)
	if a.Config1 != 0 {
		s += " config1=" + hex(a.Config1)
	}
	return s
}

func WriteProblems(b *strings.Builder, ps []pmu.Problem, fix func(pmu.Problem) string) {
	if len(ps) == 0 {
		b.WriteString("\nProblems: none\n")
		return
	}
	b.WriteString("\nProblems:\n")
	for _, pr := range ps {
		fmt.Fprintf(b, "  - %s\n", pr.What)
		if f := fix(pr); f != "" {
			fmt.Fprintf(b, "    fix: %s\n", f)
		}
	}
}
