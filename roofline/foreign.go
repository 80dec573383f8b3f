package roofline

import "fmt"

// FlagForeignRoofs: the roofs a point is placed under were measured on
// another machine (another CPU or core count), or on another host of the
// same kind.
const FlagForeignRoofs = "foreign-roofs"

// ForeignRoofs says how the machine a point was measured on (here) differs
// from the one its roofs were measured on, or "" when it does not. Fields
// either document leaves empty are not compared.
func ForeignRoofs(roofs, here Machine) string {
	var diffs []string
	a, b := roofs.CPU, here.CPU
	switch {
	case a.ModelName != "" && b.ModelName != "" && a.ModelName != b.ModelName:
		diffs = append(diffs, fmt.Sprintf("CPU %q, not %q", a.ModelName, b.ModelName))
	case a.Vendor != "" && b.Vendor != "" && (a.Vendor != b.Vendor || a.Family != b.Family || a.Model != b.Model):
		diffs = append(diffs, fmt.Sprintf("CPU %s family %d model %d, not %s family %d model %d", a.Vendor, a.Family, a.Model, b.Vendor, b.Family, b.Model))
	}
	if roofs.Cores > 0 && here.Cores > 0 && roofs.Cores != here.Cores {
		diffs = append(diffs, fmt.Sprintf("%d cores, not %d", roofs.Cores, here.Cores))
	}
	if len(diffs) == 0 && roofs.Hostname != "" && here.Hostname != "" && roofs.Hostname != here.Hostname {
		return fmt.Sprintf("the roofs were measured on host %s, the point on %s (same CPU and cores): other hosts of a kind may differ in memory and clocks", roofs.Hostname, here.Hostname)
	}
	if len(diffs) == 0 {
		return ""
	}
	s := "the roofs were measured on another machine: " + diffs[0]
	for _, d := range diffs[1:] {
		s += ", " + d
	}
	return s + "; the point's place under them says nothing about its own machine"
}
