package roofs

import (
	"errors"
	"io/fs"
	"maps"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/rprof/rprof/internal/testutil"
	"github.com/rprof/rprof/machine"
	"github.com/rprof/rprof/roofline"
	"github.com/rprof/rprof/roofs/kernels"
)

// hostShape is a machine as rprof roofs meets it: a sysfs tree, a CPUID,
// the CPUs the process may use (a cgroup cpuset or taskset), and the cache
// hierarchy its bandwidth really has (per core for L1 and L2).
type hostShape struct {
	name    string
	tree    string       // fake machine tree; "" for partial
	sysfs   fstest.MapFS // a partial tree instead of tree
	cpuid   machine.CPUIDFunc
	allowed []int
	l1, l2  int64 // per core
	l3      int64 // shared
	// want
	scopes  [][]int
	spare   map[int]int // the one-thread scope's CPU to its spare core
	sources string      // roofs' cache_source for the widest scope
	flag    string      // a flag Measure's setup must raise ("" for none)
}

func hostShapes(t *testing.T) []hostShape {
	zen5 := testutil.RecordedCPUID(t, "vm-zen5-firecracker")
	partial := fstest.MapFS{"devices/system/cpu/online": {Data: []byte("0-1\n")}}
	return []hostShape{
		{name: "no cache directories, no cpufreq (Zen 5 Firecracker guest)", tree: "vm-zen5-firecracker", cpuid: zen5,
			allowed: []int{0, 1}, l1: 48 * kib, l2: 1 * mib, l3: 32 * mib,
			scopes: [][]int{{0}, {0, 1}}, spare: map[int]int{0: 1}, sources: "cpuid+measured", flag: roofline.FlagCacheSource},
		{name: "no cache directories and no CPUID", tree: "vm-zen5-firecracker", cpuid: noCPUID,
			allowed: []int{0, 1}, l1: 48 * kib, l2: 1 * mib, l3: 32 * mib,
			scopes: [][]int{{0}, {0, 1}}, spare: map[int]int{0: 1}, sources: "measured", flag: roofline.FlagCacheSource},
		{name: "full sysfs (Zen 4 server)", tree: "zen4", cpuid: noCPUID,
			allowed: seq(0, 15), l1: 32 * kib, l2: 1 * mib, l3: 32 * mib,
			scopes: [][]int{{0}, {0, 1, 2, 3}, {0, 1, 2, 3, 4, 5, 6, 7}}, spare: map[int]int{0: 1}, sources: "sysfs"},
		{name: "cpuset smaller than the online CPUs, without CPU 0", tree: "zen4", cpuid: noCPUID,
			allowed: []int{5, 6}, l1: 32 * kib, l2: 1 * mib, l3: 32 * mib,
			scopes: [][]int{{5}, {5, 6}}, spare: map[int]int{5: 6}, sources: "sysfs"},
		{name: "hybrid CPU (Alder Lake)", tree: "alderlake", cpuid: noCPUID,
			allowed: seq(0, 23), l1: 48 * kib, l2: 1280 * kib, l3: 30 * mib,
			scopes: [][]int{{0}, {0, 2, 4, 6, 8, 10, 12, 14, 16, 17, 18, 19, 20, 21, 22, 23}}, spare: map[int]int{0: 2}, sources: "sysfs", flag: roofline.FlagHybridScope},
		{name: "partial sysfs: no topology", sysfs: partial, cpuid: zen5,
			allowed: []int{0, 1}, l1: 48 * kib, l2: 1 * mib, l3: 32 * mib,
			scopes: [][]int{{0}, {0, 1}}, spare: map[int]int{0: 1}, sources: "cpuid+measured", flag: roofline.FlagTopologySource},
	}
}

// noCPUID is a CPUID that answers nothing: a host without it.
func noCPUID(uint32, uint32) (eax, ebx, ecx, edx uint32) { return 0, 0, 0, 0 }

func seq(lo, hi int) []int {
	var s []int
	for i := lo; i <= hi; i++ {
		s = append(s, i)
	}
	return s
}

// TestRoofsSetUpOnEveryHostShape runs what Measure does before and after
// the kernels on each host shape: topology (or its fallback), scopes
// within the allowed CPUs, cache sizes and their source, the sweep's span,
// and the ceilings of a sweep of the host's real hierarchy.
func TestRoofsSetUpOnEveryHostShape(t *testing.T) {
	ks := bandwidthKernelsOrSkip(t)
	for _, h := range hostShapes(t) {
		t.Run(h.name, func(t *testing.T) {
			sysfs, procfs := hostFS(t, h)
			topo, err := machine.ReadTopology(sysfs)
			rep := &Report{}
			if err != nil {
				topo = flatTopology(h.allowed)
				rep.flag(roofline.FlagTopologySource, err.Error())
			}
			got, err := scopes(topo, h.allowed, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.EqualFunc(got, h.scopes, slices.Equal) {
				t.Fatalf("scopes %v, want %v", got, h.scopes)
			}
			for _, s := range got {
				for _, c := range s {
					if !slices.Contains(h.allowed, c) {
						t.Errorf("scope %v pins to CPU %d outside the allowed %v", s, c, h.allowed)
					}
				}
			}
			if spare := spareCores(topo, allowedCores(topo, h.allowed), got); !maps.Equal(spare, h.spare) {
				t.Errorf("spare cores %v, want %v", spare, h.spare)
			}
			flagHybrid(rep, topo, got)
			caches := machine.ReadCaches(topo, h.cpuid)
			if caches.Source != roofline.CacheSourceSysfs || len(caches.Notes) > 0 {
				rep.flag(roofline.FlagCacheSource, cacheNote(caches))
			}
			bw := hostCeilings(t, h, ks, got, caches)
			if src := cacheSource(bw); src != h.sources {
				t.Errorf("cache_source %q, want %q", src, h.sources)
			}
			codes := map[string]bool{}
			for _, f := range rep.Roofs.Flags {
				codes[f.Code] = true
				if f.Message == "" || strings.Contains(f.Message, "\n") {
					t.Errorf("flag %s: message %q, want one line", f.Code, f.Message)
				}
			}
			if h.flag != "" && !codes[h.flag] {
				t.Errorf("flags %+v lack %s", rep.Roofs.Flags, h.flag)
			}
			// None of these trees has cpufreq, as in most VMs: the clock
			// the peaks use is measured.
			f, err := nominalFrequency(sysfs, procfs, func() float64 { return 3700 })
			if err != nil || f.GHz != 3.7 || !strings.Contains(f.Source, "measured") {
				t.Errorf("frequency %+v, %v; want the measured 3.7 GHz", f, err)
			}
		})
	}
}

// hostFS is the host's sysfs and procfs: its fake machine tree, or its
// partial sysfs with the Zen 5 guest's procfs.
func hostFS(t *testing.T, h hostShape) (sysfs, procfs fs.FS) {
	t.Helper()
	if h.tree == "" {
		_, procfs = testutil.MachineFS(t, "vm-zen5-firecracker")
		return h.sysfs, procfs
	}
	return testutil.MachineFS(t, h.tree)
}

func TestThreadsAboveTheAllowedCPUsIsAOneLineError(t *testing.T) {
	topo := machine.Topology{Sockets: 1, Cores: 8, Threads: 8, SMTSiblings: [][]int{{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}}}
	_, err := scopes(topo, []int{2, 3}, []int{4})
	if !errors.Is(err, ErrThreads) || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "thread scope 4: rprof may use 2 cores here (2 CPUs)") {
		t.Errorf("err = %v, want one line naming the scope and the 2 allowed CPUs", err)
	}
}

// hostCeilings reads the ceilings of a sweep of h's real hierarchy on each
// scope, as measureBandwidth does, and returns them as roofs.
func hostCeilings(t *testing.T, h hostShape, ks []kernels.Bandwidth, scopes [][]int, caches machine.Caches) []roofline.BandwidthRoof {
	t.Helper()
	var bw []roofline.BandwidthRoof
	for _, cpus := range scopes {
		known := knownCaches{Levels: scopeCaches(caches.Instances, cpus), Source: caches.Source}
		known.Complete = caches.Complete && len(known.Levels) > 0
		lo, hi, err := sweepSpan(known, len(cpus))
		if err != nil {
			t.Fatal(err)
		}
		q := sizeQuantum(ks, len(cpus))
		sizes, err := sweepSizes(lo, hi, 2, q)
		if err != nil {
			t.Fatal(err)
		}
		sizes = withDRAMSizes(sizes, q)
		n := int64(len(cpus))
		// The L3 the scope's threads share: every instance serving them
		// (the Zen 4 server's 8 cores span two), as the tree says.
		l3 := h.l3
		if i := slices.IndexFunc(known.Levels, func(l cacheLevel) bool { return l.Name == "L3" }); i >= 0 {
			l3 = known.Levels[i].Bytes
		}
		steps := []step{{h.l1 * n, 200 * float64(n)}, {h.l2 * n, 100 * float64(n)}, {l3, 60 * float64(n)}}
		pts := syntheticAt(sizes, steps, 25, nil)
		plateaus, levels, _, err := ceilings(pts, known)
		if err != nil {
			t.Fatal(err)
		}
		names := levelNames(plateaus)
		want := []string{"L1", "L2", "L3", "DRAM"}
		if h.flag == roofline.FlagHybridScope && n > 1 {
			// P-cores' and E-cores' L2s together are 14 MiB of a 30
			// MiB L3: too close for an L3 window, which is flagged.
			want = []string{"L1", "L2", "DRAM"}
		}
		if !slices.Equal(names, want) {
			t.Fatalf("%d threads: levels %v, want %v", n, names, want)
		}
		for _, p := range plateaus {
			r := roofline.BandwidthRoof{Level: p.Level, Threads: int(n), GBytesPerS: p.GBytesPerS}
			if i := slices.IndexFunc(levels, func(l levelSize) bool { return l.Name == p.Level }); i >= 0 {
				r.LevelBytes, r.LevelSource = levels[i].Bytes, levels[i].Source
			}
			bw = append(bw, r)
		}
	}
	return bw
}
