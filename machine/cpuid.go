package machine

import (
	"fmt"
	"math/bits"

	"github.com/rprof/rprof/internal/unit"
)

// CPUIDFunc executes the CPUID instruction for a leaf and subleaf. Tests
// pass recorded values; HostCPUID is the real instruction.
type CPUIDFunc func(leaf, subleaf uint32) (eax, ebx, ecx, edx uint32)

// HostCPUID runs CPUID on this CPU; nil where the architecture has none.
var HostCPUID CPUIDFunc = hostCPUID

// CPUIDCache is one cache level as CPUID describes it.
type CPUIDCache struct {
	Level     int
	Type      string // "Data", "Instruction" or "Unified", as sysfs names them
	SizeBytes int64
	LineSize  int
	// SharedBy is how many logical CPUs share one instance (leaves 4 and
	// 0x8000001D); 0 when the leaf does not say (0x80000005/6).
	SharedBy int
	// Leaf names the CPUID leaf the figures come from, e.g.
	// "0x80000006 EDX".
	Leaf string
}

// Leaves holding the cache descriptions (Intel SDM vol. 2A, CPUID; AMD
// APM vol. 3, appendix E).
const (
	leafIntelCaches  = 0x4
	leafExtMax       = 0x80000000
	leafExtFeatures  = 0x80000001
	leafAMDL1        = 0x80000005
	leafAMDL2L3      = 0x80000006
	leafAMDCaches    = 0x8000001D
	amdTopoExtBit    = 22 // 0x80000001 ECX: TOPOEXT, leaf 0x8000001D valid
	maxCacheSubleafs = 16
)

// CPUIDCaches reads the cache levels from CPUID: Intel leaf 4; AMD (and
// Hygon) leaf 0x8000001D, else 0x80000005 and 0x80000006, which give L1D,
// L2 and L3 sizes without sharing. It returns nil for other vendors or
// where cpuid is nil.
func CPUIDCaches(cpuid CPUIDFunc) []CPUIDCache {
	if cpuid == nil {
		return nil
	}
	maxLeaf, b, c, d := cpuid(0, 0)
	vendor := string(le(b)) + string(le(d)) + string(le(c))
	switch vendor {
	case "GenuineIntel":
		if maxLeaf < leafIntelCaches {
			return nil
		}
		return deterministicCaches(cpuid, leafIntelCaches)
	case "AuthenticAMD", "HygonGenuine":
		maxExt, _, _, _ := cpuid(leafExtMax, 0)
		if maxExt >= leafAMDCaches {
			if _, _, ecx, _ := cpuid(leafExtFeatures, 0); ecx&(1<<amdTopoExtBit) != 0 {
				if cs := deterministicCaches(cpuid, leafAMDCaches); len(cs) > 0 {
					return cs
				}
			}
		}
		if maxExt < leafAMDL2L3 {
			return nil
		}
		return amdLegacyCaches(cpuid)
	}
	return nil
}

func le(v uint32) []byte { return []byte{byte(v), byte(v >> 8), byte(v >> 16), byte(v >> 24)} }

// deterministicCaches walks the subleafs of leaf 4 (Intel) or 0x8000001D
// (AMD), which share one layout: EAX[4:0] type (0 ends the list), EAX[7:5]
// level, EAX[25:14] CPUs sharing minus one, EBX ways, partitions and line
// size minus one, ECX sets minus one.
func deterministicCaches(cpuid CPUIDFunc, leaf uint32) []CPUIDCache {
	var out []CPUIDCache
	for sub := uint32(0); sub < maxCacheSubleafs; sub++ {
		a, b, c, _ := cpuid(leaf, sub)
		var typ string
		switch a & 0x1f {
		case 0:
			return out
		case 1:
			typ = "Data"
		case 2:
			typ = "Instruction"
		case 3:
			typ = "Unified"
		default:
			continue
		}
		ways := int64(b>>22&0x3ff) + 1
		parts := int64(b>>12&0x3ff) + 1
		line := int64(b&0xfff) + 1
		sets := int64(c) + 1
		out = append(out, CPUIDCache{
			Level: int(a >> 5 & 7), Type: typ, SizeBytes: ways * parts * line * sets, LineSize: int(line),
			SharedBy: int(a>>14&0xfff) + 1, Leaf: fmt.Sprintf("%#x subleaf %d", leaf, sub),
		})
	}
	return out
}

// amdLegacyCaches reads 0x80000005 ECX (L1D: size in KiB in [31:24], line
// in [7:0]) and 0x80000006 ECX (L2: KiB in [31:16]) and EDX (L3: units of
// 512 KiB in [31:18], the whole processor's). A zero size means no cache.
func amdLegacyCaches(cpuid CPUIDFunc) []CPUIDCache {
	var out []CPUIDCache
	_, _, l1, _ := cpuid(leafAMDL1, 0)
	if kib := int64(l1 >> 24); kib > 0 {
		out = append(out, CPUIDCache{Level: 1, Type: "Data", SizeBytes: kib << 10, LineSize: int(l1 & 0xff), Leaf: "0x80000005 ECX"})
	}
	_, _, l2, l3 := cpuid(leafAMDL2L3, 0)
	if kib := int64(l2 >> 16); kib > 0 {
		out = append(out, CPUIDCache{Level: 2, Type: "Unified", SizeBytes: kib << 10, LineSize: int(l2 & 0xff), Leaf: "0x80000006 ECX"})
	}
	if units := int64(l3 >> 18); units > 0 {
		out = append(out, CPUIDCache{Level: 3, Type: "Unified", SizeBytes: units << 19, LineSize: int(l3 & 0xff), Leaf: "0x80000006 EDX"})
	}
	return out
}

// Bounds of a plausible cache instance per level. The largest real ones
// known: L1D 64 KiB (Neoverse), L2 up to 4 MiB per core (client parts, up
// to 16 MiB per Arm cluster), L3 96 MiB per Zen 4 X3D CCD and 480 MiB per
// Granite Rapids socket; a guest's CPUID may claim more than all of them
// (docs/roofs.md, "Where the design choices came from").
var plausibleBytes = map[int][2]int64{
	1: {4 << 10, 512 << 10},
	2: {64 << 10, 64 << 20},
	3: {1 << 20, 480 << 20},
}

// maxSizeBits bounds the set bits of a size in KiB: real sizes are a few
// powers of two (48 KiB = 32+16, 1.25 MiB, 105 MiB = 64+32+8+1), where a
// guest's made-up size has more.
const maxSizeBits = 5

// plausibleCPUID splits CPUID's data and unified levels into those to
// trust and reasons to reject the others: a size outside its level's
// bounds, with too many set bits, or not larger than the level below. The
// levels kept are L1 upwards without gaps.
func plausibleCPUID(cs []CPUIDCache) (kept []CPUIDCache, rejected []string) {
	var prev int64
	gap := false
	for _, c := range cs {
		if c.Type == "Instruction" {
			continue
		}
		b, known := plausibleBytes[c.Level]
		var why string
		switch {
		case gap:
			why = "a level below it was rejected"
		case !known:
			why = "rprof checks only L1 to L3"
		case c.SizeBytes < b[0] || c.SizeBytes > b[1]:
			why = fmt.Sprintf("outside %s to %s", unit.Bytes(b[0]), unit.Bytes(b[1]))
		case c.SizeBytes%1024 != 0 || bits.OnesCount64(uint64(c.SizeBytes>>10)) > maxSizeBits:
			why = "not a sum of a few powers of two"
		case c.SizeBytes <= prev:
			why = fmt.Sprintf("not larger than L%d's %s", c.Level-1, unit.Bytes(prev))
		}
		if why != "" {
			rejected = append(rejected, fmt.Sprintf("CPUID %s says L%d is %s: %s", c.Leaf, c.Level, unit.Bytes(c.SizeBytes), why))
			gap = true
			continue
		}
		kept = append(kept, c)
		prev = c.SizeBytes
	}
	return kept, rejected
}
