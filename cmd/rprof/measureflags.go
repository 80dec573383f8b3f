package main

import (
	"flag"
	"strings"
	"time"

	"github.com/rprof/rprof/cmd/rprof/internal/advice"
	"github.com/rprof/rprof/cmd/rprof/internal/flagval"
	"github.com/rprof/rprof/measure"
)

// measureFlags are the flags `rprof run` and `rprof gate` share to say how
// a target is measured: defined once, so both commands spell, document and
// check them alike.
type measureFlags struct {
	count         string
	events        flagval.Events
	regions       flagval.List
	likwid        bool
	work, traffic flagval.OptFloat
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
	fs.StringVar(&m.cacheModel, "cache-model", "", "the caches --count emulate simulates, a model `M` from L1 down: SIZE/WAYS,...[,line=BYTES] (e.g. 48K/12,1M/16,32M/16), or none (W only); default: the roofs document's measured level sizes, else this machine's")
	fs.StringVar(&m.emulateCPU, "emulate-cpu", "host", "the CPU QEMU presents under --count emulate: host (this CPU's vendor, family, model and brand with every feature QEMU emulates, so libraries pick their nearest native path) or a QEMU `MODEL` (qemu-x86_64 -cpu help)")
	fs.StringVar(&m.qemu, "qemu", "", "the qemu-x86_64 `PATH` of --count emulate (default: $"+measure.QEMUEnv+", else qemu-x86_64 in PATH)")
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
	fs.StringVar(&m.count, "count", measure.DefaultBackend, "how W and Q are counted, by `BACKEND`: pmu, the hardware counters through perf_event_open; emulate, under QEMU ("+advice.EmulationCost+")")
	fs.Var(&m.events, "e", "also count `EVENT` (perf syntax: page-faults, cpu/event=0x3,umask=0x8f/, rNNNN); repeatable, or several separated by commas")
	fs.Var(&m.regions, "region", "also measure one function on its own, with eBPF uprobes (root, or CAP_BPF and CAP_PERFMON); `SPEC` is SYMBOL in CMD, LIB:SYMBOL (a library path or soname; SYMBOL@VERSION for a version other than the default) or FILE:0xADDR (the address nm prints); repeatable. The regions table gives calls, inclusive and self time, the per-call distribution, the probes' cost and W; DRAM traffic is not attributed to regions")
	fs.BoolVar(&m.likwid, "likwid-markers", false, "take regions from CMD's LIKWID marker calls (likwid_markerStartRegion/StopRegion), named by tag")
	fs.StringVar(&m.overhead, "overhead", "", "a command doing everything CMD does except the kernel (setup, allocation, teardown), given as one `'CMD'` argument; it runs before each repetition under the same counters and its W, Q, T and event counts are subtracted. Split at white space, no quoting: use a script for arguments with spaces")
	flagval.DurationVar(fs, &m.idle, "idle-baseline", 0, "count DRAM traffic for duration `D` with nothing running, right before the first repetition, and subtract that rate x T from Q (e.g. 500ms)")
	fs.Var(&m.work, "work", "analytic work of one run, in `FLOPS` (e.g. 2e9): CMD is only timed and the point is marked analytic")
	fs.Var(&m.traffic, "traffic", "analytic DRAM traffic of one run, in `BYTES`")
	fs.StringVar(&m.roofs, "roofs", "", "roofs document `FILE` to place the point under (default: the one 'rprof roofs' wrote, if any)")
	fs.IntVar(&m.threads, "threads", 0, "thread scope of the roofs, `N` threads (default: the program's parallelism, CPU time over wall time; see 'rprof help run')")
	fs.IntVar(&m.maxRepeat, "max-repeat", measure.DefaultMaxRepeat, "at most `N` runs when repeating by --ci")
	flagval.DurationVar(fs, &m.maxTime, "max-time", measure.DefaultMaxTime, "at most `D` of runs when repeating by --ci")
	m.emulateFlags.register(fs)
	lockTimeoutVar(fs, &m.lockTimeout)
}

// apply fills cfg's measurement fields from the parsed flags of fs. The
// roofs path and the repetition fields are left to the caller, whose rules
// for them differ.
func (m *measureFlags) apply(cfg *measure.Config, fs *flag.FlagSet) error {
	cfg.Counting.Backend, cfg.Counting.Events, cfg.Counting.IdleBaseline = m.count, m.events, m.idle
	cfg.Counting.Regions, cfg.Counting.LikwidMarkers = m.regions, m.likwid
	cfg.Counting.Work, cfg.Counting.Traffic, cfg.Placement.Threads = m.work.V, m.traffic.V, m.threads
	if err := m.emulateFlags.apply(&cfg.Counting.Emulator, m.count, fs); err != nil {
		return err
	}
	overheadSet := false
	fs.Visit(func(f *flag.Flag) { overheadSet = overheadSet || f.Name == "overhead" })
	if overheadSet {
		// measure refuses an empty one (Counting.Overhead).
		cfg.Counting.Overhead = strings.Fields(m.overhead)
	}
	return nil
}
