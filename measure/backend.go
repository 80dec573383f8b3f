package measure

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rprof/rprof/internal/launch"
	"github.com/rprof/rprof/machine"
	"github.com/rprof/rprof/pmu"
	"github.com/rprof/rprof/roofline"
)

// A Backend is one way of counting a target's work W and traffic Q: the
// PMU's counters through perf_event_open ("pmu"), or any other registered
// with Register. Run owns everything else, for every backend alike: the
// repetitions and their statistics, the overhead and idle subtraction,
// the validity flags and the point.
//
// Run makes one Backend per call (see Register), calls Resolve once, then
// Count once per run of the target or the overhead command, and Idle at
// most once, before the first Count.
type Backend interface {
	// Resolve decides what can be counted for cfg here, before anything
	// runs. It refuses with an error matching ErrInvalidConfig for bad
	// input, or with a *NoCountersError when neither W and Q nor the
	// events asked for can be counted. For a rank of a parallel job
	// (cfg.Counting.Node), a backend with Background counters holds the election
	// and leaves them out unless elected (see the pmu backend).
	Resolve(ctx context.Context, cfg Config) (Resolved, error)
	// Count runs target once and counts it: it adds what it needs to
	// target (its Hooks, or a wrapper in front of its Argv) and calls
	// launch.Run. The Outcome holds one count per resolved counter.
	// Errors are launch's (not found, not executable) and the backend's
	// own; a target that ran and failed is not an error.
	Count(ctx context.Context, target launch.Spec) (Outcome, error)
	// Idle counts the Background counters for d with nothing running (the
	// idle baseline). It is called only when Resolve gave background
	// traffic counters. The Outcome holds one count per resolved counter;
	// the others' are ignored.
	Idle(ctx context.Context, d time.Duration) (Outcome, error)
	// Capabilities says what the backend does beyond counting W and Q,
	// for Run and for callers to ask instead of comparing names.
	Capabilities() Capabilities
}

// Capabilities are what a backend can do beyond counting a run's W and Q.
type Capabilities struct {
	// Emulates: the backend runs the target under an emulator and takes
	// the emulator's options (Config.Counting.Emulator).
	Emulates bool
	// AttributesFunctions: the backend counts W and Q by function
	// (Outcome.Functions), so a function region's W and Q are its own
	// instructions' from that attribution, not counters its probes read.
	AttributesFunctions bool
	// CountsCalls: the backend counts the calls of one function one by
	// one in a run of its own (Hooks.EmulatedCalls).
	CountsCalls bool
	// SharedTraffic: the backend counts traffic with machine-wide
	// counters that one rank of a parallel job counts for its whole node
	// (Config.Counting.Node elects it); without it, each rank counts its own.
	SharedTraffic bool
}

// Resolved is what a backend will count.
type Resolved struct {
	// Source is where W and Q come from: roofline.SourceCounters,
	// roofline.SourceEmulated (counted by instrumentation),
	// roofline.SourceAnalytic (Config.Counting.Work or Traffic given; only the time
	// is measured) or roofline.SourceEvents (only Config.Counting.Events are
	// counted).
	Source string
	// Counters say what each count of an Outcome means, in order.
	Counters []Counter
	// Notes are flags known before anything runs (a virtual machine,
	// unverified events, traffic that cannot be counted...).
	Notes   []roofline.Flag
	Machine roofline.Machine
}

// Kind says what a counter's count adds to.
type Kind int

const (
	// KindEvent is reported in the point's events and adds to nothing
	// else: an event asked for with Config.Counting.Events, or a backend's own.
	KindEvent Kind = iota
	// KindWork adds Weight FLOPs per count to W.
	KindWork
	// KindTraffic adds Weight bytes per count to the traffic of Level.
	KindTraffic
)

// Counter is one count of an Outcome and what it means.
type Counter struct {
	// Name, PMU and Unit are reported in the point's events.
	Name, PMU, Unit string
	Kind            Kind
	// Weight is FLOPs (KindWork) or bytes (KindTraffic) per count.
	Weight float64
	// Precision splits W (roofline.Double, roofline.Single...).
	Precision string
	// Direction (pmu.Read, pmu.Write, or pmu.Total when not split; read
	// and write also count in the level's total) and Level (roofline.LevelDRAM...)
	// place traffic.
	Direction, Level string
	// Background counters count the whole machine, not only the target
	// (memory controllers): the idle baseline applies to their traffic.
	Background bool
	// Exact counters count by instrumentation (the emulate backend): never
	// multiplexed, deterministic, and zero means none happened. They are
	// the point's W, Q and level traffic, not listed among its events.
	Exact bool
}

// Outcome is what one run gave.
type Outcome struct {
	// Counts are parallel to Resolved.Counters; Value() scales a
	// multiplexed count by enabled/running. A backend without
	// multiplexing sets Enabled and Running alike.
	Counts []pmu.Count
	// Wall is the target's wall time, from its release to its reap
	// (launch.Result.Wall).
	Wall time.Duration
	// CPU is the target's user plus system time and its waited-for
	// children's (launch.Result.CPU); 0 when not known.
	CPU      time.Duration
	ExitCode int
	// Signal names the signal that killed the target, or is "".
	Signal string
	// Outlived lists processes the target left running when it exited
	// (launch.Result.Outlived).
	Outlived []int
	// Notes are flags learned by counting (kernel mode refused...); Run
	// reports each once.
	Notes []roofline.Flag
	// Functions are W and Q by function, when the backend attributes them
	// (the emulate backend); Emulation says how an emulated run counted.
	// The point takes both from the last run of the target.
	Functions []roofline.FunctionCount
	Emulation *roofline.Emulation
}

// DefaultBackend counts with the PMU.
const DefaultBackend = "pmu"

var backends = struct {
	sync.Mutex
	m map[string]func(*machine.Host) Backend
}{m: map[string]func(*machine.Host) Backend{}}

// Register makes a backend selectable by name (Config.Counting.Backend, `rprof run
// --count NAME`). newBackend makes a fresh one for each Run, which may keep
// state between its calls, for the host Config.Counting.Host names (never nil).
// Call it from an init function; a name registered twice panics.
func Register(name string, newBackend func(*machine.Host) Backend) {
	backends.Lock()
	defer backends.Unlock()
	if _, dup := backends.m[name]; dup || name == "" {
		panic(fmt.Sprintf("measure: backend %q registered twice", name))
	}
	backends.m[name] = newBackend
}

// Backends lists the registered backends' names, sorted.
func Backends() []string {
	backends.Lock()
	defer backends.Unlock()
	names := make([]string, 0, len(backends.m))
	for n := range backends.m {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// BackendCapabilities says what the backend called name ("" is
// DefaultBackend) can do; an unknown name matches ErrInvalidConfig.
func BackendCapabilities(name string) (Capabilities, error) {
	b, err := newBackend(name, machine.LiveHost())
	if err != nil {
		return Capabilities{}, err
	}
	return b.Capabilities(), nil
}

// newBackend makes the backend called name ("" is DefaultBackend) for h.
func newBackend(name string, h *machine.Host) (Backend, error) {
	if name == "" {
		name = DefaultBackend
	}
	backends.Lock()
	f := backends.m[name]
	backends.Unlock()
	if f == nil {
		return nil, fieldErr(fmt.Errorf("%q: no such counting backend (have: %s)", name, strings.Join(Backends(), ", ")), "Counting.Backend")
	}
	return f(h), nil
}
