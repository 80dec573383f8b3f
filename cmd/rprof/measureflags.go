package main

import (
	"flag"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/rprof/rprof/measure"
)

// measureFlags are the flags `rprof run` and `rprof gate` share to say how
// a target is measured: defined once, so both commands spell, document and
// check them alike.
type measureFlags struct {
	count         string
	events        eventList
	regions       specList
	likwid        bool
	work, traffic optFloat
	overhead      string
	idle          time.Duration
	roofs         string
	threads       int
	maxRepeat     int
	maxTime       time.Duration
	emulateFlags
	lockTimeout time.Duration
}

// emulateFlags are the options of --count emulate, which run, gate and
// dnn share.
type emulateFlags struct {
	cacheModel string
	emulateCPU string
	qemu       string
}

func (m *emulateFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&m.cacheModel, "cache-model", "", "cache hierarchy of --count emulate: `SIZE/WAYS,...[,line=B]` from L1 down, or none")
	fs.StringVar(&m.emulateCPU, "emulate-cpu", "host", "CPU `MODEL` QEMU presents under --count emulate: host (this CPU's identity) or a QEMU model (qemu-x86_64 -cpu help)")
	fs.StringVar(&m.qemu, "qemu", "", "qemu-x86_64 binary `PATH` of --count emulate (default: $"+measure.QEMUEnv+", else qemu-x86_64 in PATH)")
}

// apply fills the emulator's options; the flags of fs that were set
// belong to --count emulate, which count must be.
func (m *emulateFlags) apply(opts *measure.EmulatorOptions, count string, fs *flag.FlagSet) error {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	// An unknown backend emulates nothing; Run names the backends there are.
	caps, _ := measure.BackendCapabilities(count)
	for _, f := range []string{"cache-model", "emulate-cpu", "qemu"} {
		if set[f] && !caps.Emulates {
			return usagef("--%s is an option of --count emulate", f)
		}
	}
	opts.CPU, opts.QEMU = m.emulateCPU, m.qemu
	if set["cache-model"] {
		cm, err := measure.ParseCacheModel(m.cacheModel)
		if err != nil {
			return usagef("--cache-model: %v", err)
		}
		opts.CacheModel = &cm
	}
	return nil
}

func (m *measureFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&m.count, "count", measure.DefaultBackend, "count W and Q with `BACKEND` ("+strings.Join(measure.Backends(), ", ")+")")
	fs.Var(&m.events, "e", "count `EVENT` too (perf syntax; repeatable)")
	fs.Var(&m.regions, "region", "measure the function `SPEC` on its own (SYMBOL, LIB:SYMBOL, FILE:0xADDR; repeatable)")
	fs.BoolVar(&m.likwid, "likwid-markers", false, "take regions from the target's LIKWID marker calls")
	fs.StringVar(&m.overhead, "overhead", "", "overhead `command` to subtract")
	durationVar(fs, &m.idle, "idle-baseline", 0, "measure the idle DRAM rate for this `duration` first")
	fs.Var(&m.work, "work", "analytic work of one run in `FLOPs`")
	fs.Var(&m.traffic, "traffic", "analytic DRAM traffic of one run in `bytes`")
	fs.StringVar(&m.roofs, "roofs", "", "roofs document `FILE` to place the point under")
	fs.IntVar(&m.threads, "threads", 0, "thread scope of the roofs")
	fs.IntVar(&m.maxRepeat, "max-repeat", measure.DefaultMaxRepeat, "at most this many runs when repeating adaptively")
	durationVar(fs, &m.maxTime, "max-time", measure.DefaultMaxTime, "at most this `duration` of runs when repeating adaptively")
	m.emulateFlags.register(fs)
	lockTimeoutVar(fs, &m.lockTimeout)
}

// apply fills cfg's measurement fields from the parsed flags of fs. The
// roofs path and the repetition fields are left to the caller, whose rules
// for them differ.
func (m *measureFlags) apply(cfg *measure.Config, fs *flag.FlagSet) error {
	cfg.Counting.Backend, cfg.Counting.Events, cfg.Counting.IdleBaseline = m.count, m.events, m.idle
	cfg.Counting.Regions, cfg.Counting.LikwidMarkers = m.regions, m.likwid
	cfg.Counting.Work, cfg.Counting.Traffic, cfg.Placement.Threads = m.work.v, m.traffic.v, m.threads
	if err := m.emulateFlags.apply(&cfg.Counting.Emulator, m.count, fs); err != nil {
		return err
	}
	overheadSet := false
	fs.Visit(func(f *flag.Flag) { overheadSet = overheadSet || f.Name == "overhead" })
	if overheadSet {
		cfg.Counting.Overhead = strings.Fields(m.overhead)
		if len(cfg.Counting.Overhead) == 0 {
			return usagef("--overhead: empty command")
		}
	}
	return nil
}

// eventList is a repeatable -e flag; like perf stat, one -e may list
// several events separated by commas outside pmu/.../ terms.
type eventList []string

func (l *eventList) String() string { return strings.Join(*l, ",") }

func (l *eventList) Set(s string) error {
	start, inTerms := 0, false
	for i, c := range s {
		switch {
		case c == '/':
			inTerms = !inTerms
		case c == ',' && !inTerms:
			*l = append(*l, s[start:i])
			start = i + 1
		}
	}
	*l = append(*l, s[start:])
	return nil
}

// optFloat is a float flag that knows whether it was given.
type optFloat struct{ v *float64 }

func (o *optFloat) String() string {
	if o.v == nil {
		return ""
	}
	return strconv.FormatFloat(*o.v, 'g', -1, 64)
}

func (o *optFloat) Set(s string) error {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return fmt.Errorf("%q is not a non-negative number", s)
	}
	o.v = &v
	return nil
}

// specList is a repeatable flag of region specs.
type specList []string

func (l *specList) String() string { return strings.Join(*l, " ") }

func (l *specList) Set(s string) error {
	*l = append(*l, s)
	return nil
}
