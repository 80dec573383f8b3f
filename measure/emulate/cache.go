package emulate

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/rprof/rprof/machine"
	"github.com/rprof/rprof/roofline"
)

// Level is one cache level of the model.
type Level struct {
	Name string // "L1", "L2", "L3"
	Size int64  // bytes
	Ways int
}

// CacheModel is the cache hierarchy the plugin simulates, from L1 down.
// Each level is private to a guest thread (see docs/emulate.md).
type CacheModel struct {
	Levels []Level
	Line   int // line size in bytes, a power of two
	// Source says where the sizes came from ("flag", "default", or the
	// machine's description such as "sysfs").
	Source string
}

// DefaultCacheModel is used when neither the machine nor the user gives
// sizes (and below the levels a machine does not say): a common recent x86 core (48 KiB 12-way L1d, 1 MiB 16-way L2,
// 32 MiB 16-way L3, 64-byte lines).
func DefaultCacheModel() CacheModel {
	return CacheModel{Line: 64, Source: "default", Levels: []Level{
		{Name: roofline.LevelL1, Size: 48 << 10, Ways: 12},
		{Name: roofline.LevelL2, Size: 1 << 20, Ways: 16},
		{Name: roofline.LevelL3, Size: 32 << 20, Ways: 16},
	}}
}

// ErrBadCacheModel is wrapped by ParseCacheModel's errors.
var ErrBadCacheModel = errors.New("bad cache model")

// ParseCacheModel reads the --cache-model syntax: levels from L1 down as
// SIZE/WAYS separated by commas, an optional line=BYTES, e.g.
// "48K/12,1M/16,32M/16,line=64"; or "none" for no model (W only).
func ParseCacheModel(s string) (CacheModel, error) {
	m := CacheModel{Line: 64, Source: "flag"}
	if strings.TrimSpace(s) == "none" {
		return m, nil
	}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if v, ok := strings.CutPrefix(part, "line="); ok {
			n, err := strconv.Atoi(v)
			if err != nil || n < 8 || n&(n-1) != 0 {
				return m, fmt.Errorf("%w: line %q: want a power of two of at least 8 bytes", ErrBadCacheModel, v)
			}
			m.Line = n
			continue
		}
		size, ways, ok := strings.Cut(part, "/")
		if !ok {
			return m, fmt.Errorf("%w: %q: want SIZE/WAYS such as 32M/16", ErrBadCacheModel, part)
		}
		b, err := parseBytes(size)
		if err != nil {
			return m, fmt.Errorf("%w: %q: %v", ErrBadCacheModel, part, err)
		}
		w, err := strconv.Atoi(ways)
		if err != nil || w < 1 {
			return m, fmt.Errorf("%w: %q: ways must be a positive integer", ErrBadCacheModel, part)
		}
		m.Levels = append(m.Levels, Level{Name: fmt.Sprintf("L%d", len(m.Levels)+1), Size: b, Ways: w})
	}
	if len(m.Levels) == 0 || len(m.Levels) > 4 {
		return m, fmt.Errorf("%w: %q: give 1 to 4 levels, or none", ErrBadCacheModel, s)
	}
	for _, l := range m.Levels {
		if l.Size < int64(m.Line)*int64(l.Ways) {
			return m, fmt.Errorf("%w: %s of %d B cannot hold %d ways of %d B lines", ErrBadCacheModel, l.Name, l.Size, l.Ways, m.Line)
		}
	}
	return m, nil
}

// parseBytes is a positive size in sysfs's syntax (48K, 1M, 32M).
func parseBytes(s string) (int64, error) {
	n, err := machine.ParseSize(s)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("size %q: want a positive number of bytes with an optional K, M or G", s)
	}
	return n, nil
}

// Enabled reports whether the model simulates any cache (Q is modelled).
func (m CacheModel) Enabled() bool { return len(m.Levels) > 0 }

// String is the --cache-model syntax of m.
func (m CacheModel) String() string {
	if !m.Enabled() {
		return "none"
	}
	parts := make([]string, 0, len(m.Levels)+1)
	for _, l := range m.Levels {
		parts = append(parts, fmt.Sprintf("%s/%d", sizeString(l.Size), l.Ways))
	}
	return strings.Join(append(parts, fmt.Sprintf("line=%d", m.Line)), ",")
}

func sizeString(b int64) string {
	switch {
	case b%(1<<30) == 0:
		return fmt.Sprintf("%dG", b>>30)
	case b%(1<<20) == 0:
		return fmt.Sprintf("%dM", b>>20)
	case b%(1<<10) == 0:
		return fmt.Sprintf("%dK", b>>10)
	}
	return strconv.FormatInt(b, 10)
}

// pluginArg is the model in the plugin's cache= syntax.
func (m CacheModel) pluginArg() string {
	if !m.Enabled() {
		return "none"
	}
	parts := make([]string, len(m.Levels))
	for i, l := range m.Levels {
		parts[i] = fmt.Sprintf("%d:%d", l.Size, l.Ways)
	}
	return strings.Join(parts, ":")
}

// MachineCacheModel builds the model from the machine's cache sizes (as
// machine.ReadCaches chooses them): one instance of each data or unified
// level, whole (each guest thread gets its own copy, the last level too).
// Levels the machine does not say (machine.Caches.Complete false, such as
// an implausible L3 from CPUID) are taken from the default model below
// the known ones, and Source says so. Associativity is not read (see
// SizedCacheModel). ok is false when the machine gives no size at all.
func MachineCacheModel(c machine.Caches) (m CacheModel, ok bool) {
	byLevel := map[int]machine.Cache{}
	for _, in := range c.Instances {
		if in.Type == "Instruction" || in.SizeBytes <= 0 {
			continue
		}
		if _, seen := byLevel[in.Level]; !seen {
			byLevel[in.Level] = in
		}
	}
	line := 64
	var sizes []int64
	for lvl := 1; lvl <= 4; lvl++ {
		in, found := byLevel[lvl]
		if !found {
			break
		}
		if lvl == 1 && in.LineSize >= 8 && in.LineSize&(in.LineSize-1) == 0 {
			line = in.LineSize
		}
		sizes = append(sizes, in.SizeBytes)
	}
	if len(sizes) == 0 {
		return CacheModel{}, false
	}
	m = SizedCacheModel(sizes, line, c.Source)
	if def := DefaultCacheModel(); !c.Complete && len(m.Levels) < len(def.Levels) {
		m.Source = fmt.Sprintf("%s for L1-L%d, default for the rest", c.Source, len(m.Levels))
		m.Levels = append(m.Levels, def.Levels[len(m.Levels):]...)
	}
	return m, true
}

// SizedCacheModel is the model of levels of the given sizes from L1 down
// (at most 4), with lines of line bytes, its sizes from source.
// Associativity is not known: each level gets the first of 16, 12 or 8
// ways (12 or 8 for L1) that gives a power-of-two number of sets, else 8.
func SizedCacheModel(sizes []int64, line int, source string) CacheModel {
	m := CacheModel{Line: line, Source: source}
	for i, size := range sizes[:min(len(sizes), 4)] {
		m.Levels = append(m.Levels, Level{Name: fmt.Sprintf("L%d", i+1), Size: size, Ways: waysFor(i+1, size, line)})
	}
	return m
}

func waysFor(level int, size int64, line int) int {
	candidates := []int{16, 12, 8}
	if level == 1 {
		candidates = []int{12, 8}
	}
	for _, w := range candidates {
		sets := size / int64(line*w)
		if sets > 0 && size%int64(line*w) == 0 && sets&(sets-1) == 0 {
			return w
		}
	}
	return 8
}

// HostCacheModel is the model of h's caches (MachineCacheModel of what h
// finds in sysfs and, on this machine, CPUID), else the default. A nil h
// is this machine.
func HostCacheModel(h *machine.Host) CacheModel {
	h = h.OrLive()
	if _, err := h.Topology(); err == nil {
		if m, ok := MachineCacheModel(h.Caches()); ok {
			return m
		}
	}
	return DefaultCacheModel()
}
