package measure

import (
	"context"
	"errors"
	"fmt"

	"github.com/rprof/rprof/measure/emulate"
)

// ErrIllegalInstruction: the target executed an instruction the emulator
// does not implement (AVX-512 under QEMU 7.2) and died of SIGILL.
var ErrIllegalInstruction = errors.New("the target died of SIGILL under emulation: it uses instructions QEMU does not emulate (AVX-512?)")

// runEmulated runs the target once under QEMU with rprof's plugin and reads
// the counts. The target keeps its streams, environment and directory;
// signals reach it as in a native run.
func runEmulated(ctx context.Context, cfg Config) (*emulatedRun, error) {
	q, err := emulate.FindQEMU(ctx)
	if err != nil {
		return nil, err
	}
	path, err := resolveTarget(cfg.Command[0], cfg.Dir)
	if err != nil {
		return nil, err
	}
	s, err := emulate.NewSession(q, cacheModel(cfg))
	if err != nil {
		return nil, err
	}
	defer s.Close()
	argv, err := s.Argv(path, cfg.Command)
	if err != nil {
		return nil, err
	}
	o, err := runCounted(ctx, cfg, argv, nil, false)
	if err != nil {
		return nil, err
	}
	if o.signal == "SIGILL" {
		return nil, ErrIllegalInstruction
	}
	r, err := s.Result()
	if err != nil {
		if errors.Is(err, emulate.ErrNoOutput) {
			return nil, fmt.Errorf("emulate: %s exited with status %d and wrote no counts (its message is above)", q.Path, o.exit)
		}
		return nil, err
	}
	return &emulatedRun{result: r, qemu: q, wall: o.wall, exit: o.exit, signal: o.signal}, nil
}
