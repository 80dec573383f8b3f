package measure

import (
	"errors"
	"fmt"
)

// ErrSubtraction: subtracting the overhead run left nothing to measure (the
// overhead command took at least as long as the target).
var ErrSubtraction = errors.New("overhead subtraction failed")

// NoCountersError is the refusal to run a target whose work and traffic
// cannot be counted here: no hardware counters, no analytic values and no
// user events. Diagnosis is the pmu diagnosis, in the doctor's words.
type NoCountersError struct {
	Diagnosis string
}

func (e *NoCountersError) Error() string {
	return "work and traffic cannot be counted on this machine; the target was not run"
}

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
