package measure

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/rprof/rprof/pmu"
)

// ExecSpec is one run of a target under counters.
type ExecSpec struct {
	// Argv is the target's command line; Argv[0] is looked up in rprof's
	// PATH unless it contains a slash (then relative to Dir when Dir is
	// set).
	Argv []string
	// Env is the target's environment; nil means rprof's own.
	Env []string
	// Dir is the target's working directory; "" means rprof's own.
	Dir string
	// Stdin, Stdout and Stderr are the target's streams. An *os.File is
	// handed to the target as is; another reader or writer is fed through a
	// pipe, and Execute returns once everything written to it was copied
	// (also by children the target left running); nil is /dev/null.
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Groups are per-process counter groups (see pmu.SplitGroups), enabled
	// by the kernel at the target's exec and inherited by all its threads
	// and children.
	Groups [][]pmu.Event
	// ExcludeKernel counts the groups in user mode only: what
	// perf_event_paranoid=2 allows for hardware events without
	// CAP_PERFMON, as perf stat's fallback to ":u" does. Say so in the
	// output when set.
	ExcludeKernel bool
	// SystemWide events are counted on their CPUs from just before the
	// target is released until it is reaped (and AfterReap returned).
	SystemWide []pmu.Event
	// BeforeRelease, when set, runs once every counter is open and
	// counting, just before the target is released; an error stops the
	// target unrun.
	BeforeRelease func() error
	// AfterReap, when set, runs once the target was reaped, before the
	// system-wide counters stop. Wall does not include it.
	AfterReap func(ctx context.Context) error
}

// Execution is what one run of the target gave.
type Execution struct {
	// Task holds one reading per event of ExecSpec.Groups, in order;
	// System one per ExecSpec.SystemWide event, summed over its CPUs.
	Task, System []pmu.Reading
	// Wall is the time from releasing the target (just before its exec)
	// until it was reaped.
	Wall time.Duration
	// CPU is the user plus system time of the target and the descendants
	// it waited for, from wait4's rusage: a cross-check of task-clock that
	// needs no counter, which also includes the launcher's start-up before
	// the exec (about a millisecond).
	CPU time.Duration
	// ExitCode is the target's exit status, or 128+N when signal N killed
	// it (as shells report it).
	ExitCode int
	// Signal names the signal that killed the target ("SIGKILL"), or is "".
	Signal string
	// PID is the target's process ID.
	PID int
	// Outlived lists the processes the target started that were still
	// running when it exited (where that can be told: Linux).
	Outlived []int
}

var (
	// ErrNotFound: the target does not exist (exit status 127 by
	// convention).
	ErrNotFound = errors.New("command not found")
	// ErrNotExecutable: the target exists but cannot be executed (exit
	// status 126 by convention).
	ErrNotExecutable = errors.New("command not executable")
)

// LaunchError is a target that could not be started. It matches
// ErrNotFound or ErrNotExecutable with errors.Is.
type LaunchError struct {
	Name string // the target as given
	Kind error  // ErrNotFound or ErrNotExecutable
	Err  error  // the cause
}

func (e *LaunchError) Error() string {
	return fmt.Sprintf("%s: %v: %v", e.Name, e.Kind, e.Err)
}

func (e *LaunchError) Is(target error) bool { return target == e.Kind }

func (e *LaunchError) Unwrap() error { return e.Err }

// LauncherArg is the hidden first argument that makes rprof act as the
// launcher of a target (see Launch).
const LauncherArg = "__rprof_exec"

// IsLauncher reports whether args (os.Args) ask this process to act as a
// launcher; the program's main must then call Launch before anything else.
func IsLauncher(args []string) bool { return len(args) > 1 && args[1] == LauncherArg }

// Execute runs spec.Argv once under counters and waits for it. Counting
// starts at the target's exec and covers all its threads and children:
// rprof re-executes itself as a launcher (Launch) that waits for a go-ahead
// and then execs the target, so that counters can be attached before the
// exec and the launcher's own work is not counted.
//
// SIGINT, SIGTERM, SIGHUP and SIGQUIT received while the target runs are
// forwarded to it and do not stop rprof; the Execution then reports the
// target's death by signal. Ctrl-C and Ctrl-\ typed at the terminal reach
// the target directly and are not forwarded a second time. One of these
// signals or the cancellation of ctx before the target is released stops
// it unrun and returns an error; afterwards the target is in charge of its
// own end, so that a Ctrl-C it handles is not turned into a kill.
//
// A target that runs and fails is not an error: see Execution.ExitCode and
// Signal. Errors are a *LaunchError (not found, not executable), counter
// errors from pmu, and rprof's own failures. Every counter and descriptor
// is closed on every path.
func Execute(ctx context.Context, spec ExecSpec) (Execution, error) {
	if len(spec.Argv) == 0 || spec.Argv[0] == "" {
		return Execution{}, errors.New("execute: empty command")
	}
	return execute(ctx, spec)
}
