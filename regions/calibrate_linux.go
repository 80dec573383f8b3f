package regions

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// Calibrate measures, for each kind of first instruction, what probing a
// call costs here: it attaches the probes to empty functions of this
// program, and times calls of each without and with them, calls times
// (the medians, robust to preemption). Inside is the median time the
// probes measured for the empty call: the part of the probes' cost inside
// a call's window, subtracted from every call; Call is the wall time the
// probes add to a call, subtracted from enclosing regions for each nested
// call.
func Calibrate(calls int) (Calibration, error) {
	targets := calibTargets()
	if len(targets) == 0 {
		return Calibration{}, fmt.Errorf("calibrate: %w: no calibration functions for %s", ErrNotSupported, runtime.GOARCH)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	c := Calibration{Costs: map[FirstKind]Cost{}, Calls: calls}
	for _, t := range targets {
		path, off, err := selfOffset(t.addr)
		if err != nil {
			return Calibration{}, fmt.Errorf("calibrate: %w", err)
		}
		base := timeCalls(t.fn, calls)
		s, err := Attach(os.Getpid(), []Probe{{Name: string(t.kind), Kind: Function, Path: path, Offset: off}}, Options{RingBytes: 1 << 20})
		if err != nil {
			return Calibration{}, fmt.Errorf("calibrate: %w", err)
		}
		probed := timeCalls(t.fn, calls)
		res, err := s.Stop()
		if err != nil {
			return Calibration{}, fmt.Errorf("calibrate: %w", err)
		}
		if r := res.Regions[0]; r.Calls < uint64(calls)/2 {
			return Calibration{}, fmt.Errorf("calibrate: the probes saw %d of %d calls of the %s function", r.Calls, calls, t.kind)
		}
		inside := time.Duration(res.Regions[0].Median * 1e9)
		c.Costs[t.kind] = Cost{Inside: inside, Call: max(probed-base, inside)}
	}
	return c, nil
}

// selfOffset finds the file and file offset of an address in this
// process's text, from /proc/self/maps.
func selfOffset(addr uintptr) (string, uint64, error) {
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// start-end perms offset dev inode path
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 {
			continue
		}
		lo, hi, ok := strings.Cut(fields[0], "-")
		if !ok {
			continue
		}
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		off, err3 := strconv.ParseUint(fields[2], 16, 64)
		if err1 != nil || err2 != nil || err3 != nil || uint64(addr) < start || uint64(addr) >= end {
			continue
		}
		path := strings.Join(fields[5:], " ")
		if strings.HasSuffix(path, "(deleted)") || !strings.HasPrefix(path, "/") {
			return "", 0, fmt.Errorf("the text at %#x is not mapped from a file (%q)", addr, path)
		}
		return path, uint64(addr) - start + off, nil
	}
	return "", 0, fmt.Errorf("address %#x not found in /proc/self/maps", addr)
}
