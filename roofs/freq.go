package roofs

import (
	"bufio"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/rprof/rprof/internal/affinity"
	"github.com/rprof/rprof/roofs/kernels"
)

// cpuMHz is the clock cpu runs at now: cpufreq's scaling_cur_freq of cpu,
// else timed with the clock kernel on cpu (a short probe: it runs right
// after a benchmark, with the core already busy and its clock up), else
// /proc/cpuinfo's "cpu MHz" (which in many VMs is the host's nominal clock,
// not what the core runs at). 0 when none works. It reads this kernel's
// trees, never Options.Host's: the clock is the one the benchmark ran at.
func cpuMHz(cpu int) float64 {
	root := os.DirFS("/")
	if khz, err := readFirstFloat(root, fmt.Sprintf("sys/devices/system/cpu/cpu%d/cpufreq/scaling_cur_freq", cpu)); err == nil {
		return khz / 1000
	}
	if mhz := clockMHzOn(cpu, afterBenchmark); mhz > 0 {
		return mhz
	}
	b, err := fs.ReadFile(root, "proc/cpuinfo")
	if err != nil {
		return 0
	}
	mhz, _ := cpuinfoMHz(string(b), cpu)
	return mhz
}

// clockProbe says how long to time the clock kernel: a warm-up that lets
// an idle core raise its clock, then the best of runs runs of about each.
type clockProbe struct {
	warmUp, each time.Duration
	runs         int
}

// The probes run pinned and warmed: unpinned and cold, a run is preempted
// or migrated, or its core still idle, and reads low. Many short runs beat
// a few long ones on a busy machine: a run is spoiled by any preemption
// inside it, so the shorter it is the likelier one of them runs undisturbed
// (docs/roofs.md).
var (
	// forPeaks is the one measurement theoretical peaks use.
	forPeaks = clockProbe{warmUp: 20 * time.Millisecond, each: time.Millisecond / 2, runs: 60}
	// afterBenchmark follows every compute and DGEMM invocation.
	afterBenchmark = clockProbe{warmUp: time.Millisecond, each: time.Millisecond / 2, runs: 10}
)

// clockMHz is the clock of the first CPU this process may use, measured
// for the theoretical peaks.
func clockMHz() float64 {
	allowed, err := affinity.Allowed()
	if err != nil || len(allowed) == 0 {
		return 0
	}
	return clockMHzOn(allowed[0], forPeaks)
}

// clockMHzOn times the clock kernel, a chain of dependent one-cycle adds
// of known length, pinned to cpu: cycles over seconds is the clock the
// core ran at. It keeps the best run, since a preempted run only looks
// slower. 0 where there is no clock kernel or cpu cannot be pinned.
func clockMHzOn(cpu int, p clockProbe) float64 {
	k, ok := kernels.ClockKernel()
	if !ok {
		return 0
	}
	restore, err := affinity.Pin(cpu)
	if err != nil {
		return 0
	}
	defer restore()
	// ~4e6 cycles per millisecond at 4 GHz.
	iters := max(1, int64(4e6*p.each.Seconds()*1e3/k.CyclesPerIter))
	for start := time.Now(); time.Since(start) < p.warmUp; {
		k.Run(iters / 4)
	}
	best := 0.0
	for range p.runs {
		start := time.Now()
		k.Run(iters)
		if s := time.Since(start).Seconds(); s > 0 {
			best = max(best, float64(iters)*k.CyclesPerIter/s/1e6)
		}
	}
	return best
}

// peakClock is the clock used for theoretical peaks and where it came
// from.
type peakClock struct {
	GHz    float64
	Source string
}

// nominalFrequency is the clock theoretical peaks use: cpufreq's
// cpuinfo_max_freq of the first CPU (the highest clock the kernel allows),
// else the clock measured by measureMHz (VMs have no cpufreq, and their
// /proc/cpuinfo shows the host's nominal clock, below what the cores run
// at), else cpuinfo's "cpu MHz". sysfs and procfs are rooted like /sys and
// /proc; measureMHz returns 0 when it cannot measure.
func nominalFrequency(sysfs, procfs fs.FS, measureMHz func() float64) (peakClock, error) {
	if khz, err := readFirstFloat(sysfs, "devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq"); err == nil && khz > 0 {
		return peakClock{GHz: khz / 1e6, Source: "cpufreq cpuinfo_max_freq"}, nil
	}
	if mhz := measureMHz(); mhz > 0 {
		return peakClock{GHz: mhz / 1000, Source: "the clock measured with a chain of dependent adds (no cpufreq)"}, nil
	}
	b, err := fs.ReadFile(procfs, "cpuinfo")
	if err != nil {
		return peakClock{}, fmt.Errorf("read clock frequency: %w", err)
	}
	mhz, err := cpuinfoMHz(string(b), -1)
	if err != nil {
		return peakClock{}, fmt.Errorf("read clock frequency: %w", err)
	}
	return peakClock{GHz: mhz / 1000, Source: `/proc/cpuinfo "cpu MHz" (no cpufreq, no clock kernel)`}, nil
}

func readFirstFloat(fsys fs.FS, name string) (float64, error) {
	b, err := fs.ReadFile(fsys, name)
	if err != nil {
		return 0, err
	}
	return strconv.ParseFloat(strings.TrimSpace(string(b)), 64)
}

// cpuinfoMHz returns the "cpu MHz" of processor cpu in a /proc/cpuinfo
// text, or of the first processor when cpu is negative.
func cpuinfoMHz(text string, cpu int) (float64, error) {
	proc := -1
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		key, val = strings.TrimSpace(key), strings.TrimSpace(val)
		switch key {
		case "processor":
			proc, _ = strconv.Atoi(val)
		case "cpu MHz":
			if cpu < 0 || proc == cpu {
				mhz, err := strconv.ParseFloat(val, 64)
				if err != nil {
					return 0, fmt.Errorf("cpu MHz %q: %w", val, err)
				}
				return mhz, nil
			}
		}
	}
	if cpu < 0 {
		return 0, fmt.Errorf(`no "cpu MHz" in cpuinfo`)
	}
	return 0, fmt.Errorf(`no "cpu MHz" for processor %d in cpuinfo`, cpu)
}
