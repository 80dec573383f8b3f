//go:build !linux

package pmu

import (
	"fmt"
	"runtime"
)

func haveBPFKprobe() error { return fmt.Errorf("eBPF: %w on %s", ErrNotSupported, runtime.GOOS) }
