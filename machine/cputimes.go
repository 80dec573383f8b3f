package machine

import (
	"fmt"
	"io/fs"
	"strconv"
	"strings"
)

// CPUTimes is the whole machine's CPU time by state, summed over its CPUs,
// from the "cpu" line of /proc/stat, in the kernel's USER_HZ ticks.
type CPUTimes struct {
	// Busy is user, nice, system, irq and softirq time (guest time is
	// inside user); Idle is idle and iowait time; Steal is the time the
	// hypervisor ran something else while a vCPU wanted to run.
	Busy, Idle, Steal uint64
}

// ReadCPUTimes reads the machine's CPU times from procfs, a file system
// rooted like /proc.
func ReadCPUTimes(procfs fs.FS) (CPUTimes, error) {
	b, err := fs.ReadFile(procfs, "stat")
	if err != nil {
		return CPUTimes{}, err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return CPUTimes{}, fmt.Errorf("read stat: first line %q is not the cpu line: %w", line, ErrMalformed)
	}
	var v [8]uint64 // user nice system idle iowait irq softirq steal
	for i := range v {
		if v[i], err = strconv.ParseUint(f[i+1], 10, 64); err != nil {
			return CPUTimes{}, fmt.Errorf("read stat: %q: %w", f[i+1], ErrMalformed)
		}
	}
	return CPUTimes{Busy: v[0] + v[1] + v[2] + v[5] + v[6], Idle: v[3] + v[4], Steal: v[7]}, nil
}

// Sub is the CPU time spent from earlier to t. A count that went back (the
// kernel's iowait accounting may) reads as 0.
func (t CPUTimes) Sub(earlier CPUTimes) CPUTimes {
	d := func(a, b uint64) uint64 {
		if a < b {
			return 0
		}
		return a - b
	}
	return CPUTimes{Busy: d(t.Busy, earlier.Busy), Idle: d(t.Idle, earlier.Idle), Steal: d(t.Steal, earlier.Steal)}
}

// IdleShare is the share of the CPU time that was idle (0 when no time
// passed).
func (t CPUTimes) IdleShare() float64 {
	all := t.Busy + t.Idle + t.Steal
	if all == 0 {
		return 0
	}
	return float64(t.Idle) / float64(all)
}
