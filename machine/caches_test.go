package machine

import (
	"slices"
	"strings"
	"testing"

	"github.com/rprof/rprof/internal/testutil"
	"github.com/rprof/rprof/roofline"
)

// recordedCPUID answers CPUID from a recording under testdata/cpuid.
func recordedCPUID(t *testing.T, name string) CPUIDFunc { return testutil.RecordedCPUID(t, name) }

// intelCPUID is a constructed Intel CPU answering leaf 4 with the given
// levels (not recorded: the layout of leaf 4 with made-up geometry).
func intelCPUID(levels []CPUIDCache) CPUIDFunc {
	return func(leaf, sub uint32) (a, b, c, d uint32) {
		switch {
		case leaf == 0:
			return 0x16, 0x756e6547, 0x6c65746e, 0x49656e69 // "GenuineIntel"
		case leaf == 4 && int(sub) < len(levels):
			l := levels[sub]
			typ := map[string]uint32{"Data": 1, "Instruction": 2, "Unified": 3}[l.Type]
			ways, line := uint32(8), uint32(64)
			sets := uint32(l.SizeBytes) / ways / line
			return typ | uint32(l.Level)<<5 | uint32(l.SharedBy-1)<<14, (ways-1)<<22 | (line - 1), sets - 1, 0
		}
		return 0, 0, 0, 0
	}
}

func sizesByLevel(cs []Cache) map[int][]int64 {
	out := map[int][]int64{}
	for _, c := range cs {
		if c.Type != "Instruction" {
			out[c.Level] = append(out[c.Level], c.SizeBytes)
		}
	}
	return out
}

func TestCPUIDCachesOfTheZen5GuestRejectItsL3(t *testing.T) {
	cpuid := recordedCPUID(t, "vm-zen5-firecracker")
	all := CPUIDCaches(cpuid)
	want := []int64{48 << 10, 1 << 20, 1016 * 512 << 10}
	if len(all) != 3 || all[0].SizeBytes != want[0] || all[1].SizeBytes != want[1] || all[2].SizeBytes != want[2] {
		t.Fatalf("CPUIDCaches = %+v, want L1D 48 KiB, L2 1 MiB, L3 508 MiB from 0x80000005/6", all)
	}
	sysfs, _ := machineFS(t, "vm-zen5-firecracker")
	topo, err := ReadTopology(sysfs)
	if err != nil {
		t.Fatal(err)
	}
	c := ReadCaches(topo, cpuid)
	if c.Source != roofline.CacheSourceCPUID || c.Complete {
		t.Errorf("source %q complete %v, want cpuid and incomplete (its L3 is rejected)", c.Source, c.Complete)
	}
	got := sizesByLevel(c.Instances)
	if !slices.Equal(got[1], []int64{48 << 10, 48 << 10}) || !slices.Equal(got[2], []int64{1 << 20, 1 << 20}) || got[3] != nil {
		t.Errorf("instances by level %v, want two private L1D of 48 KiB and L2 of 1 MiB, no L3", got)
	}
	for _, inst := range c.Instances {
		if inst.Source != roofline.CacheSourceCPUID || len(inst.SharedCPUs) != 1 {
			t.Errorf("instance %+v: want CPUID's, private to one CPU", inst)
		}
	}
	if !slices.ContainsFunc(c.Notes, func(n string) bool { return strings.Contains(n, "L3 is 508 MiB") }) {
		t.Errorf("notes %q do not say the L3 was rejected", c.Notes)
	}
}

func TestSysfsWinsOverCPUIDAndTheDisagreementIsNoted(t *testing.T) {
	sysfs, _ := machineFS(t, "zen4")
	topo, err := ReadTopology(sysfs)
	if err != nil {
		t.Fatal(err)
	}
	c := ReadCaches(topo, recordedCPUID(t, "vm-zen5-firecracker"))
	if c.Source != roofline.CacheSourceSysfs || !c.Complete || sizesByLevel(c.Instances)[1][0] != 32<<10 {
		t.Errorf("caches %+v, want sysfs's complete list with 32 KiB L1D", c)
	}
	if len(c.Notes) != 2 || !strings.Contains(c.Notes[0], "L1 is 48 KiB, sysfs 32 KiB: sysfs's size is used") || !strings.Contains(c.Notes[1], "L3") {
		t.Errorf("notes %q, want the L1 and L3 disagreements (L2 agrees) with sysfs winning", c.Notes)
	}
}

func TestCPUIDLeaf4GivesSizesAndSharing(t *testing.T) {
	levels := []CPUIDCache{
		{Level: 1, Type: "Data", SizeBytes: 48 << 10, SharedBy: 2},
		{Level: 1, Type: "Instruction", SizeBytes: 32 << 10, SharedBy: 2},
		{Level: 2, Type: "Unified", SizeBytes: 2 << 20, SharedBy: 2},
		{Level: 3, Type: "Unified", SizeBytes: 105 << 20, SharedBy: 16},
	}
	got := CPUIDCaches(intelCPUID(levels))
	if len(got) != 4 {
		t.Fatalf("got %+v, want 4 levels", got)
	}
	for i, g := range got {
		if g.Level != levels[i].Level || g.Type != levels[i].Type || g.SizeBytes != levels[i].SizeBytes || g.SharedBy != levels[i].SharedBy || g.LineSize != 64 {
			t.Errorf("level %d: %+v, want %+v", i, g, levels[i])
		}
	}
	topo := Topology{Online: seq(0, 15), SMTSiblings: [][]int{{0, 1}, {2, 3}}}
	c := ReadCaches(topo, intelCPUID(levels))
	if c.Source != roofline.CacheSourceCPUID || !c.Complete {
		t.Errorf("source %q complete %v, want a complete CPUID list", c.Source, c.Complete)
	}
	if n := len(sizesByLevel(c.Instances)[1]); n != 8 {
		t.Errorf("%d L1D instances for 16 CPUs sharing by 2, want 8", n)
	}
	if l3 := sizesByLevel(c.Instances)[3]; len(l3) != 1 {
		t.Errorf("L3 instances %v, want one shared by all 16 CPUs", l3)
	}
}

func TestPlausibleCPUIDSizes(t *testing.T) {
	const K, M = 1 << 10, 1 << 20
	tests := []struct {
		name   string
		sizes  []int64 // L1D, L2, L3
		kept   int
		reason string
	}{
		{"zen5 server", []int64{48 * K, 1 * M, 32 * M}, 3, ""},
		{"sapphire rapids", []int64{48 * K, 2 * M, 105 * M}, 3, ""},
		{"icelake 1.25 MiB L2", []int64{48 * K, 1280 * K, 60 * M}, 3, ""},
		{"guest's 508 MiB L3", []int64{48 * K, 1 * M, 1016 * 512 * K}, 2, "outside"},
		{"odd size", []int64{48 * K, 1 * M, 127 * M}, 2, "powers of two"},
		{"L2 not above L1", []int64{512 * K, 256 * K, 32 * M}, 1, "not larger than L1"},
		{"L1 of 1 KiB", []int64{1 * K, 1 * M, 32 * M}, 0, "outside"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var cs []CPUIDCache
			for i, s := range tt.sizes {
				cs = append(cs, CPUIDCache{Level: i + 1, Type: "Unified", SizeBytes: s, Leaf: "test"})
			}
			kept, rejected := plausibleCPUID(cs)
			if len(kept) != tt.kept {
				t.Errorf("kept %d levels, want %d (rejected: %q)", len(kept), tt.kept, rejected)
			}
			if tt.reason != "" && (len(rejected) == 0 || !strings.Contains(rejected[0], tt.reason)) {
				t.Errorf("rejected %q, want the first naming %q", rejected, tt.reason)
			}
			if len(rejected) != len(tt.sizes)-tt.kept {
				t.Errorf("rejected %q: every level past the first rejected one is left out with a reason", rejected)
			}
		})
	}
}

func TestNoCacheSizeAnywhereIsSaid(t *testing.T) {
	sysfs, _ := machineFS(t, "vm-zen5-firecracker")
	topo, err := ReadTopology(sysfs)
	if err != nil {
		t.Fatal(err)
	}
	c := ReadCaches(topo, nil)
	if c.Source != "" || len(c.Instances) != 0 || len(c.Notes) != 1 || !strings.Contains(c.Notes[0], "no cache sizes") {
		t.Errorf("caches %+v, want none and a note saying so", c)
	}
}

func TestHostCPUIDReadsAVendor(t *testing.T) {
	if HostCPUID == nil {
		t.Skip("no CPUID on this architecture")
	}
	_, b, c, d := HostCPUID(0, 0)
	vendor := string(le(b)) + string(le(d)) + string(le(c))
	if strings.Trim(vendor, "\x00") == "" {
		t.Errorf("CPUID(0) vendor %q", vendor)
	}
}
