package launch

import (
	"context"
	"errors"
	"io"
	"testing"

	"github.com/rprof/rprof/pmu"
)

// execSpec is a run of a target with perf counters attached by a hook, as
// rprof's counting backend attaches them: per-process groups on the held
// target, system-wide events enabled just before the release.
type execSpec struct {
	Argv           []string
	Env            []string
	Dir            string
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Groups         [][]pmu.Event
	ExcludeKernel  bool
	SystemWide     []pmu.Event
	// Hooks attach after the counters.
	Hooks []Hook
}

type execution struct {
	Result
	Task, System []pmu.Reading
}

// viaLauncher makes execute take the re-executed launcher; bothPaths sets
// it.
var viaLauncher bool

// bothPaths runs f once on each way of holding the target: traced and
// through the re-executed launcher.
func bothPaths(t *testing.T, f func(t *testing.T)) {
	for _, launcher := range []bool{false, true} {
		name := "ptrace"
		if launcher {
			name = "launcher"
		}
		t.Run(name, func(t *testing.T) {
			viaLauncher = launcher
			defer func() { viaLauncher = false }()
			f(t)
		})
	}
}

func execute(ctx context.Context, s execSpec) (x execution, err error) {
	var task, sys *pmu.Counters
	defer func() {
		task.Close()
		sys.Close()
	}()
	if len(s.SystemWide) > 0 {
		if sys, err = pmu.OpenSystemWide(s.SystemWide); err != nil {
			return x, err
		}
	}
	hook := Hook{
		Attach: func(h Held) error {
			var err error
			if len(s.Groups) > 0 {
				if task, err = pmu.OpenTask(h.PID, s.Groups, pmu.TaskOptions{EnableOnExec: !h.Execed, ExcludeKernel: s.ExcludeKernel}); err != nil {
					return err
				}
				if h.Execed {
					if err := task.Enable(); err != nil {
						return err
					}
				}
			}
			if sys != nil {
				return sys.Enable()
			}
			return nil
		},
		Reap: func(int) error {
			if sys != nil {
				return sys.Disable()
			}
			return nil
		},
	}
	x.Result, err = Run(ctx, Spec{Argv: s.Argv, Env: s.Env, Dir: s.Dir, Stdin: s.Stdin, Stdout: s.Stdout, Stderr: s.Stderr,
		Hooks: append([]Hook{hook}, s.Hooks...), Reexec: viaLauncher})
	if err != nil {
		return x, err
	}
	if task != nil {
		if x.Task, err = task.Read(); err != nil {
			return x, err
		}
	}
	if sys != nil {
		if x.System, err = sys.Read(); err != nil {
			return x, err
		}
	}
	if viaLauncher && x.Traced {
		return x, errors.New("the target was traced although the launcher was asked for")
	}
	return x, nil
}
