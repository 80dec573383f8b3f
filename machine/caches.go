package machine

import (
	"fmt"
	"slices"

	"github.com/rprof/rprof/internal/unit"
	"github.com/rprof/rprof/roofline"
)

// Caches are the machine's cache instances from the best source there is,
// and what was found on the way.
type Caches struct {
	// Instances are the data, unified and instruction caches with a size,
	// each once, as Topology.Caches lists them.
	Instances []Cache
	// Source is roofline.CacheSourceSysfs or CacheSourceCPUID; "" when
	// neither gave a trustworthy size.
	Source string
	// Complete says Instances hold every level the machine has: sysfs
	// lists them all, and CPUID did when none of its levels was rejected.
	// Where it is false, levels past the last instance are unknown.
	Complete bool
	// Notes say why a source was not used or which values were rejected,
	// and where CPUID disagrees with sysfs (sysfs wins).
	Notes []string
}

// ReadCaches chooses the cache sizes: sysfs's where it lists any; else
// CPUID's plausible levels (L1 up, without gaps), assigned to the online
// CPUs (a level CPUID does not say the sharing of is private to a core
// when it is L1 or L2, shared by all online CPUs when L3). cpuid may be
// nil (no CPUID, or tests of sysfs alone).
func ReadCaches(topo Topology, cpuid CPUIDFunc) Caches {
	fromCPUID := CPUIDCaches(cpuid)
	if sized := sizedCaches(topo.Caches); len(sized) > 0 {
		c := Caches{Instances: sized, Source: roofline.CacheSourceSysfs, Complete: true}
		c.Notes = disagreements(topo, fromCPUID)
		return c
	}
	if cpuid == nil {
		return Caches{Notes: []string{"no cache sizes: sysfs has no cpuN/cache directories and CPUID was not read (none on this CPU, or a captured tree)"}}
	}
	kept, rejected := plausibleCPUID(fromCPUID)
	c := Caches{Notes: append([]string{"sysfs has no cpuN/cache directories"}, rejected...)}
	if len(kept) == 0 {
		c.Notes = append(c.Notes, "CPUID gave no cache size to trust")
		return c
	}
	c.Source, c.Complete = roofline.CacheSourceCPUID, len(rejected) == 0
	for _, k := range kept {
		for _, cpus := range sharing(topo, k) {
			c.Instances = append(c.Instances, Cache{Level: k.Level, Type: k.Type, SizeBytes: k.SizeBytes,
				SharedCPUs: cpus, LineSize: k.LineSize, Source: roofline.CacheSourceCPUID})
		}
	}
	return c
}

func sizedCaches(cs []Cache) []Cache {
	var out []Cache
	for _, c := range cs {
		if c.SizeBytes > 0 {
			out = append(out, c)
		}
	}
	return out
}

// sharing groups the online CPUs by the instance of c they use: SharedBy
// consecutive CPUs (as the APIC IDs run) where CPUID says, else per core
// for L1 and L2 and all CPUs for L3.
func sharing(topo Topology, c CPUIDCache) [][]int {
	switch {
	case c.SharedBy > 0:
		var out [][]int
		for cpus := range slices.Chunk(topo.Online, c.SharedBy) {
			out = append(out, cpus)
		}
		return out
	case c.Level <= 2 && len(topo.SMTSiblings) > 0:
		return topo.SMTSiblings
	default:
		return [][]int{topo.Online}
	}
}

// disagreements compares CPUID's sizes with sysfs's, level by level, for
// the first online CPU.
func disagreements(topo Topology, fromCPUID []CPUIDCache) []string {
	var notes []string
	for _, c := range fromCPUID {
		if c.Type == "Instruction" {
			continue
		}
		s := topo.CacheSize(c.Level)
		if s > 0 && s != c.SizeBytes {
			notes = append(notes, fmt.Sprintf("CPUID %s says L%d is %s, sysfs %s: sysfs's size is used", c.Leaf, c.Level, unit.Bytes(c.SizeBytes), unit.Bytes(s)))
		}
	}
	return notes
}
