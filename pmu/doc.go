// Package pmu is rprof's interface to the kernel's performance monitoring
// units: PMU discovery in sysfs, perf's event-string syntax, the catalogue
// of floating-point-work and DRAM-traffic events per microarchitecture,
// event plans, perf_event_open, and the diagnosis of what this machine can
// count. It takes the CPU and its topology from package machine, which
// identifies them.
//
// All sysfs and procfs reads go through an injected fs.FS, so a captured
// tree of another machine can be inspected and tests run on fake trees of
// real machines. Building an event plan is pure; only opening counters
// touches the kernel.
//
// Errors callers act on are sentinels and typed errors, testable with
// errors.Is and errors.As: ErrNoPMU, ErrNotSupported, ErrPermission
// (*PermissionError), ErrUnsupportedCPU, and *EventError wrapping them.
//
// Probes (HaveHardwareCounters and the like) return nil when the feature is
// present, an error matching ErrNotSupported when it is absent, and any
// other error when the answer is inconclusive.
package pmu
