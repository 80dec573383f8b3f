package machine

import (
	"io/fs"
	"os"
	"sync"

	"github.com/rprof/rprof/roofline"
)

// Default roots of the kernel's trees: what the command's --sysfs and
// --procfs default to.
const (
	DefaultSysfs  = "/sys"
	DefaultProcfs = "/proc"
)

// Host is the machine rprof describes: the roots of its sysfs and procfs
// trees (this machine's, or a tree captured on another) and what is read
// from them, each read once, on first use. The command builds one Host
// from its --sysfs and --procfs flags and passes it to every library that
// describes the machine, so one pair of roots serves the whole command.
//
// What only the running kernel can answer is not read through a Host:
// opening perf events, attaching uprobes, the /proc/PID of a target, this
// process's CPU affinity and the clock a core runs at now. Those packages
// say so where they do it.
type Host struct {
	// Sysfs and Procfs are file systems rooted like /sys and /proc.
	Sysfs, Procfs fs.FS
	// Live says the roots are this machine's own /sys and /proc, so that
	// CPUID describes the same CPU and events may be opened to check them.
	Live bool

	once   sync.Once
	cpu    CPUInfo
	cpuErr error
	topo   Topology
	topErr error
	caches Caches
}

// LiveHost is this machine, read from /sys and /proc.
func LiveHost() *Host {
	return &Host{Sysfs: os.DirFS(DefaultSysfs), Procfs: os.DirFS(DefaultProcfs), Live: true}
}

// NewHost is the machine whose trees are rooted at the directories sysfs
// and procfs; it is this machine (Live) when they are /sys and /proc.
func NewHost(sysfs, procfs string) *Host {
	return &Host{Sysfs: os.DirFS(sysfs), Procfs: os.DirFS(procfs),
		Live: sysfs == DefaultSysfs && procfs == DefaultProcfs}
}

// TreeHost is a machine read from trees already opened (a captured tree
// in tests); it is never Live.
func TreeHost(sysfs, procfs fs.FS) *Host { return &Host{Sysfs: sysfs, Procfs: procfs} }

// OrLive is h, or this machine where h is nil: libraries called without a
// Host (their own tests, other programs) describe the machine they run on.
func (h *Host) OrLive() *Host {
	if h == nil {
		return LiveHost()
	}
	return h
}

func (h *Host) read() {
	h.once.Do(func() {
		h.cpu, h.cpuErr = ReadCPU(h.Procfs)
		h.topo, h.topErr = ReadTopology(h.Sysfs)
		h.caches = ReadCaches(h.topo, h.CPUID())
	})
}

// CPU is the processor procfs's cpuinfo names.
func (h *Host) CPU() (CPUInfo, error) {
	h.read()
	return h.cpu, h.cpuErr
}

// Identity is the microarchitecture the CPU is taken for (unknown when
// cpuinfo cannot be read).
func (h *Host) Identity() Identity {
	h.read()
	if h.cpuErr != nil {
		return Identity{}
	}
	return Identify(h.cpu)
}

// Topology is the CPU, cache and NUMA layout sysfs shows.
func (h *Host) Topology() (Topology, error) {
	h.read()
	return h.topo, h.topErr
}

// Caches are the cache sizes and their sources (ReadCaches): sysfs's, else
// CPUID's where the host is Live.
func (h *Host) Caches() Caches {
	h.read()
	return h.caches
}

// CPUID answers CPUID for the host's CPU: HostCPUID when the host is this
// machine, nil for a captured tree (this CPU is not that one).
func (h *Host) CPUID() CPUIDFunc {
	if h.Live {
		return HostCPUID
	}
	return nil
}

// Describe is the machine block of the documents rprof writes (Describe
// of the host's CPU and topology); fields it cannot read stay empty.
func (h *Host) Describe() roofline.Machine {
	h.read()
	if h.cpuErr != nil {
		return roofline.Machine{}
	}
	return Describe(h.cpu, h.topo, h.Sysfs, h.Procfs)
}

// EffectiveCaches are the cache sizes roofs document r measured or
// confirmed, for each thread scope, when r was measured on this host's CPU
// (roofline.MachineMatch.SameCPU); nil when r is nil, has none, or is
// another CPU's or one neither names.
func (h *Host) EffectiveCaches(r *roofline.Roofs) []roofline.CacheLevel {
	if r == nil || len(r.Caches) == 0 || !roofline.CompareMachines(r.Machine, h.Describe()).SameCPU() {
		return nil
	}
	return r.Caches
}
