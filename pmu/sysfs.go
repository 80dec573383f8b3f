package pmu

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/rprof/rprof/internal/kfs"
	"github.com/rprof/rprof/machine"
)

// devicesDir is where the kernel lists PMUs, relative to the sysfs root.
const devicesDir = "bus/event_source/devices"

// PMU is one performance monitoring unit as the kernel describes it in
// /sys/bus/event_source/devices/<name>.
type PMU struct {
	Name string
	// Type goes in perf_event_attr.type.
	Type uint32
	// CPUs is the PMU's cpumask (uncore: the CPUs to open its events on)
	// or, for hybrid and Arm core PMUs, its cpus file; nil if it has
	// neither.
	CPUs []int
	// Formats are the terms of format/, by term name.
	Formats map[string]Format
	// Aliases are the named events of events/, by name.
	Aliases map[string]Alias
}

// Format says where a term's value goes: the value's bits are placed, from
// bit 0 up, at Bits (ascending) of the attr field.
type Format struct {
	Field string // "config", "config1", "config2" or "config3"
	Bits  []int
}

// String writes f as sysfs does, e.g. "config:0-7,32-35".
func (f Format) String() string { return f.Field + ":" + kfs.FormatList(f.Bits) }

// Alias is a named event from events/<name>, with its optional
// <name>.scale (1 when absent) and <name>.unit ("" when absent).
type Alias struct {
	Terms string
	Scale float64
	Unit  string
}

// PMUs are a machine's PMUs by name.
type PMUs map[string]*PMU

// DiscoverPMUs reads every PMU under bus/event_source/devices of sysfs, a
// file system rooted like /sys (os.DirFS("/sys"), or a captured tree).
//
// When some PMU directories cannot be read or parsed, DiscoverPMUs returns
// the PMUs it did read together with an error naming the first bad one;
// when the devices directory itself is unreadable it returns nil PMUs.
func DiscoverPMUs(sysfs fs.FS) (PMUs, error) { return discoverPMUs(sysfs, nil) }

// DiscoverCountingPMUs is DiscoverPMUs for a counting run: every PMU with
// its type and CPUs, but the format and event files (most of what sysfs
// holds about PMUs: tens of files per uncore box on a server) only of the
// PMUs a run can count with: the core PMUs, the memory controllers of the
// catalogue's traffic events, and those named in also (the PMUs of the
// user's events). The others have no Formats and no Aliases.
func DiscoverCountingPMUs(sysfs fs.FS, also []string) (PMUs, error) {
	bases := slices.Clone(also)
	for _, a := range catalogueEntries() {
		for _, set := range a.Traffic {
			for _, ev := range set.Events {
				bases = append(bases, ev.PMU)
			}
		}
	}
	return discoverPMUs(sysfs, func(name string) bool {
		if (&PMU{Name: name}).Core() {
			return true
		}
		for _, b := range bases {
			if _, ok := boxIndex(name, strings.TrimSuffix(b, "_")); ok || name == b {
				return true
			}
		}
		return false
	})
}

// discoverPMUs reads the PMUs, the format and event files only of those
// detail accepts (nil: all).
func discoverPMUs(sysfs fs.FS, detail func(name string) bool) (PMUs, error) {
	entries, err := fs.ReadDir(sysfs, devicesDir)
	if err != nil {
		return nil, fmt.Errorf("discover PMUs: %w", err)
	}
	ps := PMUs{}
	var errs []error
	for _, e := range entries {
		p, err := readPMU(sysfs, e.Name(), detail == nil || detail(e.Name()))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		ps[p.Name] = p
	}
	switch len(errs) {
	case 0:
		return ps, nil
	case 1:
		return ps, fmt.Errorf("discover PMUs: %w", errs[0])
	default:
		return ps, fmt.Errorf("discover PMUs: %w (and %d more unreadable PMUs)", errs[0], len(errs)-1)
	}
}

func readPMU(sysfs fs.FS, name string, detail bool) (*PMU, error) {
	dir := path.Join(devicesDir, name)
	p := &PMU{Name: name, Formats: map[string]Format{}, Aliases: map[string]Alias{}}
	s, err := kfs.ReadString(sysfs, path.Join(dir, "type"))
	if err != nil {
		return nil, fmt.Errorf("PMU %s: %w", name, err)
	}
	t, err := strconv.ParseUint(s, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("PMU %s: type %q is not a number: %w", name, s, ErrMalformed)
	}
	p.Type = uint32(t)

	for _, f := range []string{"cpumask", "cpus"} {
		s, err := kfs.ReadString(sysfs, path.Join(dir, f))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("PMU %s: %w", name, err)
		}
		if p.CPUs, err = kfs.ParseCPUList(s); err != nil {
			return nil, fmt.Errorf("PMU %s: %s: %w", name, f, err)
		}
		break
	}
	if !detail {
		return p, nil
	}

	formats, err := kfs.ReadOptionalDir(sysfs, path.Join(dir, "format"))
	if err != nil {
		return nil, fmt.Errorf("PMU %s: %w", name, err)
	}
	for _, f := range formats {
		s, err := kfs.ReadString(sysfs, path.Join(dir, "format", f))
		if err != nil {
			return nil, fmt.Errorf("PMU %s: %w", name, err)
		}
		if p.Formats[f], err = parseFormat(s); err != nil {
			return nil, fmt.Errorf("PMU %s: format/%s: %w", name, f, err)
		}
	}

	events, err := kfs.ReadOptionalDir(sysfs, path.Join(dir, "events"))
	if err != nil {
		return nil, fmt.Errorf("PMU %s: %w", name, err)
	}
	for _, ev := range events {
		if aliasAttribute(ev) {
			continue
		}
		a, err := readAlias(sysfs, path.Join(dir, "events"), ev)
		if err != nil {
			return nil, fmt.Errorf("PMU %s: %w", name, err)
		}
		p.Aliases[ev] = a
	}
	return p, nil
}

// aliasAttribute reports whether an events/ file describes another alias
// (events/<name>.<attribute>) rather than being one.
func aliasAttribute(file string) bool {
	for _, suffix := range []string{".scale", ".unit", ".per-pkg", ".snapshot"} {
		if strings.HasSuffix(file, suffix) {
			return true
		}
	}
	return false
}

func readAlias(sysfs fs.FS, dir, name string) (Alias, error) {
	a := Alias{Scale: 1}
	var err error
	if a.Terms, err = kfs.ReadString(sysfs, path.Join(dir, name)); err != nil {
		return Alias{}, err
	}
	s, err := kfs.ReadString(sysfs, path.Join(dir, name+".scale"))
	switch {
	case err == nil:
		if a.Scale, err = strconv.ParseFloat(s, 64); err != nil || a.Scale <= 0 {
			return Alias{}, fmt.Errorf("events/%s.scale %q is not a positive number: %w", name, s, ErrMalformed)
		}
	case !errors.Is(err, fs.ErrNotExist):
		return Alias{}, err
	}
	a.Unit, err = kfs.ReadString(sysfs, path.Join(dir, name+".unit"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return Alias{}, err
	}
	return a, nil
}

// corePMUs are the x86 core PMU names: "cpu" on non-hybrid parts, else the
// hybrid ones.
var corePMUs = append([]string{"cpu"}, machine.HybridCorePMUs...)

// Core reports whether p counts events of the cores it runs on (a CPU PMU)
// rather than of a shared unit such as a memory controller.
func (p *PMU) Core() bool {
	return slices.Contains(corePMUs, p.Name) ||
		strings.HasPrefix(p.Name, "armv8_") || strings.HasPrefix(p.Name, "armv9_")
}

// HasHardware reports whether the machine exposes a hardware core PMU. A VM
// without a virtual PMU has only software-like PMUs (software, tracepoint,
// breakpoint, uprobe, msr).
func (ps PMUs) HasHardware() bool {
	for _, p := range ps {
		if p.Core() {
			return true
		}
	}
	return false
}

// corePMU names the PMU that raw (rNNNN) and generic hardware events go to:
// "cpu", else the hybrid P-core or an Arm core PMU; "cpu" when there is none,
// since PERF_TYPE_RAW and PERF_TYPE_HARDWARE do not depend on sysfs.
func (ps PMUs) corePMU() string {
	for _, name := range []string{"cpu", "cpu_core"} {
		if ps[name] != nil {
			return name
		}
	}
	var arm []string
	for name, p := range ps {
		if p.Core() {
			arm = append(arm, name)
		}
	}
	if len(arm) > 0 {
		slices.Sort(arm)
		return arm[0]
	}
	return "cpu"
}

// Glob returns the boxes of one PMU kind: the PMUs named base or
// base_<number>, in numeric order (uncore_imc_2 before uncore_imc_10).
// Glob("uncore_imc") finds uncore_imc_0.. but not uncore_imc_free_running_0,
// which is Glob("uncore_imc_free_running"). A trailing "_" in base is
// ignored.
func (ps PMUs) Glob(base string) []*PMU {
	base = strings.TrimSuffix(base, "_")
	var out []*PMU
	for name, p := range ps {
		if name == base {
			out = append(out, p)
			continue
		}
		if _, ok := boxIndex(name, base); ok {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b *PMU) int {
		ia, _ := boxIndex(a.Name, base)
		ib, _ := boxIndex(b.Name, base)
		return ia - ib
	})
	return out
}

// boxIndex returns N for a name base_N; -1 and true for base itself.
func boxIndex(name, base string) (int, bool) {
	if name == base {
		return -1, true
	}
	suffix, ok := strings.CutPrefix(name, base+"_")
	if !ok || suffix == "" || strings.TrimLeft(suffix, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.Atoi(suffix)
	return n, err == nil
}

// Encode turns a term list in perf's syntax ("event=0x05,umask=0xcf",
// "cas_count_read", "cas_count_read,thresh8=1") into an Attr for p, placing
// each value's bits at its format's bit positions as perf does
// (tools/perf/util/pmu.c, pmu_format_value). A bare term means 1; aliases
// expand to their terms; config, config1 and config2 set a whole field.
// Terms given later override earlier ones. It errors on unknown terms, on
// "term=?" left unfilled, and on values wider than their format.
func (p *PMU) Encode(terms string) (Attr, error) {
	ts, err := p.expandAliases(terms, nil)
	if err != nil {
		return Attr{}, fmt.Errorf("PMU %s: %w", p.Name, err)
	}
	a, err := p.encodeTerms(ts)
	if err != nil {
		return Attr{}, fmt.Errorf("PMU %s: %w", p.Name, err)
	}
	return a, nil
}

// expandAliases parses terms and replaces a bare term that names an alias
// (and is not a format term) with the alias's terms. At most one alias may
// be used; it is stored in *used when used is not nil.
func (p *PMU) expandAliases(terms string, used **Alias) ([]term, error) {
	ts, err := parseTerms(terms)
	if err != nil {
		return nil, err
	}
	var out []term
	var aliasName string
	for _, t := range ts {
		if _, isFormat := p.Formats[t.Name]; isFormat || !t.Bare || builtinTerm(t.Name) {
			out = append(out, t)
			continue
		}
		a, ok := p.Aliases[t.Name]
		if !ok {
			return nil, p.unknownTerm(t.Name)
		}
		if aliasName != "" {
			return nil, fmt.Errorf("two events %q and %q in one term list: %w", aliasName, t.Name, ErrMalformed)
		}
		aliasName = t.Name
		ats, err := parseTerms(a.Terms)
		if err != nil {
			return nil, fmt.Errorf("alias %s: %w", t.Name, err)
		}
		out = append(out, ats...)
		if used != nil {
			*used = &a
		}
	}
	return out, nil
}

func builtinTerm(name string) bool {
	return name == "config" || name == "config1" || name == "config2"
}

func (p *PMU) unknownTerm(name string) error {
	known := make([]string, 0, len(p.Formats))
	for f := range p.Formats {
		known = append(known, f)
	}
	slices.Sort(known)
	if len(p.Aliases) > 0 {
		known = append(known, fmt.Sprintf("or one of its %d events", len(p.Aliases)))
	}
	if len(known) == 0 {
		return fmt.Errorf("unknown term %q (the PMU has no format/ or events/; use config=): %w", name, ErrNotSupported)
	}
	return fmt.Errorf("unknown term %q (known: %s): %w", name, strings.Join(known, ", "), ErrNotSupported)
}

func (p *PMU) encodeTerms(ts []term) (Attr, error) {
	a := Attr{Type: p.Type}
	for i, t := range ts {
		if t.Ask {
			// An alias's "term=?" must be filled by a later term.
			if !slices.ContainsFunc(ts[i+1:], func(u term) bool { return u.Name == t.Name && !u.Ask }) {
				return Attr{}, fmt.Errorf("term %s needs a value (%s=?): %w", t.Name, t.Name, ErrMalformed)
			}
			continue
		}
		if builtinTerm(t.Name) {
			*field(&a, t.Name) = t.Value
			continue
		}
		f, ok := p.Formats[t.Name]
		if !ok {
			return Attr{}, p.unknownTerm(t.Name)
		}
		if len(f.Bits) < 64 && t.Value>>len(f.Bits) != 0 {
			return Attr{}, fmt.Errorf("value %#x of term %s does not fit its %d bits: %w", t.Value, t.Name, len(f.Bits), ErrMalformed)
		}
		dst := field(&a, f.Field)
		if dst == nil {
			return Attr{}, fmt.Errorf("term %s is in %s, which rprof cannot set: %w", t.Name, f.Field, ErrNotSupported)
		}
		for i, bit := range f.Bits {
			*dst &^= 1 << bit
			*dst |= (t.Value >> i & 1) << bit
		}
	}
	return a, nil
}

// field returns the Attr field a format names, or nil for config3.
func field(a *Attr, name string) *uint64 {
	switch name {
	case "config":
		return &a.Config
	case "config1":
		return &a.Config1
	case "config2":
		return &a.Config2
	}
	return nil
}
