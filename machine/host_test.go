package machine

import (
	"io/fs"
	"sync"
	"testing"

	"github.com/rprof/rprof/internal/testutil"
	"github.com/rprof/rprof/roofline"
)

// countingFS counts the opens of each file of a tree.
type countingFS struct {
	fs.FS
	mu    sync.Mutex
	opens map[string]int
}

func (c *countingFS) Open(name string) (fs.File, error) {
	c.mu.Lock()
	c.opens[name]++
	c.mu.Unlock()
	return c.FS.Open(name)
}

func TestHostReadsACapturedTreeOnceAndWithoutThisCPUsCPUID(t *testing.T) {
	tests := []struct {
		machine   string
		modelName string
		l3        int64
	}{
		// The guest whose sysfs claims a 480 MiB L3: a captured tree's
		// declaration is read as is, CPUID being this CPU's, not its.
		{"vm-intel-amx", "Intel Xeon Processor (Icelake)", 480 << 20},
		{"zen4", "AMD EPYC 9654 96-Core Processor", 32 << 20},
	}
	for _, tt := range tests {
		t.Run(tt.machine, func(t *testing.T) {
			sysfs, procfs := testutil.MachineFS(t, tt.machine)
			cs, cp := &countingFS{FS: sysfs, opens: map[string]int{}}, &countingFS{FS: procfs, opens: map[string]int{}}
			h := TreeHost(cs, cp)
			if h.Live || h.CPUID() != nil {
				t.Fatalf("a captured tree's host is live (%v) or asks CPUID", h.Live)
			}
			for range 3 {
				cpu, err := h.CPU()
				if err != nil || cpu.ModelName != tt.modelName {
					t.Fatalf("CPU %q, %v; want %q", cpu.ModelName, err, tt.modelName)
				}
				if _, err := h.Topology(); err != nil {
					t.Fatal(err)
				}
				c := h.Caches()
				if c.Source != roofline.CacheSourceSysfs || h.Describe().CPU.ModelName != tt.modelName {
					t.Fatalf("caches from %q, machine %+v; want sysfs's and the tree's CPU", c.Source, h.Describe().CPU)
				}
			}
			topo, _ := h.Topology()
			if got := topo.CacheSize(3); got != tt.l3 {
				t.Errorf("L3 %d bytes, want the tree's %d", got, tt.l3)
			}
			if n := cp.opens["cpuinfo"]; n != 1 {
				t.Errorf("cpuinfo opened %d times, want once", n)
			}
			if n := cs.opens["devices/system/cpu/online"]; n != 1 {
				t.Errorf("the online CPUs read %d times, want once", n)
			}
		})
	}
}

func TestHostTakesEffectiveCachesOnlyFromItsOwnCPUsRoofs(t *testing.T) {
	h := TreeHost(testutil.MachineFS(t, "vm-intel-amx"))
	levels := []roofline.CacheLevel{{Level: "L3", Threads: 1, Bytes: 96 << 20, Source: roofline.CacheSourceMeasured,
		DeclaredBytes: 480 << 20, DeclaredSource: roofline.CacheSourceSysfs}}
	doc := func(model string) *roofline.Roofs {
		return &roofline.Roofs{Machine: roofline.Machine{CPU: roofline.CPU{ModelName: model}}, Caches: levels}
	}
	if got := h.EffectiveCaches(doc("Intel Xeon Processor (Icelake)")); len(got) != 1 || got[0].Bytes != 96<<20 {
		t.Errorf("own CPU's roofs: %+v, want its measured L3", got)
	}
	for _, r := range []*roofline.Roofs{nil, doc("AMD EPYC 9654 96-Core Processor"), {Machine: doc("Intel Xeon Processor (Icelake)").Machine}} {
		if got := h.EffectiveCaches(r); got != nil {
			t.Errorf("roofs %+v: effective caches %+v, want none", r, got)
		}
	}
}

func TestNewHostIsLiveOnlyForTheKernelsOwnTrees(t *testing.T) {
	for _, tt := range []struct {
		sysfs, procfs string
		live          bool
	}{{DefaultSysfs, DefaultProcfs, true}, {"/tmp", DefaultProcfs, false}, {DefaultSysfs, "/tmp", false}} {
		if h := NewHost(tt.sysfs, tt.procfs); h.Live != tt.live {
			t.Errorf("NewHost(%s, %s).Live = %v, want %v", tt.sysfs, tt.procfs, h.Live, tt.live)
		}
	}
	var none *Host
	if h := none.OrLive(); !h.Live {
		t.Error("a nil host is not this machine")
	}
}
