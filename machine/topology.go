package machine

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/rprof/rprof/internal/kfs"
	"github.com/rprof/rprof/roofline"
)

const cpuDir = "devices/system/cpu"

// pmuDevicesDir is where the kernel lists PMUs, relative to the sysfs root.
const pmuDevicesDir = "bus/event_source/devices"

// HybridCorePMUs are the core PMUs of hybrid Intel parts: P-core, E-core
// and Arrow Lake's low-power E-core; each lists its CPUs in a cpus file.
var HybridCorePMUs = []string{"cpu_core", "cpu_atom", "cpu_lowpower"}

// ErrMalformed: a sysfs or procfs file is not in the expected syntax.
var ErrMalformed = kfs.ErrMalformed

// Topology is the machine's CPU, cache and NUMA layout as sysfs shows it,
// counted over the online CPUs.
type Topology struct {
	Sockets int // distinct physical_package_id
	Cores   int // distinct (package, die, core_id)
	Threads int // online CPUs
	// SMTSiblings are the groups of CPUs sharing a core
	// (thread_siblings_list), ordered by their first CPU.
	SMTSiblings [][]int
	// Caches are the distinct cache instances, by level, type and first
	// CPU. Empty when sysfs has no cache/ directories (some VMs and Arm
	// firmware).
	Caches []Cache
	// NUMANodes are devices/system/node/nodeN, by ID; empty when the kernel
	// has no NUMA support.
	NUMANodes []NUMANode
	// CoreTypes maps hybrid core PMUs ("cpu_core", "cpu_atom",
	// "cpu_lowpower") to their CPUs; nil on non-hybrid machines.
	CoreTypes map[string][]int
	Online    []int
}

// Cache is one cache instance (cpuN/cache/indexK, or built from CPUID).
type Cache struct {
	Level      int
	Type       string // "Data", "Instruction" or "Unified"
	SizeBytes  int64  // 0 when sysfs gives no size
	SharedCPUs []int
	LineSize   int // coherency_line_size in bytes, 0 when absent
	// Source is where the size came from: roofline.CacheSourceSysfs or
	// CacheSourceCPUID.
	Source string
}

// NUMANode is one NUMA node and its CPUs.
type NUMANode struct {
	ID   int
	CPUs []int
}

// ReadTopology reads devices/system/cpu and devices/system/node of sysfs, a
// file system rooted like /sys, and the hybrid core PMUs' cpus files. Every
// online CPU must have a topology directory.
func ReadTopology(sysfs fs.FS) (Topology, error) {
	t, err := readTopology(sysfs)
	if err != nil {
		return Topology{}, fmt.Errorf("read topology: %w", err)
	}
	return t, nil
}

func readTopology(sysfs fs.FS) (Topology, error) {
	var t Topology
	s, err := kfs.ReadString(sysfs, path.Join(cpuDir, "online"))
	if err != nil {
		return t, err
	}
	if t.Online, err = kfs.ParseCPUList(s); err != nil {
		return t, fmt.Errorf("online: %w", err)
	}
	if len(t.Online) == 0 {
		return t, fmt.Errorf("no online CPUs: %w", ErrMalformed)
	}
	t.Threads = len(t.Online)

	type coreKey struct{ pkg, die, core int }
	packages, cores := map[int]bool{}, map[coreKey]bool{}
	siblings := map[string][]int{}
	caches := map[string]Cache{}
	for _, cpu := range t.Online {
		dir := path.Join(cpuDir, "cpu"+strconv.Itoa(cpu), "topology")
		pkg, err := kfs.ReadInt(sysfs, path.Join(dir, "physical_package_id"), false)
		if err != nil {
			return t, err
		}
		die, err := kfs.ReadInt(sysfs, path.Join(dir, "die_id"), true)
		if err != nil {
			return t, err
		}
		core, err := kfs.ReadInt(sysfs, path.Join(dir, "core_id"), false)
		if err != nil {
			return t, err
		}
		packages[pkg] = true
		cores[coreKey{pkg, die, core}] = true

		sib, err := kfs.ReadOptionalCPUList(sysfs, path.Join(dir, "thread_siblings_list"))
		if err != nil {
			return t, err
		}
		if sib == nil {
			sib = []int{cpu}
		}
		siblings[fmt.Sprint(sib)] = sib

		if err := readCaches(sysfs, cpu, caches); err != nil {
			return t, err
		}
	}
	t.Sockets, t.Cores = len(packages), len(cores)
	for _, sib := range siblings {
		t.SMTSiblings = append(t.SMTSiblings, sib)
	}
	slices.SortFunc(t.SMTSiblings, func(a, b []int) int { return a[0] - b[0] })
	for _, c := range caches {
		t.Caches = append(t.Caches, c)
	}
	slices.SortFunc(t.Caches, func(a, b Cache) int {
		if a.Level != b.Level {
			return a.Level - b.Level
		}
		if a.Type != b.Type {
			return strings.Compare(a.Type, b.Type)
		}
		return firstCPU(a.SharedCPUs) - firstCPU(b.SharedCPUs)
	})

	if t.NUMANodes, err = readNUMA(sysfs); err != nil {
		return t, err
	}
	for _, name := range HybridCorePMUs {
		cpus, err := kfs.ReadOptionalCPUList(sysfs, path.Join(pmuDevicesDir, name, "cpus"))
		if err != nil {
			return t, err
		}
		if cpus == nil {
			continue
		}
		if t.CoreTypes == nil {
			t.CoreTypes = map[string][]int{}
		}
		t.CoreTypes[name] = cpus
	}
	return t, nil
}

func firstCPU(cpus []int) int {
	if len(cpus) == 0 {
		return -1
	}
	return cpus[0]
}

// readCaches adds cpu's cache instances to caches, keyed so that an
// instance shared by several CPUs is listed once.
func readCaches(sysfs fs.FS, cpu int, caches map[string]Cache) error {
	dir := path.Join(cpuDir, "cpu"+strconv.Itoa(cpu), "cache")
	indexes, err := kfs.ReadOptionalDir(sysfs, dir)
	if err != nil {
		return err
	}
	for _, idx := range indexes {
		if !strings.HasPrefix(idx, "index") {
			continue
		}
		d := path.Join(dir, idx)
		c := Cache{Source: roofline.CacheSourceSysfs}
		if c.Level, err = kfs.ReadInt(sysfs, path.Join(d, "level"), false); err != nil {
			return err
		}
		if c.Type, err = kfs.ReadString(sysfs, path.Join(d, "type")); err != nil {
			return err
		}
		if c.LineSize, err = kfs.ReadInt(sysfs, path.Join(d, "coherency_line_size"), true); err != nil {
			return err
		}
		size, err := kfs.ReadString(sysfs, path.Join(d, "size"))
		switch {
		case err == nil:
			if c.SizeBytes, err = ParseSize(size); err != nil {
				return fmt.Errorf("%s/size: %w", d, err)
			}
		case !errors.Is(err, fs.ErrNotExist):
			return err
		}
		if c.SharedCPUs, err = kfs.ReadOptionalCPUList(sysfs, path.Join(d, "shared_cpu_list")); err != nil {
			return err
		}
		if c.SharedCPUs == nil {
			c.SharedCPUs = []int{cpu}
		}
		caches[fmt.Sprint(c.Level, c.Type, c.SharedCPUs)] = c
	}
	return nil
}

func readNUMA(sysfs fs.FS) ([]NUMANode, error) {
	const dir = "devices/system/node"
	names, err := kfs.ReadOptionalDir(sysfs, dir)
	if err != nil {
		return nil, err
	}
	var nodes []NUMANode
	for _, name := range names {
		num, ok := strings.CutPrefix(name, "node")
		id, err := strconv.Atoi(num)
		if !ok || err != nil {
			continue
		}
		s, err := kfs.ReadString(sysfs, path.Join(dir, name, "cpulist"))
		if err != nil {
			return nil, err
		}
		cpus, err := kfs.ParseCPUList(s)
		if err != nil {
			return nil, fmt.Errorf("%s/%s/cpulist: %w", dir, name, err)
		}
		nodes = append(nodes, NUMANode{ID: id, CPUs: cpus})
	}
	slices.SortFunc(nodes, func(a, b NUMANode) int { return a.ID - b.ID })
	return nodes, nil
}

// ParseSize parses a cache size as sysfs prints it ("48K", "1024K", "32M")
// or a plain byte count.
func ParseSize(s string) (int64, error) {
	mult := int64(1)
	switch {
	case strings.HasSuffix(s, "K"):
		mult, s = 1<<10, strings.TrimSuffix(s, "K")
	case strings.HasSuffix(s, "M"):
		mult, s = 1<<20, strings.TrimSuffix(s, "M")
	case strings.HasSuffix(s, "G"):
		mult, s = 1<<30, strings.TrimSuffix(s, "G")
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < 0 || v > 1<<40/mult {
		return 0, fmt.Errorf("cache size %q: %w", s, ErrMalformed)
	}
	return v * mult, nil
}

// CacheSize is the size in bytes of the level-N data or unified cache
// instance that the first online CPU uses: the per-core size for private
// caches, the whole shared size for a shared one (see Cache.SharedCPUs).
// It is 0 when sysfs does not say.
func (t Topology) CacheSize(level int) int64 {
	if len(t.Online) == 0 {
		return 0
	}
	for _, c := range t.Caches {
		if c.Level == level && (c.Type == "Data" || c.Type == "Unified") && slices.Contains(c.SharedCPUs, t.Online[0]) {
			return c.SizeBytes
		}
	}
	return 0
}

// Node is the ID of the memory node cpu belongs to, or -1 when the kernel
// shows no node holding it.
func (t Topology) Node(cpu int) int {
	for _, n := range t.NUMANodes {
		if slices.Contains(n.CPUs, cpu) {
			return n.ID
		}
	}
	return -1
}

// CoreType is the hybrid core PMU cpu belongs to ("cpu_core", "cpu_atom"),
// or "" on a machine that is not hybrid.
func (t Topology) CoreType(cpu int) string {
	for name, cpus := range t.CoreTypes {
		if slices.Contains(cpus, cpu) {
			return name
		}
	}
	return ""
}
