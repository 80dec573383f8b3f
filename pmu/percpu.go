package pmu

// PerCPU is one event opened on each CPU, counting from the open (pid -1,
// so everything that runs there), for readers on the CPU itself: eBPF
// programs read such counters through a perf event array with
// bpf_perf_event_read_value, which refuses per-task and inherited events
// read from another task or CPU.
type PerCPU struct {
	Event Event
	// FDs holds a descriptor per CPU, by CPU number, -1 where the CPU is
	// not online.
	FDs []int
}

// OpenPerCPU opens ev enabled on each of cpus (CPU numbers); the slice of
// descriptors spans 0..max(cpus). It needs CAP_PERFMON (or CAP_SYS_ADMIN)
// or perf_event_paranoid <= 0. On error nothing stays open.
func OpenPerCPU(ev Event, cpus []int) (*PerCPU, error) { return openPerCPU(ev, cpus) }

// Close closes every descriptor; it is safe to call more than once.
func (p *PerCPU) Close() error { return p.close() }
