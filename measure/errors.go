package measure

import (
	"fmt"

	"github.com/rprof/rprof/internal/launch"
	"github.com/rprof/rprof/pmu"
)

var (
	// ErrNotFound is matched by Run's error when the target (or the
	// overhead command) does not exist: exit status 127 by convention.
	ErrNotFound = launch.ErrNotFound
	// ErrNotExecutable is matched when the target exists but cannot be
	// executed: exit status 126 by convention.
	ErrNotExecutable = launch.ErrNotExecutable
)

// NoCountersError is the refusal to run a target whose work and traffic
// cannot be counted here, when no analytic values and no user events were
// given either. Nothing was run.
type NoCountersError struct {
	// Err is why counting is impossible (matching pmu.ErrNoPMU,
	// pmu.ErrUnsupportedCPU or pmu.ErrNotSupported).
	Err error
	// Diagnosis is the machine's diagnosis, rendered as `rprof doctor`
	// does.
	Diagnosis pmu.Diagnosis
}

func (e *NoCountersError) Error() string {
	return fmt.Sprintf("work and traffic cannot be counted here (%v); the target was not run", e.Err)
}

func (e *NoCountersError) Unwrap() error { return e.Err }

// OverheadError is an overhead command that could not be run or did not
// exit 0: its counts would not be an overhead to subtract.
type OverheadError struct {
	Command []string
	Exit    int
	Signal  string
	Err     error // the launch error, nil when it ran
}

func (e *OverheadError) Error() string {
	switch {
	case e.Err != nil:
		return fmt.Sprintf("overhead command: %v", e.Err)
	case e.Signal != "":
		return fmt.Sprintf("overhead command %q was killed by %s", e.Command, e.Signal)
	}
	return fmt.Sprintf("overhead command %q exited with status %d", e.Command, e.Exit)
}

func (e *OverheadError) Unwrap() error { return e.Err }
