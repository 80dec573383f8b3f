package pmu

import (
	"errors"

	"golang.org/x/sys/unix"
)

func openPerCPU(ev Event, cpus []int) (_ *PerCPU, err error) {
	n := 0
	for _, c := range cpus {
		n = max(n, c+1)
	}
	p := &PerCPU{Event: ev, FDs: make([]int, n)}
	for i := range p.FDs {
		p.FDs[i] = -1
	}
	defer func() {
		if err != nil {
			p.close()
		}
	}()
	for _, cpu := range cpus {
		attr := attrOf(ev)
		attr.Read_format = unix.PERF_FORMAT_TOTAL_TIME_ENABLED | unix.PERF_FORMAT_TOTAL_TIME_RUNNING
		fd, err := unix.PerfEventOpen(&attr, -1, cpu, -1, unix.PERF_FLAG_FD_CLOEXEC)
		if err != nil {
			return nil, openError(ev, cpu, true, err)
		}
		p.FDs[cpu] = fd
	}
	return p, nil
}

func (p *PerCPU) close() error {
	var errs []error
	for i, fd := range p.FDs {
		if fd >= 0 {
			errs = append(errs, unix.Close(fd))
			p.FDs[i] = -1
		}
	}
	return errors.Join(errs...)
}
