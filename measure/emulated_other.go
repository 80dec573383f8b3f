//go:build !linux

package measure

import (
	"context"
	"errors"
)

// ErrIllegalInstruction: the target executed an instruction the emulator
// does not implement (AVX-512 under QEMU 7.2) and died of SIGILL.
var ErrIllegalInstruction = errors.New("the target died of SIGILL under emulation: it uses instructions QEMU does not emulate (AVX-512?)")

func runEmulated(ctx context.Context, cfg Config) (*emulatedRun, error) {
	return nil, errors.New("emulate: counting by emulation needs Linux and qemu-user")
}
