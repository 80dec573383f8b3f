package machine

import (
	"errors"
	"io/fs"
	"os"
	"reflect"
	"testing"
	"testing/fstest"
)

func TestReadTopologyCountsEveryMachine(t *testing.T) {
	const K, M = 1 << 10, 1 << 20
	tests := []struct {
		machine                  string
		sockets, cores, threads  int
		smtGroups, numa          int
		l1, l2, l3               int64
		coreTypes                map[string][]int
		firstSiblings, firstNode []int
	}{
		{"skylake-sp", 2, 8, 16, 8, 2, 32 * K, 1 * M, 39424 * K, nil, []int{0, 8}, []int{0, 1, 2, 3, 8, 9, 10, 11}},
		{"icelake-sp", 2, 8, 16, 8, 2, 48 * K, 1280 * K, 60 * M, nil, []int{0, 8}, []int{0, 1, 2, 3, 8, 9, 10, 11}},
		{"sapphirerapids", 2, 8, 16, 8, 2, 48 * K, 2 * M, 105 * M, nil, []int{0, 8}, []int{0, 1, 2, 3, 8, 9, 10, 11}},
		{"graniterapids-oldkernel", 2, 8, 16, 8, 2, 48 * K, 2 * M, 504 * M, nil, []int{0, 8}, []int{0, 1, 2, 3, 8, 9, 10, 11}},
		{"graniterapids-newkernel", 2, 8, 16, 8, 2, 48 * K, 2 * M, 504 * M, nil, []int{0, 8}, []int{0, 1, 2, 3, 8, 9, 10, 11}},
		{"alderlake", 1, 16, 24, 16, 1, 48 * K, 1280 * K, 30 * M,
			map[string][]int{"cpu_core": seq(0, 15), "cpu_atom": seq(16, 23)}, []int{0, 1}, seq(0, 23)},
		{"zen3", 2, 8, 16, 8, 2, 32 * K, 512 * K, 32 * M, nil, []int{0, 8}, []int{0, 1, 2, 3, 8, 9, 10, 11}},
		{"zen4", 2, 8, 16, 8, 2, 32 * K, 1 * M, 32 * M, nil, []int{0, 8}, []int{0, 1, 2, 3, 8, 9, 10, 11}},
		{"zen5", 1, 4, 8, 4, 1, 48 * K, 1 * M, 32 * M, nil, []int{0, 4}, seq(0, 7)},
		{"neoverse-v2", 2, 8, 8, 8, 2, 64 * K, 1 * M, 117 * M, nil, []int{0}, seq(0, 3)},
		{"vm-zen5", 1, 2, 2, 2, 1, 32 * K, 1 * M, 32 * M, nil, []int{0}, seq(0, 1)},
		// No cpuN/cache directories: sysfs knows no cache size.
		{"vm-zen5-firecracker", 1, 2, 2, 2, 1, 0, 0, 0, nil, []int{0}, seq(0, 1)},
		// The Intel guest's sysfs declares an L3 of 480 MiB (the sweep
		// measures 96 to 192 MiB).
		{"vm-intel-amx", 1, 2, 2, 2, 1, 48 * K, 2 * M, 480 * M, nil, []int{0}, seq(0, 1)},
	}
	for _, tt := range tests {
		t.Run(tt.machine, func(t *testing.T) {
			sysfs, _ := machineFS(t, tt.machine)
			topo, err := ReadTopology(sysfs)
			if err != nil {
				t.Fatal(err)
			}
			if topo.Sockets != tt.sockets || topo.Cores != tt.cores || topo.Threads != tt.threads {
				t.Errorf("sockets/cores/threads = %d/%d/%d, want %d/%d/%d",
					topo.Sockets, topo.Cores, topo.Threads, tt.sockets, tt.cores, tt.threads)
			}
			if len(topo.Online) != tt.threads {
				t.Errorf("%d online CPUs, want %d", len(topo.Online), tt.threads)
			}
			if len(topo.SMTSiblings) != tt.smtGroups || !reflect.DeepEqual(topo.SMTSiblings[0], tt.firstSiblings) {
				t.Errorf("SMT groups %v, want %d starting %v", topo.SMTSiblings, tt.smtGroups, tt.firstSiblings)
			}
			if len(topo.NUMANodes) != tt.numa || !reflect.DeepEqual(topo.NUMANodes[0].CPUs, tt.firstNode) {
				t.Errorf("NUMA nodes %v, want %d, node 0 = %v", topo.NUMANodes, tt.numa, tt.firstNode)
			}
			for level, want := range map[int]int64{1: tt.l1, 2: tt.l2, 3: tt.l3} {
				if got := topo.CacheSize(level); got != want {
					t.Errorf("CacheSize(%d) = %d, want %d", level, got, want)
				}
			}
			if topo.CacheSize(4) != 0 {
				t.Errorf("CacheSize(4) = %d, want 0 (no L4)", topo.CacheSize(4))
			}
			if !reflect.DeepEqual(topo.CoreTypes, tt.coreTypes) {
				t.Errorf("CoreTypes = %v, want %v", topo.CoreTypes, tt.coreTypes)
			}
		})
	}
}

func seq(lo, hi int) []int {
	var s []int
	for i := lo; i <= hi; i++ {
		s = append(s, i)
	}
	return s
}

func TestReadTopologyListsSharedCachesOnce(t *testing.T) {
	sysfs, _ := machineFS(t, "alderlake")
	topo, err := ReadTopology(sysfs)
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, c := range topo.Caches {
		count[string(rune('0'+c.Level))+c.Type]++
		if c.LineSize != 64 {
			t.Errorf("cache %+v: line size %d, want 64", c, c.LineSize)
		}
	}
	// 8 P-cores and 8 E-cores have private L1s; P-cores a private L2, the
	// E-cores one L2 per 4-core cluster; one L3.
	want := map[string]int{"1Data": 16, "1Instruction": 16, "2Unified": 10, "3Unified": 1}
	if !reflect.DeepEqual(count, want) {
		t.Errorf("cache instances %v, want %v", count, want)
	}
	if l2 := topo.Caches[len(topo.Caches)-2]; l2.SizeBytes != 2<<20 || !reflect.DeepEqual(l2.SharedCPUs, seq(20, 23)) {
		t.Errorf("last L2 = %+v, want the 2 MiB E-core cluster L2 of CPUs 20-23", l2)
	}
}

func TestReadTopologyLive(t *testing.T) {
	if _, err := os.Stat("/sys/devices/system/cpu/online"); err != nil {
		t.Skipf("no Linux sysfs here: %v", err)
	}
	topo, err := ReadTopology(os.DirFS("/sys"))
	if err != nil {
		t.Fatal(err)
	}
	if topo.Threads < 1 || topo.Cores < 1 || topo.Cores > topo.Threads || topo.Sockets < 1 || topo.Sockets > topo.Cores {
		t.Errorf("implausible live topology %+v", topo)
	}
}

func TestReadTopologyRejectsPartialTrees(t *testing.T) {
	good := func() fstest.MapFS {
		return fstest.MapFS{
			"devices/system/cpu/online":                                {Data: []byte("0-1\n")},
			"devices/system/cpu/cpu0/topology/physical_package_id":     {Data: []byte("0\n")},
			"devices/system/cpu/cpu0/topology/core_id":                 {Data: []byte("0\n")},
			"devices/system/cpu/cpu1/topology/physical_package_id":     {Data: []byte("0\n")},
			"devices/system/cpu/cpu1/topology/core_id":                 {Data: []byte("1\n")},
			"devices/system/cpu/cpu0/cache/index0/level":               {Data: []byte("1\n")},
			"devices/system/cpu/cpu0/cache/index0/type":                {Data: []byte("Data\n")},
			"devices/system/cpu/cpu0/cache/index0/size":                {Data: []byte("48K\n")},
			"devices/system/node/node0/cpulist":                        {Data: []byte("0-1\n")},
			"bus/event_source/devices/cpu_atom/cpus":                   {Data: []byte("1\n")},
			"devices/system/cpu/cpu1/topology/thread_siblings_list":    {Data: []byte("1\n")},
			"devices/system/cpu/cpu0/cache/index0/coherency_line_size": {Data: []byte("64\n")},
		}
	}
	topo, err := ReadTopology(good())
	if err != nil {
		t.Fatalf("minimal tree: %v", err)
	}
	if topo.Cores != 2 || topo.CacheSize(1) != 48<<10 || !reflect.DeepEqual(topo.CoreTypes, map[string][]int{"cpu_atom": {1}}) {
		t.Errorf("minimal tree read as %+v", topo)
	}

	tests := []struct {
		name   string
		edit   func(fstest.MapFS)
		absent bool
	}{
		{"no online file", func(m fstest.MapFS) { delete(m, "devices/system/cpu/online") }, true},
		{"online CPU without topology", func(m fstest.MapFS) { delete(m, "devices/system/cpu/cpu1/topology/core_id") }, true},
		{"online list malformed", func(m fstest.MapFS) { m["devices/system/cpu/online"].Data = []byte("0-x") }, false},
		{"online list empty", func(m fstest.MapFS) { m["devices/system/cpu/online"].Data = []byte("\n") }, false},
		{"package id not a number", func(m fstest.MapFS) {
			m["devices/system/cpu/cpu0/topology/physical_package_id"].Data = []byte("zero")
		}, false},
		{"cache size malformed", func(m fstest.MapFS) { m["devices/system/cpu/cpu0/cache/index0/size"].Data = []byte("48Q") }, false},
		{"cache without level", func(m fstest.MapFS) { delete(m, "devices/system/cpu/cpu0/cache/index0/level") }, true},
		{"node cpulist malformed", func(m fstest.MapFS) { m["devices/system/node/node0/cpulist"].Data = []byte("1-0") }, false},
		{"node without cpulist", func(m fstest.MapFS) {
			delete(m, "devices/system/node/node0/cpulist")
			m["devices/system/node/node0/meminfo"] = &fstest.MapFile{}
		}, true},
		{"hybrid cpus malformed", func(m fstest.MapFS) { m["bus/event_source/devices/cpu_atom/cpus"].Data = []byte(",") }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := good()
			tt.edit(m)
			topo, err := ReadTopology(m)
			if err == nil {
				t.Fatalf("ReadTopology = %+v, want an error", topo)
			}
			if tt.absent != errors.Is(err, fs.ErrNotExist) || !tt.absent && !errors.Is(err, ErrMalformed) {
				t.Errorf("error %q: want ErrNotExist for a missing file, ErrMalformed otherwise", err)
			}
		})
	}
}

func TestParseSize(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"48K", 48 << 10, true},
		{"32768K", 32 << 20, true},
		{"2M", 2 << 20, true},
		{"1G", 1 << 30, true},
		{"4096", 4096, true},
		{"", 0, false},
		{"K", 0, false},
		{"-1K", 0, false},
		{"99999999999999G", 0, false},
	}
	for _, tt := range tests {
		got, err := ParseSize(tt.in)
		if got != tt.want || (err == nil) != tt.ok {
			t.Errorf("ParseSize(%q) = %d, %v; want %d, ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

func TestNodeAndCoreTypeOfACPU(t *testing.T) {
	topo := Topology{
		NUMANodes: []NUMANode{{ID: 0, CPUs: []int{0, 1}}, {ID: 3, CPUs: []int{2, 3}}},
		CoreTypes: map[string][]int{"cpu_core": {0, 2}, "cpu_atom": {1, 3}},
	}
	tests := []struct {
		cpu      int
		node     int
		coreType string
	}{
		{0, 0, "cpu_core"},
		{3, 3, "cpu_atom"},
		{7, -1, ""}, // a CPU the topology does not list
	}
	for _, tt := range tests {
		if n, k := topo.Node(tt.cpu), topo.CoreType(tt.cpu); n != tt.node || k != tt.coreType {
			t.Errorf("CPU %d: node %d, core type %q; want %d, %q", tt.cpu, n, k, tt.node, tt.coreType)
		}
	}
	if n, k := (Topology{}).Node(0), (Topology{}).CoreType(0); n != -1 || k != "" {
		t.Errorf("a machine without nodes or core types: node %d, core type %q; want -1, \"\"", n, k)
	}
}
