package machine

import (
	"io/fs"
	"os"
	"strings"

	"github.com/rprof/rprof/roofline"
)

// Describe is the machine block of the documents rprof writes: CPU
// identity, topology, kernel release, host name and whether a hypervisor
// was detected (the same test the diagnosis uses).
func Describe(cpu CPUInfo, topo Topology, sysfs, procfs fs.FS) roofline.Machine {
	id := Identify(cpu)
	m := roofline.Machine{
		CPU: roofline.CPU{Vendor: cpu.Vendor, Family: cpu.Family, Model: cpu.Model, Stepping: cpu.Stepping,
			ModelName: cpu.ModelName, Microarch: id.Microarch, MicroarchSource: id.Source, MicroarchNote: id.Note},
		VM:      cpu.Hypervisor() || Hypervisor(sysfs) != "",
		Sockets: topo.Sockets, Cores: topo.Cores, Threads: topo.Threads,
	}
	if b, err := fs.ReadFile(procfs, "sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	if h, err := os.Hostname(); err == nil {
		m.Hostname = h
	}
	return m
}
