// Package launch starts a target program so that whatever is attached to it
// (perf counters, uprobes) sees all of the target and nothing of rprof: the
// target is held before its first instruction, the hooks attach to its PID,
// and only then is it released.
//
// Where ptrace is allowed, the target is started traced (PTRACE_TRACEME),
// stops right after its exec, and is detached once the hooks have run: one
// fork and one exec, as perf stat does. Elsewhere (ptrace refused by
// seccomp, Yama or an outer tracer) and for set-user-ID or file-capability
// targets, which a traced exec would strip of their privileges, the program
// re-executes itself as a launcher (Role) that waits for a go-ahead before
// it execs the target; the program's main must then dispatch Role to Main,
// from the main thread.
package launch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"
)

// Spec is one run of a target.
type Spec struct {
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
	// pipe, and Run returns once everything written to it was copied (also
	// by children the target left running); nil is /dev/null. Stdout and
	// Stderr are never written to at once, so both may lead to one buffer,
	// and neither is written to once Run returned, error or not.
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Hooks attach in order once the target is held, and are reaped in
	// reverse order once it has ended.
	Hooks []Hook
	// Reexec uses the re-executed launcher even where ptrace would work.
	Reexec bool
}

// Hook attaches something to a target and detaches it. Either func may be
// nil.
type Hook struct {
	// Attach runs once the target's process exists and before it runs any
	// instruction of its own; its PID stays the target's for good. An
	// error stops the target unrun and is returned by Run; the Reap of
	// hooks whose Attach succeeded still runs.
	Attach func(Held) error
	// Reap runs once the target has been reaped (ended, or stopped unrun),
	// for every hook whose Attach succeeded, in reverse order, before Run
	// returns and before the target's output is drained; its error is
	// returned when nothing failed before.
	Reap func(pid int) error
}

// Held is a target held before its first instruction.
type Held struct {
	PID int
	// Path is the absolute path of the target's executable.
	Path string
	// Execed says that the target's exec has already happened (the ptrace
	// path): counters opened now must be enabled now. Otherwise the
	// process is still rprof's launcher, whose exec of the target comes at
	// the release: counters must be opened enable-on-exec, so that the
	// launcher's own work is not counted.
	Execed bool
}

// Result is what one run of the target gave.
type Result struct {
	// Wall is the time from releasing the target until it was reaped.
	Wall time.Duration
	// CPU is the user plus system time of the target and the descendants
	// it waited for, from wait4's rusage: a cross-check of task-clock that
	// needs no counter. With the re-executed launcher it includes the
	// launcher's start-up (a few milliseconds).
	CPU time.Duration
	// ExitCode is the target's exit status, or 128+N when signal N killed
	// it (as shells report it).
	ExitCode int
	// Signal names the signal that killed the target ("SIGKILL"), or is "".
	Signal string
	// PID is the target's process ID.
	PID int
	// Traced says that the target was started by the ptrace path rather
	// than through the re-executed launcher.
	Traced bool
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

// Error is a target that could not be started. It matches ErrNotFound or
// ErrNotExecutable with errors.Is.
type Error struct {
	Name string // the target as given
	Kind error  // ErrNotFound or ErrNotExecutable
	Err  error  // the cause
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s: %v: %v", e.Name, e.Kind, e.Err)
}

func (e *Error) Is(target error) bool { return target == e.Kind }

func (e *Error) Unwrap() error { return e.Err }

// Role is the hidden first argument that makes the rprof binary act as the
// launcher of a target (see Main).
const Role = "__rprof_exec"

// Run runs spec.Argv once and waits for it: the hooks attach to the held
// target, which is then released, reaped, and the hooks' Reap run.
//
// SIGINT, SIGTERM, SIGHUP and SIGQUIT received while the target runs are
// forwarded to it and do not stop rprof; the Result then reports the
// target's death by signal. Ctrl-C and Ctrl-\ typed at the terminal reach
// the target directly and are not forwarded a second time. One of these
// signals or the cancellation of ctx before the target is released stops
// it unrun and returns an error; afterwards the target is in charge of its
// own end, so that a Ctrl-C it handles is not turned into a kill.
//
// A target that runs and fails is not an error: see Result.ExitCode and
// Signal. Errors are an *Error (not found, not executable), the hooks'
// errors, and rprof's own failures. Every descriptor is closed on every
// path.
func Run(ctx context.Context, spec Spec) (Result, error) {
	if len(spec.Argv) == 0 || spec.Argv[0] == "" {
		return Result{}, errors.New("launch: empty command")
	}
	return run(ctx, spec)
}
