package main

import (
	"fmt"
	"strings"

	"github.com/rprof/rprof/doctor"
)

// roofsText gives the roofs lines of the doctor's table.
func roofsText(r doctor.Roofs) (kernelsLine, clockLine, cpusLine string) {
	switch {
	case r.Kernels == nil:
		kernelsLine = "not checked (captured tree)"
	case len(r.Kernels) == 0:
		kernelsLine = "none: rprof roofs has no compute roof here"
	default:
		kernelsLine = strings.Join(r.Kernels, ", ")
		if r.FMA {
			kernelsLine += "; FMA"
		}
	}
	if len(r.Skipped) > 0 {
		kernelsLine += fmt.Sprintf(" (%d skipped: %s)", len(r.Skipped), r.Skipped[0])
		if len(r.Skipped) > 1 {
			kernelsLine += ", ..."
		}
	}
	clockLine = "cpufreq cpuinfo_max_freq (theoretical peaks use it)"
	if r.Clock == "measured" {
		clockLine = "no cpufreq: rprof roofs measures the clock (a chain of dependent adds)"
	}
	switch {
	case r.Allowed == 0:
		cpusLine = fmt.Sprintf("%d online; allowed not checked (captured tree)", r.Online)
	case r.Allowed < r.Online:
		cpusLine = fmt.Sprintf("%d allowed of %d online (cpuset or taskset): roofs measures the allowed ones only", r.Allowed, r.Online)
	default:
		cpusLine = fmt.Sprintf("%d allowed, all online", r.Allowed)
	}
	return
}
