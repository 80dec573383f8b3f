package doctor

import (
	"errors"
	"fmt"
	"os"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/features"

	"github.com/rprof/rprof/pmu"
)

// haveBPFKprobe loads a minimal kprobe-type program, the type uprobe
// programs have too: nil when the kernel and this process's privileges
// allow it.
func haveBPFKprobe() error {
	err := features.HaveProgramType(ebpf.Kprobe)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ebpf.ErrNotSupported):
		return fmt.Errorf("load an eBPF kprobe program: %w (%w)", pmu.ErrNotSupported, err)
	case errors.Is(err, os.ErrPermission):
		return fmt.Errorf("load an eBPF kprobe program: %w (%w)", pmu.ErrPermission, err)
	}
	return fmt.Errorf("load an eBPF kprobe program: %w", err)
}
