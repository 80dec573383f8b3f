package roofline

import (
	"fmt"
	"slices"
	"strings"
)

// FlagForeignRoofs: the roofs a point is placed under were measured on
// another machine (another CPU or core count), or on another host of the
// same kind.
const FlagForeignRoofs = "foreign-roofs"

// MachineMatch is how the machine a roofs document (or a baseline point)
// was measured on compares with another (a point's, or the machine rprof
// describes): the one rule that says whether two machines are the same,
// for the foreign-roofs flag (Foreign), for taking a document's effective
// cache sizes (SameCPU) and for the regression gate's choice between time
// and fractions of attainable. Fields either side leaves empty are not
// compared, nor is rprof's name for the microarchitecture, which versions
// of rprof may infer differently on one CPU.
type MachineMatch struct {
	// Diffs say how the CPUs (model name, else vendor, family and model)
	// and the core counts differ.
	Diffs []string
	// OtherCPU and OtherCores say which of the two Diffs found.
	OtherCPU, OtherCores bool
	// CPUKnown: both name their CPU, by model name or by vendor, family
	// and model, so that an empty Diffs means the same CPU, not an unknown
	// one.
	CPUKnown bool
	// RoofsHost and Host are the host names when they differ.
	RoofsHost, Host string
}

// CompareMachines compares the machine roofs were measured on with here.
func CompareMachines(roofs, here Machine) MachineMatch {
	var m MachineMatch
	a, b := roofs.CPU, here.CPU
	switch {
	case a.ModelName != "" && b.ModelName != "":
		m.CPUKnown = true
		if a.ModelName != b.ModelName {
			m.OtherCPU = true
			m.Diffs = append(m.Diffs, fmt.Sprintf("CPU %q, not %q", a.ModelName, b.ModelName))
		}
	case a.Vendor != "" && b.Vendor != "":
		m.CPUKnown = true
		if a.Vendor != b.Vendor || a.Family != b.Family || a.Model != b.Model {
			m.OtherCPU = true
			m.Diffs = append(m.Diffs, fmt.Sprintf("CPU %s family %d model %d, not %s family %d model %d", a.Vendor, a.Family, a.Model, b.Vendor, b.Family, b.Model))
		}
	}
	if roofs.Cores > 0 && here.Cores > 0 && roofs.Cores != here.Cores {
		m.OtherCores = true
		m.Diffs = append(m.Diffs, fmt.Sprintf("%d cores, not %d", roofs.Cores, here.Cores))
	}
	if roofs.Hostname != "" && here.Hostname != "" && roofs.Hostname != here.Hostname {
		m.RoofsHost, m.Host = roofs.Hostname, here.Hostname
	}
	return m
}

// SameCPU says that the roofs were measured on this CPU with as many
// cores, so that the cache sizes they measured describe here's caches (on
// whatever host: caches are the CPU's).
func (m MachineMatch) SameCPU() bool { return m.CPUKnown && len(m.Diffs) == 0 }

// Foreign says how here differs from the machine the roofs were measured
// on, or "" when it does not (or neither says).
func (m MachineMatch) Foreign() string {
	switch {
	case len(m.Diffs) > 0:
		return "the roofs were measured on another machine: " + strings.Join(m.Diffs, ", ") + "; the point's place under them says nothing about its own machine"
	case m.RoofsHost != "":
		return fmt.Sprintf("the roofs were measured on host %s, the point on %s (same CPU and cores): other hosts of a kind may differ in memory and clocks", m.RoofsHost, m.Host)
	}
	return ""
}

// ForeignRoofs says how the machine a point was measured on (here) differs
// from the one its roofs were measured on, or "" when it does not
// (CompareMachines(roofs, here).Foreign()).
func ForeignRoofs(roofs, here Machine) string { return CompareMachines(roofs, here).Foreign() }

// MarkForeign flags p as placed (measure, dnn) or drawn (plot, report)
// under roofs r of another machine, unless it carries the flag already;
// it returns why, or "".
func MarkForeign(p *Point, r *Roofs) string {
	why := ForeignRoofs(r.Machine, p.Machine)
	if why == "" || slices.ContainsFunc(p.Flags, func(f Flag) bool { return f.Code == FlagForeignRoofs }) {
		return ""
	}
	p.Flags = append(p.Flags, Flag{Code: FlagForeignRoofs, Subject: SubjectPlacement, Message: why})
	return why
}
