package roofs

import (
	"bufio"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/rprof/rprof/roofs/kernels"
)

// cpuMHz is the clock the calling thread's core runs at now: cpufreq's
// scaling_cur_freq of cpu, else timed with the clock kernel, else
// /proc/cpuinfo's "cpu MHz" (which in many VMs is the host's nominal clock,
// not what the core runs at). 0 when none works.
func cpuMHz(cpu int) float64 {
	root := os.DirFS("/")
	if khz, err := readFirstFloat(root, fmt.Sprintf("sys/devices/system/cpu/cpu%d/cpufreq/scaling_cur_freq", cpu)); err == nil {
		return khz / 1000
	}
	if mhz := clockMHz(); mhz > 0 {
		return mhz
	}
	b, err := fs.ReadFile(root, "proc/cpuinfo")
	if err != nil {
		return 0
	}
	mhz, _ := cpuinfoMHz(string(b), cpu)
	return mhz
}

// clockMHz times the clock kernel, a chain of dependent one-cycle adds of
// known length, on the calling thread: cycles over seconds is the clock
// the core ran at. It keeps the best of a few ~1 ms runs, since a
// preempted run only looks slower. 0 where there is no clock kernel.
func clockMHz() float64 {
	k, ok := kernels.ClockKernel()
	if !ok {
		return 0
	}
	iters := int64(4e6 / k.CyclesPerIter) // ~1 ms at 4 GHz
	best := 0.0
	for range 5 {
		start := time.Now()
		k.Run(iters)
		if s := time.Since(start).Seconds(); s > 0 {
			best = max(best, float64(iters)*k.CyclesPerIter/s/1e6)
		}
	}
	return best
}

// Frequency is the clock used for theoretical peaks and where it came
// from.
type Frequency struct {
	GHz    float64
	Source string
}

// nominalFrequency is the clock theoretical peaks use: cpufreq's
// cpuinfo_max_freq of the first CPU (the highest clock the kernel allows),
// else the clock measured by measureMHz (VMs have no cpufreq, and their
// /proc/cpuinfo shows the host's nominal clock, below what the cores run
// at), else cpuinfo's "cpu MHz". sysfs and procfs are rooted like /sys and
// /proc; measureMHz returns 0 when it cannot measure.
func nominalFrequency(sysfs, procfs fs.FS, measureMHz func() float64) (Frequency, error) {
	if khz, err := readFirstFloat(sysfs, "devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq"); err == nil && khz > 0 {
		return Frequency{GHz: khz / 1e6, Source: "cpufreq cpuinfo_max_freq"}, nil
	}
	if mhz := measureMHz(); mhz > 0 {
		return Frequency{GHz: mhz / 1000, Source: "the clock measured with a chain of dependent adds (no cpufreq)"}, nil
	}
	b, err := fs.ReadFile(procfs, "cpuinfo")
	if err != nil {
		return Frequency{}, fmt.Errorf("read clock frequency: %w", err)
	}
	mhz, err := cpuinfoMHz(string(b), -1)
	if err != nil {
		return Frequency{}, fmt.Errorf("read clock frequency: %w", err)
	}
	return Frequency{GHz: mhz / 1000, Source: `/proc/cpuinfo "cpu MHz" (no cpufreq, no clock kernel)`}, nil
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
