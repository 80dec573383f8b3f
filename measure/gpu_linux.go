package measure

import (
	"context"
	"os"
	"time"

	"github.com/rprof/rprof/gpu/cupti"
	"github.com/rprof/rprof/internal/launch"
	"github.com/rprof/rprof/roofline"
)

// RunGPU runs the target once with rprof's CUPTI injection library in its
// environment and returns its kernels' points. Errors: a *ConfigError
// for an empty command (Target.Validate), ErrNotFound and
// ErrNotExecutable for the target; cupti.ErrNoCUDA, ErrNoKernels or a
// *cupti.UnavailableError when nothing was recorded (the GPURun still
// holds the target's status).
func RunGPU(ctx context.Context, c GPUConfig) (*GPURun, error) {
	t := c.Target
	if err := t.Validate(); err != nil {
		return nil, err
	}
	s, err := cupti.NewSession(c.Runtime, c.CUPTI)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	env := t.Env
	if env == nil {
		env = os.Environ()
	}
	res, err := launch.Run(ctx, launch.Spec{Argv: t.Command, Env: s.Env(env), Dir: t.Dir,
		Stdin: t.Stdin, Stdout: t.Stdout, Stderr: t.Stderr})
	if err != nil {
		return nil, err
	}
	run := &GPURun{Wall: res.Wall, Exit: roofline.Exit{Code: res.ExitCode, Signal: res.Signal}}
	rec, err := s.Read()
	if err != nil {
		return run, err
	}
	return run, gpuPoints(c, rec, run, time.Now().UTC())
}
