package pmu

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/rprof/rprof/internal/kfs"
)

// ErrMalformed: an event string, a term list, or a sysfs or procfs file is
// not in the expected syntax.
var ErrMalformed = kfs.ErrMalformed

// perf_event_attr.type values fixed by the uapi header.
const (
	typeHardware = 0 // PERF_TYPE_HARDWARE
	typeSoftware = 1 // PERF_TYPE_SOFTWARE
	typeRaw      = 4 // PERF_TYPE_RAW: the core PMU
)

// softwareEvents are perf's names for PERF_COUNT_SW_* (uapi perf_event.h),
// resolvable without sysfs because the software PMU exports no events/.
var softwareEvents = map[string]uint64{
	"cpu-clock":        0,
	"task-clock":       1,
	"page-faults":      2,
	"faults":           2,
	"context-switches": 3,
	"cs":               3,
	"cpu-migrations":   4,
	"migrations":       4,
	"minor-faults":     5,
	"major-faults":     6,
	"alignment-faults": 7,
	"emulation-faults": 8,
	"dummy":            9,
	"bpf-output":       10,
	"cgroup-switches":  11,
}

// hardwareEvents are perf's generic names for PERF_COUNT_HW_* (uapi
// perf_event.h); the kernel maps them to a model-specific event.
var hardwareEvents = map[string]uint64{
	"cycles":                  0,
	"cpu-cycles":              0,
	"instructions":            1,
	"cache-references":        2,
	"cache-misses":            3,
	"branch-instructions":     4,
	"branches":                4,
	"branch-misses":           5,
	"bus-cycles":              6,
	"stalled-cycles-frontend": 7,
	"idle-cycles-frontend":    7,
	"stalled-cycles-backend":  8,
	"idle-cycles-backend":     8,
	"ref-cycles":              9,
}

var rawEvent = regexp.MustCompile(`^r[0-9a-fA-F]{1,16}$`)

// ParseEvent resolves an event string in perf's syntax against the PMUs of
// a machine:
//
//   - pmu/term=value,.../ with the terms of the PMU's format/ directory,
//     the built-in terms config, config1 and config2, and the PMU's event
//     aliases (which bring their .scale and .unit), e.g.
//     "uncore_imc_0/cas_count_read/" or "amd_df/event=0x107,umask=0x38/";
//   - rNNNN, a raw config for the core PMU (type 4, PERF_TYPE_RAW);
//   - perf's software event names (task-clock, page-faults, cs, ...);
//   - perf's generic hardware event names (cycles, instructions, ...).
//
// Software and generic hardware names resolve even when the PMU is absent;
// whether they open is for the kernel to say. Raw and generic hardware
// events name the core PMU ("cpu", or "cpu_core" on hybrid Intel, where
// perf itself opens one event per core PMU with the PMU's type in config
// bits 63-32; rprof does not, so on hybrid machines they cover the P-cores
// only, and E-core events must name cpu_atom). Modifiers such as ":u" are
// rejected. Errors name the input and match ErrMalformed (syntax) or
// ErrNotSupported (a PMU or alias this machine lacks).
func ParseEvent(s string, pmus PMUs) (Event, error) {
	ev, err := parseEvent(s, pmus)
	if err != nil {
		return Event{}, fmt.Errorf("event %q: %w", s, err)
	}
	ev.Name = s
	return ev, nil
}

func parseEvent(s string, pmus PMUs) (Event, error) {
	if s == "" {
		return Event{}, fmt.Errorf("empty event: %w", ErrMalformed)
	}
	if strings.ContainsAny(s, " \t\n") {
		return Event{}, fmt.Errorf("contains white space: %w", ErrMalformed)
	}
	if name, rest, ok := strings.Cut(s, "/"); ok {
		terms, mods, ok := cutLast(rest, "/")
		if !ok {
			return Event{}, fmt.Errorf("missing closing '/': %w", ErrMalformed)
		}
		if mods != "" {
			return Event{}, fmt.Errorf("modifier %q after the final '/' is not supported: %w", mods, ErrMalformed)
		}
		return pmuEvent(name, terms, pmus)
	}
	if i := strings.IndexByte(s, ':'); i >= 0 {
		return Event{}, fmt.Errorf("modifier %q is not supported: %w", s[i:], ErrMalformed)
	}
	if rawEvent.MatchString(s) {
		config, err := strconv.ParseUint(s[1:], 16, 64)
		if err != nil {
			return Event{}, fmt.Errorf("raw config: %w", ErrMalformed)
		}
		return Event{PMU: pmus.corePMU(), Attr: Attr{Type: typeRaw, Config: config}, Scale: 1}, nil
	}
	if config, ok := softwareEvents[s]; ok {
		return Event{PMU: "software", Attr: Attr{Type: typeSoftware, Config: config}, Scale: 1, Unit: softwareUnit(config)}, nil
	}
	if config, ok := hardwareEvents[s]; ok {
		return Event{PMU: pmus.corePMU(), Attr: Attr{Type: typeHardware, Config: config}, Scale: 1}, nil
	}
	return Event{}, fmt.Errorf("not a software, generic hardware or raw (rNNNN) event, nor pmu/terms/: %w", ErrNotSupported)
}

// softwareUnit says what the clock events count; the others count events.
func softwareUnit(config uint64) string {
	if config <= 1 {
		return "ns"
	}
	return ""
}

func pmuEvent(name, terms string, pmus PMUs) (Event, error) {
	if name == "" {
		return Event{}, fmt.Errorf("empty PMU name: %w", ErrMalformed)
	}
	p := pmus[name]
	if p == nil {
		if boxes := pmus.Glob(name); len(boxes) > 0 {
			return Event{}, fmt.Errorf("unknown PMU %q (this machine has %s..%s; name one box): %w",
				name, boxes[0].Name, boxes[len(boxes)-1].Name, ErrNotSupported)
		}
		return Event{}, fmt.Errorf("unknown PMU %q: %w", name, ErrNotSupported)
	}
	ev := Event{PMU: p.Name, Scale: 1}
	var alias *Alias
	expanded, err := p.expandAliases(terms, &alias)
	if err != nil {
		return Event{}, err
	}
	if ev.Attr, err = p.encodeTerms(expanded); err != nil {
		return Event{}, err
	}
	if alias != nil {
		ev.Scale, ev.Unit = alias.Scale, alias.Unit
	}
	if !p.Core() && len(p.CPUs) > 0 {
		ev.CPUs = slices.Clone(p.CPUs)
	}
	return ev, nil
}

// cutLast is strings.Cut at the last occurrence of sep.
func cutLast(s, sep string) (before, after string, found bool) {
	i := strings.LastIndex(s, sep)
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+len(sep):], true
}

// term is one name[=value] of a term list. A bare name means value 1;
// Ask is set for "name=?", which the user must fill in.
type term struct {
	Name  string
	Value uint64
	Ask   bool
	Bare  bool
}

// parseTerms parses a sysfs events file or the middle of pmu/.../:
// "event=0x05,umask=0xcf", "edge", "event=0x04,umask=?". Values are
// decimal or 0x-prefixed hexadecimal.
func parseTerms(s string) ([]term, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, fmt.Errorf("empty term list: %w", ErrMalformed)
	}
	var ts []term
	for _, field := range strings.Split(s, ",") {
		name, val, hasVal := strings.Cut(strings.TrimSpace(field), "=")
		if !validTermName(name) {
			return nil, fmt.Errorf("term %q: bad name: %w", field, ErrMalformed)
		}
		t := term{Name: name, Value: 1, Bare: !hasVal}
		switch {
		case !hasVal:
		case val == "?":
			t.Ask = true
		default:
			v, err := parseNumber(val)
			if err != nil {
				return nil, fmt.Errorf("term %q: %w", field, err)
			}
			t.Value = v
		}
		ts = append(ts, t)
	}
	return ts, nil
}

func validTermName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r == '_' || r == '-' || r == '.' || '0' <= r && r <= '9' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z') {
			return false
		}
	}
	return true
}

func parseNumber(s string) (uint64, error) {
	var v uint64
	var err error
	if h, ok := strings.CutPrefix(strings.ToLower(s), "0x"); ok {
		v, err = strconv.ParseUint(h, 16, 64)
	} else {
		v, err = strconv.ParseUint(s, 10, 64)
	}
	if err != nil {
		return 0, fmt.Errorf("value %q is not a 64-bit decimal or 0x-hex number: %w", s, ErrMalformed)
	}
	return v, nil
}

// parseFormat parses a sysfs format file: "config:0-7,32-35",
// "config1:1,6-10,44", "config:21". Bits come back ascending.
func parseFormat(s string) (Format, error) {
	field, spec, ok := strings.Cut(strings.TrimSpace(s), ":")
	if !ok {
		return Format{}, fmt.Errorf("format %q: want config[N]:bits: %w", s, ErrMalformed)
	}
	switch field {
	case "config", "config1", "config2", "config3":
	default:
		return Format{}, fmt.Errorf("format %q: unknown field %q: %w", s, field, ErrMalformed)
	}
	bits, err := kfs.ParseList(spec, 63)
	if err != nil {
		return Format{}, fmt.Errorf("format %q: %w", s, err)
	}
	return Format{Field: field, Bits: bits}, nil
}
