//go:build !linux

package measure

import (
	"context"
	"errors"
)

// RunGPU needs Linux: CUDA's injection and rprof's launcher are Linux's.
func RunGPU(context.Context, GPUConfig) (*GPURun, error) {
	return nil, errors.New("recording GPU kernels needs Linux")
}
