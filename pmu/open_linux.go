package pmu

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

const groupReadFormat = unix.PERF_FORMAT_GROUP | unix.PERF_FORMAT_ID |
	unix.PERF_FORMAT_TOTAL_TIME_ENABLED | unix.PERF_FORMAT_TOTAL_TIME_RUNNING

func attrOf(ev Event) unix.PerfEventAttr {
	return unix.PerfEventAttr{
		Type:   ev.Attr.Type,
		Size:   uint32(unsafe.Sizeof(unix.PerfEventAttr{})),
		Config: ev.Attr.Config,
		Ext1:   ev.Attr.Config1,
		Ext2:   ev.Attr.Config2,
	}
}

func openTask(pid int, groups [][]Event, opts TaskOptions) (_ *Counters, err error) {
	c := &Counters{}
	defer func() {
		if err != nil {
			c.close()
		}
	}()
	for _, evs := range groups {
		g := group{events: evs}
		c.groups = append(c.groups, g)
		gp := &c.groups[len(c.groups)-1]
		for i, ev := range evs {
			attr := attrOf(ev)
			attr.Read_format = groupReadFormat
			attr.Bits = unix.PerfBitInherit
			if opts.ExcludeKernel {
				attr.Bits |= unix.PerfBitExcludeKernel | unix.PerfBitExcludeHv
			}
			leader := -1
			if i == 0 {
				// Members follow their leader: only the leader is disabled,
				// and it alone is enabled at exec.
				attr.Bits |= unix.PerfBitDisabled
				if opts.EnableOnExec {
					attr.Bits |= unix.PerfBitEnableOnExec
				}
			} else {
				leader = gp.fds[0]
			}
			fd, err := unix.PerfEventOpen(&attr, pid, -1, leader, unix.PERF_FLAG_FD_CLOEXEC)
			if err != nil && i > 0 && errors.Is(err, unix.EINVAL) {
				// x86 checks at open that the whole group can be
				// scheduled together.
				return nil, &EventError{Event: ev.Name, PMU: ev.PMU, CPU: -1, Err: fmt.Errorf(
					"perf_event_open: refused as member %d of the group led by %s: the group may not fit the PMU's counters (make it smaller), or the encoding (type %d, config %#x) is invalid: %w",
					i+1, evs[0].Name, ev.Attr.Type, ev.Attr.Config, err)}
			}
			if err != nil {
				return nil, openError(ev, -1, false, err)
			}
			gp.fds = append(gp.fds, fd)
			id, err := eventID(fd)
			if err != nil {
				return nil, &EventError{Event: ev.Name, PMU: ev.PMU, CPU: -1, Err: err}
			}
			gp.ids = append(gp.ids, id)
		}
	}
	return c, nil
}

func eventID(fd int) (uint64, error) {
	var id uint64
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.PERF_EVENT_IOC_ID, uintptr(unsafe.Pointer(&id)))
	if errno != 0 {
		return 0, fmt.Errorf("read event id: %w", errno)
	}
	return id, nil
}

func openSystemWide(events []Event) (_ *Counters, err error) {
	c := &Counters{}
	defer func() {
		if err != nil {
			c.close()
		}
	}()
	for _, ev := range events {
		c.system = append(c.system, systemEvent{event: ev})
		se := &c.system[len(c.system)-1]
		for _, cpu := range ev.CPUs {
			attr := attrOf(ev)
			attr.Read_format = unix.PERF_FORMAT_TOTAL_TIME_ENABLED | unix.PERF_FORMAT_TOTAL_TIME_RUNNING
			attr.Bits = unix.PerfBitDisabled
			fd, err := unix.PerfEventOpen(&attr, -1, cpu, -1, unix.PERF_FLAG_FD_CLOEXEC)
			if err != nil {
				return nil, openError(ev, cpu, true, err)
			}
			se.fds = append(se.fds, fd)
		}
	}
	return c, nil
}

func (c *Counters) enable(on bool) error {
	req := uint(unix.PERF_EVENT_IOC_DISABLE)
	what := "disable"
	if on {
		req, what = unix.PERF_EVENT_IOC_ENABLE, "enable"
	}
	for _, g := range c.groups {
		if len(g.fds) == 0 {
			continue
		}
		if err := unix.IoctlSetInt(g.fds[0], req, unix.PERF_IOC_FLAG_GROUP); err != nil {
			return &EventError{Event: g.events[0].Name, PMU: g.events[0].PMU, CPU: -1, Err: fmt.Errorf("%s group: %w", what, err)}
		}
	}
	for _, se := range c.system {
		for i, fd := range se.fds {
			if err := unix.IoctlSetInt(fd, req, 0); err != nil {
				return &EventError{Event: se.event.Name, PMU: se.event.PMU, CPU: se.event.CPUs[i], Err: fmt.Errorf("%s: %w", what, err)}
			}
		}
	}
	return nil
}

func (c *Counters) read() ([]Reading, error) {
	var out []Reading
	for _, g := range c.groups {
		buf := make([]byte, groupReadSize(len(g.events)))
		n, err := unix.Read(g.fds[0], buf)
		if err != nil {
			return nil, &EventError{Event: g.events[0].Name, PMU: g.events[0].PMU, CPU: -1, Err: fmt.Errorf("read group: %w", err)}
		}
		counts, err := parseGroupRead(buf[:n], g.ids)
		if err != nil {
			return nil, &EventError{Event: g.events[0].Name, PMU: g.events[0].PMU, CPU: -1, Err: err}
		}
		for i, ev := range g.events {
			out = append(out, Reading{Event: ev, Count: counts[i]})
		}
	}
	for _, se := range c.system {
		var sum Count
		for i, fd := range se.fds {
			buf := make([]byte, singleReadSize)
			n, err := unix.Read(fd, buf)
			if err != nil {
				return nil, &EventError{Event: se.event.Name, PMU: se.event.PMU, CPU: se.event.CPUs[i], Err: fmt.Errorf("read: %w", err)}
			}
			cnt, err := parseSingleRead(buf[:n])
			if err != nil {
				return nil, &EventError{Event: se.event.Name, PMU: se.event.PMU, CPU: se.event.CPUs[i], Err: err}
			}
			sum = addCount(sum, cnt)
		}
		out = append(out, Reading{Event: se.event, Count: sum})
	}
	return out, nil
}

func (c *Counters) close() error {
	var first error
	closeAll := func(fds []int) {
		for _, fd := range fds {
			if err := unix.Close(fd); err != nil && first == nil {
				first = fmt.Errorf("close counter: %w", err)
			}
		}
	}
	for i := range c.groups {
		// Members before the leader, as perf does.
		fds := c.groups[i].fds
		for j := len(fds) - 1; j >= 0; j-- {
			closeAll(fds[j : j+1])
		}
		c.groups[i].fds = nil
	}
	for i := range c.system {
		closeAll(c.system[i].fds)
		c.system[i].fds = nil
	}
	return first
}

// isCoreHardware reports whether ev is counted by the core hardware PMU, so
// that its absence may mean the machine has no PMU at all.
func isCoreHardware(ev Event) bool {
	switch ev.Attr.Type {
	case unix.PERF_TYPE_HARDWARE, unix.PERF_TYPE_HW_CACHE, unix.PERF_TYPE_RAW:
		return true
	}
	return false
}

// isAbsent reports whether a perf_event_open errno means the event or its
// PMU does not exist here.
func isAbsent(err error) bool {
	return errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENODEV) || errors.Is(err, unix.EOPNOTSUPP)
}

// openError classifies a perf_event_open failure.
func openError(ev Event, cpu int, systemWide bool, err error) error {
	e := &EventError{Event: ev.Name, PMU: ev.PMU, CPU: cpu}
	switch {
	case isAbsent(err):
		e.Err = fmt.Errorf("%w: perf_event_open: %w", ErrNotSupported, err)
		if isCoreHardware(ev) && errors.Is(haveHardwareCounters(), ErrNoPMU) {
			e.Err = noPMUError(err)
		}
	case errors.Is(err, unix.EACCES), errors.Is(err, unix.EPERM):
		// The kernel that refused is this one: its own procfs, whatever
		// tree the command describes.
		p, perr := ReadParanoid(os.DirFS("/proc"))
		if perr != nil {
			p = -99
		}
		e.Err = &PermissionError{Event: ev.Name, SystemWide: systemWide, Paranoid: p}
	case errors.Is(err, unix.EINVAL):
		e.Err = fmt.Errorf("perf_event_open: the kernel rejected the encoding (type %d, config %#x, config1 %#x, config2 %#x) or its flags: %w",
			ev.Attr.Type, ev.Attr.Config, ev.Attr.Config1, ev.Attr.Config2, err)
	case errors.Is(err, unix.EBUSY):
		e.Err = fmt.Errorf("perf_event_open: counter busy (held exclusively by another user, e.g. the NMI watchdog): %w", err)
	case errors.Is(err, unix.EMFILE):
		e.Err = fmt.Errorf("perf_event_open: out of file descriptors (raise ulimit -n): %w", err)
	default:
		e.Err = fmt.Errorf("perf_event_open: %w", err)
	}
	return e
}

// noPMUError matches both ErrNoPMU and ErrNotSupported.
func noPMUError(cause error) error {
	return fmt.Errorf("%w (%w): perf_event_open: %w", ErrNoPMU, ErrNotSupported, cause)
}

// hwInstructions is the event HaveHardwareCounters probes.
var hwInstructions = Event{
	Name: "instructions",
	PMU:  "cpu",
	Attr: Attr{Type: unix.PERF_TYPE_HARDWARE, Config: unix.PERF_COUNT_HW_INSTRUCTIONS},
}

func probe(ev Event) error {
	cpu, err := tryOpen(ev)
	if err != nil {
		return openError(ev, cpu, ev.SystemWide(), err)
	}
	return nil
}

// tryOpen opens ev disabled and closes it again, returning the CPU it used
// (-1 per process) and the raw errno.
func tryOpen(ev Event) (int, error) {
	pid, cpu := 0, -1
	if ev.SystemWide() {
		pid, cpu = -1, ev.CPUs[0]
	}
	attr := attrOf(ev)
	attr.Bits = unix.PerfBitDisabled
	if !ev.SystemWide() {
		// User mode only, as the least privilege that can still count.
		attr.Bits |= unix.PerfBitExcludeKernel | unix.PerfBitExcludeHv
	}
	fd, err := unix.PerfEventOpen(&attr, pid, cpu, -1, unix.PERF_FLAG_FD_CLOEXEC)
	if err != nil {
		return cpu, err
	}
	unix.Close(fd)
	return cpu, nil
}

var hwProbe struct {
	sync.Mutex
	done bool
	err  error
}

func haveHardwareCounters() error {
	hwProbe.Lock()
	defer hwProbe.Unlock()
	if hwProbe.done {
		return hwProbe.err
	}
	_, err := tryOpen(hwInstructions)
	switch {
	case err == nil:
	case isAbsent(err):
		err = &EventError{Event: hwInstructions.Name, PMU: hwInstructions.PMU, CPU: -1, Err: noPMUError(err)}
	default:
		// Inconclusive (e.g. permission): classified, not cached.
		return openError(hwInstructions, -1, false, err)
	}
	hwProbe.done, hwProbe.err = true, err
	return err
}
