package pmu

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
)

// TaskOptions configures per-process counter groups. The zero value counts
// user and kernel mode from the moment Enable is called.
type TaskOptions struct {
	// EnableOnExec makes the kernel enable each group when the task calls
	// execve, so that a launcher's own work before exec is not counted.
	EnableOnExec bool
	// ExcludeKernel counts user mode only (needed at perf_event_paranoid=2
	// for hardware events).
	ExcludeKernel bool
}

// Reading is one event's count at the time of Read.
type Reading struct {
	Event Event
	Count Count
}

// Counters is a set of open counters: per-process groups from OpenTask or
// system-wide events from OpenSystemWide. Close releases every descriptor;
// it is safe to call more than once.
type Counters struct {
	groups []group
	system []systemEvent
}

// group is one perf group on a task: the leader's descriptor is read for
// the whole group, the members' IDs say which value is whose.
type group struct {
	events []Event
	fds    []int    // fds[0] is the leader
	ids    []uint64 // kernel IDs, parallel to events
}

// systemEvent is one event opened on each of its CPUs.
type systemEvent struct {
	event Event
	fds   []int // parallel to event.CPUs
}

// OpenTask opens each group of per-process events on the task pid (0 for
// the calling thread). Every event inherits to the task's future threads
// and children, whose counts are added when they exit; threads that exist
// already are not counted. With inheritance the Enabled and Running times
// are summed over threads too: only their ratio is meaningful. Groups are opened disabled: with opts.EnableOnExec the
// kernel enables them at the task's next execve, otherwise Enable does.
// Each group must hold events of one PMU and fit its counters, since a
// group that does not fit is never scheduled (Plan.Groups sizes them).
// The task should not be creating threads while its groups are opened:
// threads it clones in between inherit the leader, the kernel may swap the
// task's counter context with theirs, and the members are then refused
// with EINVAL. On error nothing stays open.
func OpenTask(pid int, groups [][]Event, opts TaskOptions) (*Counters, error) {
	for _, g := range groups {
		if err := checkGroup(g); err != nil {
			return nil, err
		}
	}
	return openTask(pid, groups, opts)
}

// OpenSystemWide opens each event on every CPU of its Event.CPUs (pid=-1),
// disabled; Enable starts them. Readings are summed over the CPUs. On error
// nothing stays open.
func OpenSystemWide(events []Event) (*Counters, error) {
	for _, ev := range events {
		if !ev.SystemWide() {
			return nil, &EventError{Event: ev.Name, PMU: ev.PMU, CPU: -1, Err: errors.New("system-wide event has no CPUs to open on")}
		}
	}
	return openSystemWide(events)
}

// Enable starts every counter in the set.
func (c *Counters) Enable() error { return c.enable(true) }

// Disable stops every counter in the set; counts are kept.
func (c *Counters) Disable() error { return c.enable(false) }

// Read returns one reading per event, in the order the events were given:
// groups first, then system-wide events.
func (c *Counters) Read() ([]Reading, error) { return c.read() }

// Close closes every descriptor of the set, returning the first error. A
// nil set has nothing to close.
func (c *Counters) Close() error {
	if c == nil {
		return nil
	}
	return c.close()
}

// Probe opens ev once and closes it: per process on the calling thread for
// core events, on the first of ev.CPUs for system-wide ones. It returns nil
// when the event can be counted, an error matching ErrNotSupported when the
// event or its PMU is absent, one matching ErrPermission when the kernel
// refuses it, and any other error when the answer is unknown.
func Probe(ev Event) error { return probe(ev) }

// HaveHardwareCounters reports whether this machine has a usable hardware
// core PMU, by opening the generic instructions event on the calling thread
// (user mode only, so that perf_event_paranoid=2 allows it). A conclusive
// answer (nil or an error matching ErrNotSupported and ErrNoPMU) is cached.
func HaveHardwareCounters() error { return haveHardwareCounters() }

// paranoidFile is kernel.perf_event_paranoid under the procfs root.
const paranoidFile = "sys/kernel/perf_event_paranoid"

// ReadParanoid reads kernel.perf_event_paranoid from procfs (the root of
// /proc).
func ReadParanoid(procfs fs.FS) (int, error) {
	b, err := fs.ReadFile(procfs, paranoidFile)
	if err != nil {
		return 0, fmt.Errorf("read perf_event_paranoid: %w", err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 0, fmt.Errorf("read perf_event_paranoid: %q is not a number", strings.TrimSpace(string(b)))
	}
	return n, nil
}

func checkGroup(g []Event) error {
	if len(g) == 0 {
		return errors.New("open counters: empty group")
	}
	for _, ev := range g {
		if ev.SystemWide() {
			return &EventError{Event: ev.Name, PMU: ev.PMU, CPU: -1, Err: errors.New("system-wide event in a per-process group (open it with OpenSystemWide)")}
		}
		if ev.Attr.Type != g[0].Attr.Type {
			return &EventError{Event: ev.Name, PMU: ev.PMU, CPU: -1, Err: fmt.Errorf("PMU type %d differs from the group leader %s (type %d); split groups per PMU", ev.Attr.Type, g[0].Name, g[0].Attr.Type)}
		}
	}
	return nil
}

// groupHeader is the size of the leading u64s of a group read: nr,
// time_enabled, time_running.
const groupHeader = 3 * 8

// groupReadSize is the buffer a group read of n events needs with
// read_format GROUP|ID|TOTAL_TIME_ENABLED|TOTAL_TIME_RUNNING.
func groupReadSize(n int) int { return groupHeader + 16*n }

// parseGroupRead decodes a group read (read_format
// GROUP|ID|TOTAL_TIME_ENABLED|TOTAL_TIME_RUNNING, native byte order):
//
//	u64 nr; u64 time_enabled; u64 time_running; { u64 value; u64 id; } [nr]
//
// and returns the counts in the order of ids. The kernel lists values in
// its own order, so they are matched by ID. A short buffer, a count that
// differs from len(ids) or an unknown or repeated ID is an error.
func parseGroupRead(buf []byte, ids []uint64) ([]Count, error) {
	if len(buf) < groupHeader {
		return nil, fmt.Errorf("group read: short read of %d bytes, want at least %d", len(buf), groupHeader)
	}
	u := func(i int) uint64 { return binary.NativeEndian.Uint64(buf[8*i:]) }
	nr, enabled, running := u(0), u(1), u(2)
	if nr != uint64(len(ids)) {
		return nil, fmt.Errorf("group read: %d values, want %d", nr, len(ids))
	}
	if want := groupReadSize(len(ids)); len(buf) < want {
		return nil, fmt.Errorf("group read: short read of %d bytes, want %d", len(buf), want)
	}
	pos := make(map[uint64]int, len(ids))
	for i, id := range ids {
		pos[id] = i
	}
	out := make([]Count, len(ids))
	seen := make([]bool, len(ids))
	for k := range len(ids) {
		value, id := u(3+2*k), u(4+2*k)
		i, ok := pos[id]
		if !ok {
			return nil, fmt.Errorf("group read: unknown event id %d", id)
		}
		if seen[i] {
			return nil, fmt.Errorf("group read: event id %d listed twice", id)
		}
		seen[i] = true
		out[i] = Count{Raw: value, Enabled: enabled, Running: running}
	}
	return out, nil
}

// singleReadSize is the size of a read of one event with read_format
// TOTAL_TIME_ENABLED|TOTAL_TIME_RUNNING: value, enabled, running.
const singleReadSize = 3 * 8

// parseSingleRead decodes a read of one non-group event.
func parseSingleRead(buf []byte) (Count, error) {
	if len(buf) < singleReadSize {
		return Count{}, fmt.Errorf("counter read: short read of %d bytes, want %d", len(buf), singleReadSize)
	}
	return Count{
		Raw:     binary.NativeEndian.Uint64(buf[0:]),
		Enabled: binary.NativeEndian.Uint64(buf[8:]),
		Running: binary.NativeEndian.Uint64(buf[16:]),
	}, nil
}

// addCount sums per-CPU readings of one system-wide event. Times are summed
// too, so that Enabled/Running keep their ratio for multiplex scaling.
func addCount(a, b Count) Count {
	return Count{Raw: a.Raw + b.Raw, Enabled: a.Enabled + b.Enabled, Running: a.Running + b.Running}
}
