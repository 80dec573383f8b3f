package pmu

// Attr is the kernel encoding of one event: the fields of perf_event_attr
// that select what is counted.
type Attr struct {
	Type    uint32 `json:"type"`
	Config  uint64 `json:"config"`
	Config1 uint64 `json:"config1,omitempty"`
	Config2 uint64 `json:"config2,omitempty"`
}

// Event is a resolved event, ready to open.
type Event struct {
	// Name is how the user or the catalogue spelled it, e.g.
	// "uncore_imc_0/cas_count_read/" or "task-clock".
	Name string
	// PMU is the sysfs PMU name ("cpu", "uncore_imc_0", "software", ...).
	PMU  string
	Attr Attr
	// Scale and Unit come from the sysfs alias's .scale and .unit files
	// (Scale 1 and Unit "" when absent).
	Scale float64
	Unit  string
	// CPUs is the PMU's cpumask for system-wide (uncore) events: one counter
	// is opened on each and the counts are summed. Nil for per-process
	// events.
	CPUs []int
}

// SystemWide reports whether the event is counted per CPU (pid=-1) rather
// than per process.
func (e Event) SystemWide() bool { return len(e.CPUs) > 0 }

// Count is one counter's reading with the times needed to scale it for
// multiplexing. A bare uint64 never leaves this package.
type Count struct {
	Raw     uint64
	Enabled uint64 // ns the event was enabled
	Running uint64 // ns the event was actually on a counter
}

// Value is the count scaled for multiplexing: Raw * Enabled / Running. It is
// 0 when the event never ran.
func (c Count) Value() float64 {
	if c.Running == 0 {
		return 0
	}
	if c.Running == c.Enabled {
		return float64(c.Raw)
	}
	return float64(c.Raw) * float64(c.Enabled) / float64(c.Running)
}

// Multiplexed reports whether the event shared its counter with others, so
// that Value is an estimate.
func (c Count) Multiplexed() bool { return c.Running < c.Enabled }

// RunningFraction is Running/Enabled (1 when never enabled).
func (c Count) RunningFraction() float64 {
	if c.Enabled == 0 {
		return 1
	}
	return float64(c.Running) / float64(c.Enabled)
}
