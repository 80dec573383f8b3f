package affinity

import (
	"fmt"
	"runtime"

	"golang.org/x/sys/unix"
)

func pin(cpu int) (func(), error) {
	runtime.LockOSThread()
	var old unix.CPUSet
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		runtime.UnlockOSThread()
		return nil, fmt.Errorf("pin to cpu %d: read affinity: %w", cpu, err)
	}
	var set unix.CPUSet
	set.Set(cpu)
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		runtime.UnlockOSThread()
		return nil, fmt.Errorf("pin to cpu %d: %w", cpu, err)
	}
	return func() {
		// If the old mask cannot be restored the thread stays locked, so
		// the runtime discards it when the goroutine exits instead of
		// reusing a thread stuck on one CPU.
		if unix.SchedSetaffinity(0, &old) == nil {
			runtime.UnlockOSThread()
		}
	}, nil
}

func allowed() ([]int, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
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
