// Package machine describes the host rprof runs on: the CPU from
// /proc/cpuinfo and its microarchitecture (Identify, with the grounds it
// was taken on), the topology of CPUs, cores, NUMA nodes and caches from
// sysfs, cache sizes from CPUID where sysfs says nothing, the hypervisor,
// memory available and CPU times from procfs, and the machine record of
// a document (Describe).
//
// Every sysfs, procfs and CPUID read goes through an injected fs.FS (the
// roots of /sys and /proc) or CPUIDFunc, so fake trees of real machines
// under pmu/testdata/machines and recorded CPUID answers prove it without
// the hardware. It reads what the host declares; what rprof measures
// (effective cache sizes, roofs) belongs to roofs.
package machine
