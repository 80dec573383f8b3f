package pmu

import (
	"errors"
	"fmt"
)

var (
	// ErrNoPMU: the machine exposes no hardware PMU (typically a VM without
	// a virtual PMU).
	ErrNoPMU = errors.New("no hardware PMU")
	// ErrNotSupported: a PMU or event is absent on this machine or kernel.
	ErrNotSupported = errors.New("not supported")
	// ErrPermission: the kernel refused to open a counter.
	ErrPermission = errors.New("permission denied")
	// ErrUnsupportedCPU: rprof has no event catalogue for this
	// microarchitecture.
	ErrUnsupportedCPU = errors.New("unsupported microarchitecture")
)

// PermissionError says what the kernel requires to open an event.
type PermissionError struct {
	Event string
	// SystemWide is true for uncore and other pid=-1 events, which need
	// CAP_PERFMON (or CAP_SYS_ADMIN) or perf_event_paranoid <= 0; per-process
	// core events need perf_event_paranoid <= 2 (<= 1 to count kernel mode).
	SystemWide bool
	// Paranoid is the kernel.perf_event_paranoid level in force, or -99 when
	// it could not be read.
	Paranoid int
}

func (e *PermissionError) Error() string {
	scope := "per-process"
	if e.SystemWide {
		scope = "system-wide"
	}
	return fmt.Sprintf("open %s (%s): permission denied at perf_event_paranoid=%d", e.Event, scope, e.Paranoid)
}

func (e *PermissionError) Is(target error) bool { return target == ErrPermission }

// EventError is a failure to resolve or open one event.
type EventError struct {
	Event string
	PMU   string
	CPU   int // -1 when not bound to a CPU
	Err   error
}

func (e *EventError) Error() string {
	where := e.Event
	if e.PMU != "" && e.PMU != e.Event {
		where = e.PMU + "/" + e.Event
	}
	if e.CPU >= 0 {
		return fmt.Sprintf("event %s on cpu %d: %v", where, e.CPU, e.Err)
	}
	return fmt.Sprintf("event %s: %v", where, e.Err)
}

func (e *EventError) Unwrap() error { return e.Err }
