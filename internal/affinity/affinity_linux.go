package affinity

import (
	"errors"
	"fmt"
	"runtime"

	"golang.org/x/sys/unix"
)

// maxCPUs bounds the masks rprof builds; Linux kernels are configured for
// at most 8192 CPUs on x86 and arm64.
const maxCPUs = 1 << 16

// getMask returns the calling thread's CPU mask, growing the buffer until
// the kernel's mask fits (it exceeds unix.CPUSet beyond 1024 CPUs).
func getMask() (unix.CPUSetDynamic, error) {
	for n := 1024; ; n *= 2 {
		set := unix.NewCPUSet(n)
		err := unix.SchedGetaffinityDynamic(0, set)
		if err == nil || !errors.Is(err, unix.EINVAL) || n >= maxCPUs {
			return set, err
		}
	}
}

func pin(cpu int) (func(), error) {
	if cpu >= maxCPUs {
		return nil, fmt.Errorf("pin to cpu %d: beyond the %d CPUs any kernel supports", cpu, maxCPUs)
	}
	runtime.LockOSThread()
	old, err := getMask()
	if err != nil {
		runtime.UnlockOSThread()
		return nil, fmt.Errorf("pin to cpu %d: read affinity: %w", cpu, err)
	}
	set := unix.NewCPUSet(cpu + 1)
	set.Set(cpu)
	if err := unix.SchedSetaffinityDynamic(0, set); err != nil {
		runtime.UnlockOSThread()
		return nil, fmt.Errorf("pin to cpu %d: %w", cpu, err)
	}
	return func() {
		// If the old mask cannot be restored the thread stays locked, so
		// the runtime discards it when the goroutine exits instead of
		// reusing a thread stuck on one CPU.
		if unix.SchedSetaffinityDynamic(0, old) == nil {
			runtime.UnlockOSThread()
		}
	}, nil
}

func allowed() ([]int, error) {
	// The mask is per thread; lock so it is read from one.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	set, err := getMask()
	if err != nil {
		return nil, fmt.Errorf("read cpu affinity: %w", err)
	}
	var cpus []int
	for c := 0; len(cpus) < set.Count(); c++ {
		if set.IsSet(c) {
			cpus = append(cpus, c)
		}
	}
	return cpus, nil
}
