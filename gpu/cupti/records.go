package cupti

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// The injection library's output, one file per process that initialised
// CUDA, one record a line, fields separated by tabs (inject/inject.c
// writes it):
//
//	rprof-cupti FORMAT PID            first line
//	cupti VERSION PATH                CUPTI's API version and the library opened
//	unavailable REASON DETAIL         CUPTI cannot record (no-library, no-symbol, too-old)
//	unverified-layout VERSION CHECKED kernel records of a CUPTI newer than the checked one
//	error CALL CODE NAME              a CUPTI call failed (CUptiResult and its name)
//	recording kernels                 the activity API is on
//	kernel DEV CTX STREAM START END GX,GY,GZ BX,BY,BZ CORRELATION NAME
//	dropped N                         records CUPTI dropped for want of buffer
//	profiling                         CUPTI's range profiler is on (auto ranges, kernel replay)
//	profiler-off CALL CODE NAME       the range profiler could not run: CALL failed (its
//	                                  CUptiResult or NVPA_Status and the name); times only
//	range DEV VALUES NAME             one profiled kernel launch: VALUES the metrics'
//	                                  values, METRIC=VALUE joined by commas; NAME the range's
//	                                  (the kernel's)
//	ranges-dropped DEV N              the range profiler dropped N launches on device
//	                                  DEV past the ranges a session holds
//	end                               written at the process's exit
const format = 1

// Reasons the injection library gives for CUPTI being unavailable.
const (
	// ReasonNoLibrary: libcupti could not be opened.
	ReasonNoLibrary = "no-library"
	// ReasonNoSymbol: the library lacks a function rprof calls.
	ReasonNoSymbol = "no-symbol"
	// ReasonTooOld: CUPTI's API version predates the kernel records
	// rprof reads.
	ReasonTooOld = "too-old"
)

// Kernel is one kernel launch's activity record.
type Kernel struct {
	Name    string
	Device  int
	Context uint32
	Stream  uint32
	// Start and End are CUPTI's timestamps (nanoseconds).
	Start, End  uint64
	Grid, Block [3]int
	Correlation uint32
}

// CallError is a CUPTI call that failed in the target.
type CallError struct {
	Call string
	Code int    // the CUptiResult
	Name string // its name, CUPTI_ERROR_...
}

// CUPTI's results that callers act on (cupti_result.h).
const (
	ResultInsufficientPrivileges = 35
)

func (e *CallError) Error() string {
	return fmt.Sprintf("%s: %s (%d)", e.Call, e.Name, e.Code)
}

// Process is what one process of the target recorded.
type Process struct {
	PID int
	// Version is CUPTI's API version (0: not opened), Library the file
	// opened.
	Version int
	Library string
	// Unavailable is why CUPTI could not record ("": it could); Detail
	// says more.
	Unavailable, Detail string
	// Errors are the CUPTI calls that failed.
	Errors []CallError
	// Recording says the activity API was on.
	Recording bool
	// UnverifiedLayout: CUPTI is newer than the version whose record
	// layout was checked (CheckedVersion).
	UnverifiedLayout bool
	CheckedVersion   int
	Kernels          []Kernel
	// Untimed counts the kernel records whose end is not after their
	// start: left out of Kernels rather than taken as a time.
	Untimed int
	// Profiling says the range profiler was on; ProfilerOff is the call
	// that kept it off (nil: none failed).
	Profiling   bool
	ProfilerOff *CallError
	// Ranges are the launches the range profiler measured;
	// RangesDropped counts those it dropped for want of room.
	Ranges        []Range
	RangesDropped uint64
	// Dropped counts the records CUPTI dropped.
	Dropped uint64
	// Complete says the process exited and its records were flushed.
	Complete bool
}

// ErrFormat is a file the injection library did not write.
var ErrFormat = errors.New("not a record file of rprof's CUPTI injection library")

// Parse reads one process's file.
func Parse(r io.Reader) (Process, error) {
	var p Process
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for n := 1; sc.Scan(); n++ {
		f := strings.Split(sc.Text(), "\t")
		if n == 1 {
			if len(f) != 3 || f[0] != "rprof-cupti" || f[1] != strconv.Itoa(format) {
				return p, ErrFormat
			}
			pid, err := strconv.Atoi(f[2])
			if err != nil {
				return p, fmt.Errorf("%w: line 1: %v", ErrFormat, err)
			}
			p.PID = pid
			continue
		}
		if err := p.record(f); err != nil {
			return p, fmt.Errorf("line %d: %w", n, err)
		}
	}
	if err := sc.Err(); err != nil {
		return p, err
	}
	if p.PID == 0 {
		return p, ErrFormat
	}
	return p, nil
}

// fields are the fields each record has after its name.
var fields = map[string]int{"cupti": 2, "unavailable": 2, "unverified-layout": 2, "error": 3,
	"recording": 1, "kernel": 9, "dropped": 1, "end": 0,
	"profiling": 0, "profiler-off": 3, "range": 3, "ranges-dropped": 2}

func (p *Process) record(f []string) error {
	want, ok := fields[f[0]]
	if !ok {
		return fmt.Errorf("unknown record %q", f[0])
	}
	if len(f)-1 != want {
		return fmt.Errorf("%s has %d fields, want %d", f[0], len(f)-1, want)
	}
	var err error
	switch f[0] {
	case "cupti":
		p.Version, err = strconv.Atoi(f[1])
		p.Library = f[2]
	case "unavailable":
		p.Unavailable, p.Detail = f[1], f[2]
	case "unverified-layout":
		p.UnverifiedLayout = true
		p.CheckedVersion, err = strconv.Atoi(f[2])
	case "error", "profiler-off":
		var e CallError
		e, err = parseCall(f[1:])
		if f[0] == "error" {
			p.Errors = append(p.Errors, e)
		} else {
			p.ProfilerOff = &e
		}
	case "profiling":
		p.Profiling = true
	case "range":
		var rg Range
		rg, err = parseRange(f[1:])
		p.Ranges = append(p.Ranges, rg)
	case "ranges-dropped":
		var d uint64
		if _, err = strconv.Atoi(f[1]); err == nil {
			d, err = strconv.ParseUint(f[2], 10, 64)
		}
		p.RangesDropped += d
	case "recording":
		p.Recording = true
	case "kernel":
		var k Kernel
		if k, err = parseKernel(f[1:]); err == nil && k.End <= k.Start {
			p.Untimed++
		} else if err == nil {
			p.Kernels = append(p.Kernels, k)
		}
	case "dropped":
		var d uint64
		d, err = strconv.ParseUint(f[1], 10, 64)
		p.Dropped += d
	case "end":
		p.Complete = true
	}
	if err != nil {
		return fmt.Errorf("%s: %w", f[0], err)
	}
	return nil
}

func parseCall(f []string) (CallError, error) {
	code, err := strconv.Atoi(f[1])
	return CallError{Call: f[0], Code: code, Name: f[2]}, err
}

// Range is one kernel launch the range profiler measured: with automatic
// ranges a range is a launch, named after its kernel.
type Range struct {
	Name   string
	Device int
	// Values are the metrics' values as the NVPW host library evaluated
	// them (instructions, bytes).
	Values map[string]float64
}

func parseRange(f []string) (Range, error) {
	rg := Range{Name: f[2], Values: map[string]float64{}}
	var err error
	if rg.Device, err = strconv.Atoi(f[0]); err != nil {
		return rg, err
	}
	if f[1] == "" {
		return rg, nil
	}
	for _, kv := range strings.Split(f[1], ",") {
		m, v, ok := strings.Cut(kv, "=")
		if !ok {
			return rg, fmt.Errorf("%q: want METRIC=VALUE", kv)
		}
		x, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return rg, err
		}
		rg.Values[m] = x
	}
	return rg, nil
}

func parseKernel(f []string) (Kernel, error) {
	k := Kernel{Name: f[8]}
	var nums [5]uint64
	for i, s := range []string{f[0], f[1], f[2], f[3], f[4]} {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return k, err
		}
		nums[i] = v
	}
	k.Device, k.Context, k.Stream, k.Start, k.End = int(nums[0]), uint32(nums[1]), uint32(nums[2]), nums[3], nums[4]
	for i, dims := range []*[3]int{&k.Grid, &k.Block} {
		d := strings.Split(f[5+i], ",")
		if len(d) != 3 {
			return k, fmt.Errorf("%q: want three dimensions", f[5+i])
		}
		for j, s := range d {
			v, err := strconv.Atoi(s)
			if err != nil {
				return k, err
			}
			dims[j] = v
		}
	}
	c, err := strconv.ParseUint(f[7], 10, 32)
	k.Correlation = uint32(c)
	return k, err
}

// sortProcesses orders processes by PID.
func sortProcesses(ps []Process) {
	slices.SortFunc(ps, func(a, b Process) int { return a.PID - b.PID })
}
