package regions

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"github.com/cilium/ebpf/ringbuf"
	"github.com/rprof/rprof/machine"
	"github.com/rprof/rprof/pmu"
	"golang.org/x/sys/unix"
)

// contextSwitches is the guard counter read with the user's counters.
var contextSwitches = pmu.Event{Name: "context-switches", PMU: "software",
	Attr: pmu.Attr{Type: unix.PERF_TYPE_SOFTWARE, Config: unix.PERF_COUNT_SW_CONTEXT_SWITCHES}, Scale: 1}

// Session is a set of probes attached to one process. Stop detaches them
// and returns the figures; Close releases everything on error paths. Both
// are safe to call more than once.
type Session struct {
	probes  []Probe
	nCount  int
	maps    programMaps
	progs   []*ebpf.Program
	links   []link.Link
	percpu  []*pmu.PerCPU
	reader  *ringbuf.Reader
	agg     *Aggregator
	wg      sync.WaitGroup
	records uint64
	readErr error
	result  *Result
	tags    map[[2]uint64]string
}

// Attach loads the probe programs and attaches them to the probes, for
// the process pid only (all its threads, and the program it execs). A
// process that has not yet mapped a probe's file (a library loaded later,
// by the dynamic loader or dlopen) is probed once it maps it: uprobes
// attach to the file's inode.
func Attach(pid int, probes []Probe, opts Options) (_ *Session, err error) {
	if !regsKnown {
		return nil, fmt.Errorf("%w: no register layout for this architecture", ErrNotSupported)
	}
	nfun := 0
	for _, p := range probes {
		if p.Kind == Function {
			nfun++
		}
	}
	if nfun > MaxRegions {
		return nil, &TooManyRegionsError{N: nfun}
	}
	if len(opts.Counters) >= MaxCounters {
		return nil, fmt.Errorf("regions: %d counters asked for, at most %d are read per probe", len(opts.Counters), MaxCounters-1)
	}
	if len(opts.Counters) > 0 {
		// The guard: a call during which its CPU switched tasks counted
		// others' events too.
		opts.Counters = append([]pmu.Event{contextSwitches}, opts.Counters...)
	}
	s := &Session{probes: probes, nCount: len(opts.Counters)}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	if err := s.openMaps(opts); err != nil {
		return nil, err
	}
	progs := map[RecordKind]*ebpf.Program{}
	for _, k := range []RecordKind{Entry, Exit, StartMarker, StopMarker} {
		prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{
			Name: "rprof_region", Type: ebpf.Kprobe, License: "GPL",
			Instructions: program(k, s.maps),
		})
		if err != nil {
			return nil, loadError("load the probe program", err)
		}
		s.progs = append(s.progs, prog)
		progs[k] = prog
	}
	exes := map[string]*link.Executable{}
	fn := 0 // function regions are numbered in order: the cookie
	for _, p := range probes {
		ex := exes[p.Path]
		if ex == nil {
			if ex, err = link.OpenExecutable(p.Path); err != nil {
				return nil, fmt.Errorf("region %s: %w", p.Name, err)
			}
			exes[p.Path] = ex
		}
		uo := &link.UprobeOptions{Address: p.Offset, PID: pid, Cookie: uint64(fn)}
		var l link.Link
		switch p.Kind {
		case Function:
			if l, err = ex.Uprobe("", progs[Entry], uo); err == nil {
				s.links = append(s.links, l)
				l, err = ex.Uretprobe("", progs[Exit], uo)
			}
			fn++
		case MarkerStart:
			uo.Cookie = MaxRegions
			l, err = ex.Uprobe("", progs[StartMarker], uo)
		case MarkerStop:
			uo.Cookie = MaxRegions
			l, err = ex.Uprobe("", progs[StopMarker], uo)
		}
		if err != nil {
			return nil, loadError(fmt.Sprintf("region %s: attach a uprobe to %s+%#x", p.Name, p.Path, p.Offset), err)
		}
		s.links = append(s.links, l)
	}
	if s.reader, err = ringbuf.NewReader(s.maps.ring); err != nil {
		return nil, fmt.Errorf("regions: %w", err)
	}
	var names []string
	for _, p := range probes {
		if p.Kind == Function {
			names = append(names, p.Name)
		}
	}
	s.agg = NewAggregator(names, opts.Costs, opts.MarkerCost, s.nCount, s.nCount > 0)
	if opts.KeepCalls {
		s.agg.KeepCalls()
	}
	s.wg.Add(1)
	go s.read()
	return s, nil
}

func (s *Session) openMaps(opts Options) error {
	ring := opts.RingBytes
	if ring == 0 {
		ring = 16 << 20
	}
	var err error
	if s.maps.ring, err = ebpf.NewMap(&ebpf.MapSpec{Name: "rprof_records", Type: ebpf.RingBuf, MaxEntries: uint32(ring)}); err != nil {
		return loadError("create the ring buffer", err)
	}
	if s.maps.lost, err = ebpf.NewMap(&ebpf.MapSpec{Name: "rprof_lost", Type: ebpf.Array, KeySize: 4, ValueSize: 8, MaxEntries: MaxRegions + 1}); err != nil {
		return loadError("create the lost-records map", err)
	}
	if len(opts.Counters) == 0 {
		return nil
	}
	cpus := opts.CPUs
	if cpus == nil {
		t, err := machine.LiveHost().Topology()
		if err != nil {
			return fmt.Errorf("regions: %w", err)
		}
		cpus = t.Online
	}
	possible, err := ebpf.PossibleCPU()
	if err != nil {
		return fmt.Errorf("regions: %w", err)
	}
	for _, ev := range opts.Counters {
		pc, err := pmu.OpenPerCPU(ev, cpus)
		if err != nil {
			return err
		}
		s.percpu = append(s.percpu, pc)
		m, err := ebpf.NewMap(&ebpf.MapSpec{Name: "rprof_counter", Type: ebpf.PerfEventArray, MaxEntries: uint32(possible)})
		if err != nil {
			return loadError("create a perf event array", err)
		}
		s.maps.counters = append(s.maps.counters, m)
		for cpu, fd := range pc.FDs {
			if fd < 0 {
				continue
			}
			if err := m.Put(uint32(cpu), uint32(fd)); err != nil {
				return fmt.Errorf("regions: counter %s on cpu %d: %w", ev.Name, cpu, err)
			}
		}
	}
	return nil
}

// loadError classifies a failure of the kernel's eBPF or uprobe interface.
func loadError(what string, err error) error {
	var ve *ebpf.VerifierError
	// Permission first: a refused load also comes as a verifier error.
	switch {
	case errors.Is(err, os.ErrPermission):
		return fmt.Errorf("regions: %s: %w: eBPF programs and uprobes need CAP_BPF and CAP_PERFMON (or root): %w", what, ErrPermission, err)
	case errors.Is(err, ebpf.ErrNotSupported), errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("regions: %s: %w: the kernel lacks uprobes, eBPF or attach cookies (5.15+): %w", what, ErrNotSupported, err)
	case errors.As(err, &ve):
		return fmt.Errorf("regions: %s: the verifier refused it: %+v", what, ve)
	}
	return fmt.Errorf("regions: %s: %w", what, err)
}

// read feeds records to the aggregator until the reader is flushed and
// drained.
func (s *Session) read() {
	defer s.wg.Done()
	var rec ringbuf.Record
	for {
		if err := s.reader.ReadInto(&rec); err != nil {
			if !errors.Is(err, ringbuf.ErrFlushed) && !errors.Is(err, os.ErrClosed) {
				s.readErr = fmt.Errorf("regions: read records: %w", err)
			}
			return
		}
		r, err := DecodeRecord(rec.RawSample, s.nCount)
		if err != nil {
			s.readErr = err
			continue
		}
		if (r.Kind == StartMarker || r.Kind == StopMarker) && r.Tag == "" {
			r.Tag = s.tag(r.TGID, r.SP)
		}
		s.records++
		s.agg.Add(r)
	}
}

// tag reads a LIKWID marker's tag at addr in process pid, for probes that
// could not read it (eBPF cannot fault a page in, and without likwid-perfctr
// the marker functions never touch their tag). Tags are string literals:
// each address is read once. A process already gone leaves the address as
// the name.
func (s *Session) tag(pid uint32, addr uint64) string {
	key := [2]uint64{uint64(pid), addr}
	if t, ok := s.tags[key]; ok {
		return t
	}
	name := fmt.Sprintf("tag@%#x", addr)
	if f, err := os.Open(fmt.Sprintf("/proc/%d/mem", pid)); err == nil {
		b := make([]byte, tagSize)
		n, _ := f.ReadAt(b, int64(addr))
		f.Close()
		if i := bytes.IndexByte(b[:n], 0); i > 0 {
			name = string(b[:i])
		}
	}
	if s.tags == nil {
		s.tags = map[[2]uint64]string{}
	}
	s.tags[key] = name
	return name
}

// Stop detaches the probes, reads the records left in the ring buffer and
// returns the figures. Call it once the process has ended (or when the
// probes should stop); records of calls still running count them as never
// left.
func (s *Session) Stop() (Result, error) {
	if s.result != nil {
		return *s.result, nil
	}
	lerr := s.closeLinks()
	if err := s.reader.Flush(); err != nil {
		s.Close()
		return Result{}, fmt.Errorf("regions: flush records: %w", err)
	}
	s.wg.Wait()
	res := Result{Regions: s.agg.Stats(), OrphanExits: s.agg.OrphanExits, Records: s.records, Calls: s.agg.Calls()}
	for i := range len(s.agg.regions) - len(s.agg.markers) {
		var n uint64
		if err := s.maps.lost.Lookup(uint32(i), &n); err == nil {
			res.Lost = append(res.Lost, n)
		}
	}
	var n uint64
	if err := s.maps.lost.Lookup(uint32(MaxRegions), &n); err == nil {
		res.LostMarkers = n
	}
	s.result = &res
	return res, errors.Join(lerr, s.readErr, s.Close())
}

func (s *Session) closeLinks() error {
	var errs []error
	for _, l := range s.links {
		errs = append(errs, l.Close())
	}
	s.links = nil
	return errors.Join(errs...)
}

// Close detaches and frees everything.
func (s *Session) Close() error {
	errs := []error{s.closeLinks()}
	if s.reader != nil {
		errs = append(errs, s.reader.Close())
		s.wg.Wait()
		s.reader = nil
	}
	for _, p := range s.progs {
		errs = append(errs, p.Close())
	}
	s.progs = nil
	for _, m := range append([]*ebpf.Map{s.maps.ring, s.maps.lost}, s.maps.counters...) {
		if m != nil {
			errs = append(errs, m.Close())
		}
	}
	s.maps = programMaps{}
	for _, pc := range s.percpu {
		errs = append(errs, pc.Close())
	}
	s.percpu = nil
	return errors.Join(errs...)
}
