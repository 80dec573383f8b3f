//go:build !linux

package doctor

import (
	"fmt"
	"runtime"

	"github.com/rprof/rprof/pmu"
)

func haveBPFKprobe() error { return fmt.Errorf("eBPF: %w on %s", pmu.ErrNotSupported, runtime.GOOS) }
