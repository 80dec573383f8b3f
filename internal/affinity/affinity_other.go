//go:build !linux

package affinity

import (
	"fmt"
	"runtime"
)

func pin(cpu int) (func(), error) {
	return nil, fmt.Errorf("pin to cpu %d: %w on %s", cpu, ErrNotSupported, runtime.GOOS)
}

func allowed() ([]int, error) {
	return nil, fmt.Errorf("read cpu affinity: %w on %s", ErrNotSupported, runtime.GOOS)
}
