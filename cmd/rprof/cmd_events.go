package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/rprof/rprof/cmd/rprof/internal/advice"
	"github.com/rprof/rprof/cmd/rprof/internal/render"
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
/sys and /proc (both default to this machine's); given here or before the
command, as every command takes them. A missing, unreadable or partial
tree exits 2.

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
	fs.StringVar(&m.sysfs, "sysfs", machine.DefaultSysfs, "root `DIR` of the sysfs tree to read")
	fs.StringVar(&m.procfs, "procfs", machine.DefaultProcfs, "root `DIR` of the procfs tree to read")
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
	if err := m.checkTrees(); err != nil {
		return nil, err
	}
	return machine.NewHost(m.sysfs, m.procfs), nil
}

// checkTrees checks that both directories are there, before
// machine.NewHost opens them.
func (m *machineFlags) checkTrees() error {
	for _, d := range []struct{ flag, dir string }{{"--sysfs", m.sysfs}, {"--procfs", m.procfs}} {
		st, err := os.Stat(d.dir)
		if err != nil {
			return usagef("%s %s: no such directory", d.flag, d.dir)
		}
		if !st.IsDir() {
			return usagef("%s %s: not a directory", d.flag, d.dir)
		}
	}
	return nil
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
	fset.BoolVar(&asJSON, "json", false, "write JSON instead of text")
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
	plan, err := pmu.LoadPlan(h)
	if err != nil {
		return m.treeError(err)
	}
	if asJSON {
		doc := render.EventsJSON(plan)
		doc.Problems, doc.Details = problemsDoc(plan.Problems)
		return writeJSON(e.stdout, doc)
	}
	return render.WriteEventsText(e.stdout, plan, advice.Problem)
}

func problemsDoc(ps []pmu.Problem) ([]string, []render.ProblemJSON) {
	lines, details := []string{}, []render.ProblemJSON{}
	for _, pr := range ps {
		lines = append(lines, advice.ProblemLine(pr))
		details = append(details, render.ProblemJSON{Code: pr.Code, What: pr.What, Fix: advice.Problem(pr)})
	}
	return lines, details
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
