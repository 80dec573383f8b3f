// Package kfs reads the small files of /sys and /proc (through an fs.FS
// rooted like them, so that tests feed captured trees) and the kernel's
// list format ("0-3,8-11") they use for CPU sets and bit ranges.
package kfs

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"strings"
)

// ErrMalformed: a sysfs or procfs file, an event string or a term list is
// not in the expected syntax.
var ErrMalformed = errors.New("malformed")

// MaxCPU is the largest CPU number accepted in a CPU list (the kernel's
// NR_CPUS limit is 8192).
const MaxCPU = 8191

// ReadString reads a small file without its surrounding white space.
// Errors are *fs.PathError, which name the file.
func ReadString(fsys fs.FS, name string) (string, error) {
	b, err := fs.ReadFile(fsys, name)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

// ReadInt reads a file holding one integer; an absent optional file reads
// as 0.
func ReadInt(fsys fs.FS, name string, optional bool) (int, error) {
	s, err := ReadString(fsys, name)
	if optional && errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("%s: %q is not a number: %w", name, s, ErrMalformed)
	}
	return v, nil
}

// ReadOptionalDir lists the names in dir, or none if dir does not exist.
func ReadOptionalDir(fsys fs.FS, dir string) ([]string, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name()
	}
	return names, nil
}

// ReadOptionalCPUList reads a CPU list file; nil when it does not exist.
func ReadOptionalCPUList(fsys fs.FS, name string) ([]int, error) {
	s, err := ReadString(fsys, name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	cpus, err := ParseCPUList(s)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return cpus, nil
}

// ParseCPUList parses the kernel's cpulist format ("0-3,8-11", "0", ""),
// as found in online, cpumask, cpus and *_list files.
func ParseCPUList(s string) ([]int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	cpus, err := ParseList(s, MaxCPU)
	if err != nil {
		return nil, fmt.Errorf("cpu list %q: %w", s, err)
	}
	return cpus, nil
}

// FormatList is the inverse of ParseList for ascending input:
// [0 1 2 3 8] -> "0-3,8".
func FormatList(ns []int) string {
	var b strings.Builder
	for i := 0; i < len(ns); {
		j := i
		for j+1 < len(ns) && ns[j+1] == ns[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(ns[i]))
		if j > i {
			b.WriteString("-" + strconv.Itoa(ns[j]))
		}
		i = j + 1
	}
	return b.String()
}

// ParseList parses "a-b,c,..." into ascending, distinct integers in
// [0, limit].
func ParseList(s string, limit int) ([]int, error) {
	var out []int
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 || a > limit {
			return nil, fmt.Errorf("bad number %q: %w", lo, ErrMalformed)
		}
		b := a
		if isRange {
			b, err = strconv.Atoi(hi)
			if err != nil || b < a || b > limit {
				return nil, fmt.Errorf("bad range %q: %w", part, ErrMalformed)
			}
		}
		for i := a; i <= b; i++ {
			out = append(out, i)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// ProcStat is what rprof reads of /proc/PID/stat.
type ProcStat struct {
	// Comm is the command name (at most 15 bytes of the program's name).
	Comm string
	// State is the one-letter state ("R", "S", "Z" for a zombie...).
	State string
	// PPID is the parent's pid, PGRP the process group's id.
	PPID, PGRP int
	// StartTicks is the start time in clock ticks since boot: with the
	// pid it names one process, not a later reuse of its pid.
	StartTicks uint64
}

// ReadProcStat reads PID/stat under a /proc root.
func ReadProcStat(procfs fs.FS, pid int) (ProcStat, error) {
	name := strconv.Itoa(pid) + "/stat"
	b, err := fs.ReadFile(procfs, name)
	if err != nil {
		return ProcStat{}, err
	}
	// The command name (field 2) may hold spaces and parentheses: count
	// fields after its closing parenthesis.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	open := strings.IndexByte(s, '(')
	if i < 0 || open < 0 || open > i {
		return ProcStat{}, fmt.Errorf("%s: no command field: %w", name, ErrMalformed)
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return ProcStat{}, fmt.Errorf("%s: %d fields: %w", name, len(f)+2, ErrMalformed)
	}
	ppid, err1 := strconv.Atoi(f[1])
	pgrp, err2 := strconv.Atoi(f[2])
	ticks, err3 := strconv.ParseUint(f[19], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return ProcStat{}, fmt.Errorf("%s: %w", name, ErrMalformed)
	}
	return ProcStat{Comm: s[open+1 : i], State: f[0], PPID: ppid, PGRP: pgrp, StartTicks: ticks}, nil
}
