package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/rprof/rprof/cmd/rprof/internal/render"
	"github.com/rprof/rprof/internal/kfs"
	"github.com/rprof/rprof/machine"
	"github.com/rprof/rprof/pmu"
)

var cmdEvents = &command{
	Name:      "events",
	UsageLine: "rprof events [--json] [--sysfs DIR] [--procfs DIR]",
	Short:     "the counters rprof would use on this machine",
	Long: `
Events lists the hardware events rprof counts on this machine: the core
events whose counts, times their weight, give the floating-point work W,
and the memory-controller events whose counts, times their bytes, give the
DRAM traffic Q. For each it shows the PMU, the perf_event_attr type and
config (hex), the weight, the CPUs system-wide events are opened on, and
the source of the encoding. It then lists what cannot be counted and why,
with the fix, and every entry the sources do not confirm (UNVERIFIED).

--sysfs and --procfs read a tree captured on another machine instead of
/sys and /proc (both default to this machine's). A missing, unreadable or
partial tree exits 2.

  --json          write the list as JSON
  --sysfs DIR     root of the sysfs tree (default /sys)
  --procfs DIR    root of the procfs tree (default /proc)
`,
	Run: runEvents,
}

// machineFlags are the roots of the sysfs and procfs trees: the global
// --sysfs and --procfs, which events and doctor also take after their name.
type machineFlags struct {
	sysfs, procfs string
}

// register defines events' and doctor's own --sysfs and --procfs, which
// default to the global flags' trees (the help says /sys and /proc).
func (m *machineFlags) register(fs *flag.FlagSet, global machineFlags) {
	fs.StringVar(&m.sysfs, "sysfs", machine.DefaultSysfs, "root of the sysfs `tree` to inspect")
	fs.StringVar(&m.procfs, "procfs", machine.DefaultProcfs, "root of the procfs `tree` to inspect")
	*m = global
}

// live reports whether the trees are this machine's own, so that events
// can be probed by opening them.
func (m *machineFlags) live() bool {
	return m.sysfs == machine.DefaultSysfs && m.procfs == machine.DefaultProcfs
}

// host is the machine the trees describe: the command's own host when they
// are the global flags' trees, else one built from them.
func (m *machineFlags) host(e *env) (*machine.Host, error) {
	if h := e.machine(); *m == e.roots {
		return h, nil
	}
	if _, _, err := m.trees(); err != nil {
		return nil, err
	}
	return machine.NewHost(m.sysfs, m.procfs), nil
}

// trees checks both directories and opens them.
func (m *machineFlags) trees() (sysfs, procfs fs.FS, err error) {
	for _, d := range []struct{ flag, dir string }{{"--sysfs", m.sysfs}, {"--procfs", m.procfs}} {
		st, err := os.Stat(d.dir)
		if err != nil {
			return nil, nil, usagef("%s %s: no such directory", d.flag, d.dir)
		}
		if !st.IsDir() {
			return nil, nil, usagef("%s %s: not a directory", d.flag, d.dir)
		}
	}
	return os.DirFS(m.sysfs), os.DirFS(m.procfs), nil
}

// treeError names the trees an unreadable or partial tree came from. A
// tree given on the command line is bad input (exit 2); this machine's own
// /sys and /proc failing is rprof's failure (exit 125).
func (m *machineFlags) treeError(err error) error {
	if m.live() {
		return &exitError{code: exitInternal, err: fmt.Errorf("read this machine's /sys and /proc: %w", err)}
	}
	return usagef("read machine (sysfs %s, procfs %s): %v", m.sysfs, m.procfs, err)
}

// parseMachineCommand parses the flags events and doctor share: --json and
// the machine's trees, with no arguments.
func parseMachineCommand(e *env, name string, args []string) (asJSON bool, m machineFlags, err error) {
	fset := newFlagSet(e, name)
	fset.BoolVar(&asJSON, "json", false, "write JSON")
	m.register(fset, e.machineRoots())
	if err := parseFlags(fset, args); err != nil {
		return false, m, err
	}
	if fset.NArg() > 0 {
		return false, m, usagef("unexpected argument %q", fset.Arg(0))
	}
	return asJSON, m, nil
}

func runEvents(ctx context.Context, e *env, args []string) error {
	asJSON, m, err := parseMachineCommand(e, "events", args)
	if err != nil {
		return err
	}
	h, err := m.host(e)
	if err != nil {
		return err
	}
	plan, err := pmu.LoadPlan(h.Sysfs, h.Procfs)
	if err != nil {
		return m.treeError(err)
	}
	if asJSON {
		return writeJSON(e.stdout, eventsJSON(plan))
	}
	return writeEventsText(e.stdout, plan)
}

// eventsDoc is the JSON of rprof events.
type eventsDoc struct {
	CPU      cpuJSON       `json:"cpu"`
	Counters int           `json:"counters_per_thread"`
	Work     []workJSON    `json:"work"`
	Traffic  []trafficJSON `json:"traffic"`
	Problems []string      `json:"problems"`
	Details  []problemJSON `json:"problem_details"`
}

type cpuJSON struct {
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

type workJSON struct {
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

type trafficJSON struct {
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

type problemJSON struct {
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

func cpuDoc(p pmu.Plan) cpuJSON {
	return cpuJSON{
		Vendor: p.CPU.Vendor, Family: p.CPU.Family, Model: p.CPU.Model, Stepping: p.CPU.Stepping,
		ModelName: p.CPU.ModelName, Microarch: p.Identity.Microarch, MicroarchSource: p.Identity.Source,
		MicroarchNote: p.Identity.Note, PerfKey: p.CPU.PerfKey(),
	}
}

func eventsJSON(p pmu.Plan) eventsDoc {
	doc := eventsDoc{
		CPU: cpuDoc(p), Counters: p.Counters,
		Work: []workJSON{}, Traffic: []trafficJSON{}, Problems: []string{}, Details: []problemJSON{},
	}
	for gi, g := range p.Groups() {
		for _, w := range g {
			doc.Work = append(doc.Work, workJSON{
				Name: w.Name, PMU: w.PMU, Type: w.Attr.Type, Config: hex(w.Attr.Config), Config1: hexOmit(w.Attr.Config1),
				FlopsPerCount: w.FlopsPerCount, Precision: w.Precision, Group: gi + 1, Counters: w.Slots,
				Source: w.Source, Unverified: w.Unverified,
			})
		}
	}
	for _, t := range p.Traffic {
		doc.Traffic = append(doc.Traffic, trafficJSON{
			Name: t.Name, PMU: t.PMU, Type: t.Attr.Type, Config: hex(t.Attr.Config), Config1: hexOmit(t.Attr.Config1),
			BytesPerCount: t.BytesPerCount, Direction: t.Direction, CPUs: t.CPUs, Alias: t.Alias, Terms: t.Terms,
			Source: t.Source, Unverified: t.Unverified,
		})
	}
	doc.Problems, doc.Details = problemsDoc(p.Problems)
	return doc
}

func problemsDoc(ps []pmu.Problem) ([]string, []problemJSON) {
	lines, details := []string{}, []problemJSON{}
	for _, pr := range ps {
		lines = append(lines, problemLine(pr))
		details = append(details, problemJSON{Code: pr.Code, What: pr.What, Fix: problemFix(pr)})
	}
	return lines, details
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
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

func writeEventsText(w io.Writer, p pmu.Plan) error {
	var b strings.Builder
	fmt.Fprintf(&b, "CPU: %s\n", cpuLine(p))
	var src sourceIndex
	groups := p.Groups()
	if len(p.Work) == 0 {
		b.WriteString("\nFP work W: no events (see problems)\n")
	} else {
		limit := "no counter limit recorded"
		if p.Counters > 0 {
			limit = fmt.Sprintf("%d counters per thread", p.Counters)
		}
		fmt.Fprintf(&b, "\nFP work W = sum of count x FLOPs/count; counted per process, %s in %s (%s):\n", render.Plural(len(p.Work), "event"), render.Plural(len(groups), "group"), limit)
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
		fmt.Fprintf(&b, "\nDRAM traffic Q = sum of count x bytes/count; counted system-wide, one counter per box on each CPU listed (%s):\n", render.Plural(len(p.Traffic), "event"))
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
	writeProblems(&b, p.Problems)
	_, err := io.WriteString(w, b.String())
	return err
}

func cpuLine(p pmu.Plan) string {
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

func writeProblems(b *strings.Builder, ps []pmu.Problem) {
	if len(ps) == 0 {
		b.WriteString("\nProblems: none\n")
		return
	}
	b.WriteString("\nProblems:\n")
	for _, pr := range ps {
		fmt.Fprintf(b, "  - %s\n", pr.What)
		if fix := problemFix(pr); fix != "" {
			fmt.Fprintf(b, "    fix: %s\n", fix)
		}
	}
}
