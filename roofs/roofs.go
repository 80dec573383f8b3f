package roofs

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"time"

	"github.com/rprof/rprof/internal/affinity"
	"github.com/rprof/rprof/internal/stats"
	"github.com/rprof/rprof/internal/unit"
	"github.com/rprof/rprof/machine"
	"github.com/rprof/rprof/roofline"
	"github.com/rprof/rprof/roofs/kernels"
)

// Options configure Measure. The zero value measures everything with the
// defaults, in this process.
type Options struct {
	// Threads are the thread counts of the scopes to measure; nil means one
	// thread, the cores of one socket and all cores.
	Threads []int
	// Quick measures a reduced set (widest FMA kernels, two DGEMM shapes,
	// one sweep point per octave, one invocation) in seconds.
	Quick bool
	// Fixed, when > 0, evaluates every configuration with a fixed sample of
	// Fixed iterations in each of the invocations and no early stopping,
	// as the baseline of seed 000's tables.
	Fixed int
	// Method summarises samples (default stats.DefaultMethod).
	Method stats.Method
	// Order is the search order over configurations. The default searches
	// compute iteration counts forward and DGEMM shapes in reverse (largest
	// first: BLAS rates grow with the shape, so the large shapes set a high
	// best early and stop the small ones at their first invocation).
	Order stats.Order
	// Invocations is the outer loop's maximum count (default 3; 1 with
	// Quick).
	Invocations int
	// BLAS is the BLAS library to load; "" searches the usual places.
	BLAS string
	// NoDGEMM skips the DGEMM roof.
	NoDGEMM bool
	// DGEMMSpace is the DGEMM search space: "quick", "default" or "seed"
	// (seed 000's reduced space of 96 shapes).
	DGEMMSpace string
	// DGEMMBudget, when set, bounds the DGEMM search's wall time: no
	// shape starts, and no duel of the climb whose predicted time does
	// not fit, once it is spent; 0 means no bound. nil means the default:
	// 25 s, but none with Fixed, whose baseline must measure every shape,
	// or with the "seed" space, asked for to measure all of it.
	DGEMMBudget *time.Duration

	// DNN lists the oneDNN problems whose ceilings to measure, as library
	// roofs on every thread scope: seed 004 experiment names or verbose
	// problem descriptors (dnnbench.Resolve). Empty (the default) runs no
	// oneDNN harness. The workers call oneDNN from their main thread, so
	// the Invoker must run each job in a fresh process (Subprocess).
	DNN []string

	// now is the clock of the DGEMM search's budget (time.Now when nil;
	// tests pass a fake one).
	now func() time.Time
	// Invoker runs compute and DGEMM invocations (default InProcess).
	Invoker Invoker
	// Progress, if set, receives a line of text before each step.
	Progress func(step string)
	// Host is the machine described: its CPU, topology, declared caches
	// and MemAvailable (nil: this machine). The benchmarks run here, and
	// the clock is read from this kernel.
	Host *machine.Host
	// MaxMemory, when > 0, is the most a bandwidth sweep places, below
	// the default of a quarter of MemAvailable.
	MaxMemory int64
}

// Detail says how one roof was obtained, for the summary table.
type Detail struct {
	// Config is the winning configuration, e.g. "iters=65536" or
	// "n=2000 m=4000 k=128".
	Config      string
	Invocations int
	Iterations  int
	// Reasons counts why the evaluations of this roof's configurations
	// ended.
	Reasons map[stats.StopReason]int
}

// Details say how each roof of a Report was obtained, by its place:
// Compute[i] is Roofs.Compute[i]'s, Bandwidth[i] Roofs.Bandwidth[i]'s and
// DGEMM Roofs.DGEMM's.
type Details struct {
	Compute, Bandwidth []Detail
	DGEMM              *Detail
}

// Report is what Measure found.
type Report struct {
	Roofs   roofline.Roofs
	Details Details
	// Skipped are the harnesses that measured nothing, and why.
	Skipped []Skip
	// DGEMMPath is the BLAS library file DGEMM used.
	DGEMMPath string
	// DGEMMKernels are the library's kernel sets (as OPENBLAS_CORETYPE or
	// BLIS_ARCH_TYPE name them) that may do better than those DGEMM used,
	// best first, when it was flagged dgemm-below-fma for kernels
	// narrower than the CPU's; empty otherwise.
	DGEMMKernels []string
}

// addCompute adds a compute roof and its detail; it returns their place.
func (r *Report) addCompute(c roofline.ComputeRoof, d Detail) int {
	r.Roofs.Compute = append(r.Roofs.Compute, c)
	r.Details.Compute = append(r.Details.Compute, d)
	return len(r.Roofs.Compute) - 1
}

// addBandwidth adds a bandwidth roof and its detail; it returns their
// place.
func (r *Report) addBandwidth(b roofline.BandwidthRoof, d Detail) int {
	r.Roofs.Bandwidth = append(r.Roofs.Bandwidth, b)
	r.Details.Bandwidth = append(r.Details.Bandwidth, d)
	return len(r.Roofs.Bandwidth) - 1
}

// Skip says why a harness measured nothing; Harness is its title
// ("DGEMM"). Code names the cases a caller may act on (the Skip
// constants), "" for others.
type Skip struct{ Harness, Why, Code string }

// Codes of skips.
const (
	// SkipNoDGEMM: DGEMM was not asked for (Options.NoDGEMM).
	SkipNoDGEMM = "no-dgemm"
	// SkipNoBLAS: no BLAS library was found where none was named
	// (Options.BLAS).
	SkipNoBLAS = "no-blas"
)

// ErrThreads is returned when a thread scope asks for more CPUs than the
// process may use.
var ErrThreads = errors.New("not enough CPUs")

// Confidence is the level of every roof's interval, for the stop rules
// and for whoever shows the intervals (seed 000 Table I uses 99%).
const Confidence = 0.99

// Defaults of the stop rules (seed 000 Table I uses 1% error, 200
// iterations, 10 invocations and 10 s; the budgets here are smaller so
// that the whole roof set takes under a minute).
const (
	relError     = 0.01
	maxCount     = 200
	minCount     = 8 // the fewest samples for a 99% order-statistic interval
	bestMinCount = 3
)

func (o Options) method() stats.Method {
	if o.Method == "" {
		return stats.DefaultMethod
	}
	return o.Method
}

// innerRule is the iteration loop's rule with the given time budget.
func (o Options) innerRule(budget time.Duration) stats.StopRule {
	if o.Fixed > 0 {
		return stats.Fixed(o.Fixed, Confidence, o.method())
	}
	return stats.StopRule{MaxTime: budget, MaxCount: maxCount, Confidence: Confidence, RelError: relError,
		MinCount: minCount, BestMinCount: bestMinCount, Method: o.method()}
}

func (o Options) evaluator(budget time.Duration) stats.Evaluator {
	inv := o.Invocations
	if inv <= 0 {
		inv = 3
		if o.Quick {
			inv = 1
		}
	}
	ev := stats.Evaluator{Inner: o.innerRule(budget)}
	if o.Fixed > 0 {
		ev.Outer = stats.Fixed(inv, 0.95, o.method())
		return ev
	}
	// The outer loop stops early when the invocations so far agree within
	// the error asked, or when their pooled interval is below the best.
	ev.Outer = stats.StopRule{MaxCount: inv, Confidence: Confidence, RelError: relError, MinCount: 2, BestMinCount: 2, Method: o.method()}
	return ev
}

func (o Options) clock() func() time.Time {
	if o.now == nil {
		return time.Now
	}
	return o.now
}

// dgemmBudget is the DGEMM search's time budget, 0 for none.
func (o Options) dgemmBudget() time.Duration {
	switch {
	case o.DGEMMBudget != nil:
		return *o.DGEMMBudget
	case o.Fixed > 0 || o.DGEMMSpace == "seed":
		return 0
	}
	return dgemmSearchBudget
}

func (o Options) progress(format string, args ...any) {
	if o.Progress != nil {
		o.Progress(fmt.Sprintf(format, args...))
	}
}

// Measure measures the roofs of this machine.
func Measure(ctx context.Context, o Options) (*Report, error) {
	start := time.Now()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	o.Host = o.Host.OrLive()
	if o.Invoker == nil {
		o.Invoker = InProcess{}
	}
	cpu, err := o.Host.CPU()
	if err != nil {
		return nil, err
	}
	topo, topoErr := o.Host.Topology()
	if topoErr != nil {
		// A partial or unreadable /sys need not stop the benchmarks: the
		// CPUs this process may use are enough to place the threads.
		allowed, err := affinity.Allowed()
		if err != nil || len(allowed) == 0 {
			return nil, topoErr
		}
		topo = flatTopology(allowed)
	}
	scopes, spare, err := threadScopes(topo, o.Threads)
	if err != nil {
		return nil, err
	}
	rep := &Report{Roofs: roofline.Roofs{
		Schema:  roofline.RoofsSchema,
		Created: time.Now().UTC(),
		Machine: machine.Describe(cpu, topo, o.Host.Sysfs, o.Host.Procfs),
		Tuning:  roofline.Tuning{StopReasons: map[string]int{}, Method: string(o.method())},
	}}
	t := &tally{tuning: &rep.Roofs.Tuning}
	if topoErr != nil {
		rep.flag(roofline.FlagTopologySource, fmt.Sprintf("the CPU topology could not be read (%v): each of the %d CPUs this process may use is taken as a core of one socket", topoErr, len(topo.Online)))
	}
	flagHybrid(rep, topo, scopes)
	caches := o.Host.Caches()
	if topoErr != nil {
		caches = machine.ReadCaches(topo, o.Host.CPUID())
	}
	if caches.Source != roofline.CacheSourceSysfs || len(caches.Notes) > 0 {
		rep.flag(roofline.FlagCacheSource, cacheNote(caches))
	}
	if cpu.Hypervisor() {
		rep.flag(roofline.FlagVM, "measured in a virtual machine: other guests share the host")
	}

	units, freq := peakFigures(rep, cpu, o.Host.Sysfs, o.Host.Procfs, clockMHz)
	rep.step("setup", "machine and clock", time.Since(start))
	r := &run{o: o, rep: rep, tally: t, scopes: scopes}
	h := host{topo: topo, caches: caches, spare: spare, units: units, ghz: freq.GHz, memLimit: sweepMemoryLimit(o)}
	if err := runHarnesses(ctx, r, h); err != nil {
		return nil, err
	}
	rep.Roofs.Tuning.Seconds = time.Since(start).Seconds()
	return rep, nil
}

// peakFigures returns the FMA pipes of cpu's microarchitecture and the
// clock the theoretical peaks use, and flags what they rest on: no pipes
// (zero) when either is unknown, which leaves the peaks out.
func peakFigures(rep *Report, cpu machine.CPUInfo, sysfs, procfs fs.FS, clockMHz func() float64) (fmaPipes, peakClock) {
	id := machine.Identify(cpu)
	units, known := fpUnits[id.Microarch]
	freq, ferr := nominalFrequency(sysfs, procfs, clockMHz)
	switch {
	case !known:
		rep.flag(roofline.FlagUnverifiedPeak, fmt.Sprintf("no FMA pipe figures for %q (%s): theoretical peaks left out", id.Microarch, cpu.ModelName))
		return fmaPipes{}, freq
	case ferr != nil:
		rep.flag(roofline.FlagFrequency, "no clock frequency: theoretical peaks left out: "+ferr.Error())
		return fmaPipes{}, freq
	}
	rep.flag(roofline.FlagFrequency, fmt.Sprintf("theoretical peaks use %.3g GHz from %s and %d FMA pipes of %d bits per core (%s)", freq.GHz, freq.Source, units.FMAUnits, units.Bits, units.Source))
	if !units.Verified {
		rep.flag(roofline.FlagUnverifiedPeak, "the FMA pipe figures for "+id.Microarch+" are UNVERIFIED")
	}
	if id.Inferred() {
		rep.flag(roofline.FlagUnverifiedPeak, fmt.Sprintf("the theoretical peaks use the FMA pipes of %s, inferred from the CPU's features: %s", id.Microarch, id.Note))
	}
	return units, freq
}

// defaultMemoryLimit bounds a sweep where MemAvailable cannot be read.
const defaultMemoryLimit = 2 << 30

// sweepMemoryLimit is the most a bandwidth sweep places: a quarter of
// MemAvailable, so that the sweep never pushes the machine's other work
// into swap, or less if asked.
func sweepMemoryLimit(o Options) memoryLimit {
	limit := memoryLimit{Bytes: defaultMemoryLimit}
	if avail, err := machine.MemAvailable(o.Host.OrLive().Procfs); err != nil {
		limit.From = fmt.Sprintf("%s, MemAvailable being unknown (%v)", unit.Bytes(limit.Bytes), err)
	} else {
		limit = memoryLimit{Bytes: avail / 4, From: fmt.Sprintf("a quarter of MemAvailable (%s)", unit.Bytes(avail))}
	}
	if o.MaxMemory > 0 && o.MaxMemory < limit.Bytes {
		limit = memoryLimit{Bytes: o.MaxMemory, From: fmt.Sprintf("the limit asked for (%s)", unit.Bytes(o.MaxMemory))}
	}
	return limit
}

// flatTopology is a machine of one socket whose every CPU is a core, for
// when sysfs's topology cannot be read.
func flatTopology(cpus []int) machine.Topology {
	t := machine.Topology{Sockets: 1, Cores: len(cpus), Threads: len(cpus), Online: cpus}
	for _, c := range cpus {
		t.SMTSiblings = append(t.SMTSiblings, []int{c})
	}
	return t
}

// flagHybrid flags the scopes that mix core types of a hybrid CPU: their
// roofs are the mix's, not either kind of core's.
func flagHybrid(rep *Report, topo machine.Topology, scopes [][]int) {
	for _, cpus := range scopes {
		var kinds []string
		for _, c := range cpus {
			if k := topo.CoreType(c); k != "" && !slices.Contains(kinds, k) {
				kinds = append(kinds, k)
			}
		}
		slices.Sort(kinds)
		if len(kinds) > 1 {
			rep.flag(roofline.FlagHybridScope, fmt.Sprintf("the %s scope mixes %s cores of a hybrid CPU: its roofs are the mix's", threadsWord(len(cpus)), strings.Join(kinds, " and ")))
		}
	}
}

// cacheSource joins the bandwidth roofs' level sources in order, without
// repeats.
func cacheSource(bw []roofline.BandwidthRoof) string {
	var srcs []string
	for _, b := range bw {
		if b.LevelSource != "" && !slices.Contains(srcs, b.LevelSource) {
			srcs = append(srcs, b.LevelSource)
		}
	}
	return strings.Join(srcs, "+")
}

// cacheNote says where the cache sizes came from and what was rejected.
func cacheNote(c machine.Caches) string {
	from := "cache sizes from " + c.Source
	switch {
	case c.Source == "":
		from = "no cache size from sysfs or CPUID: every level is found from the bandwidth sweep"
	case !c.Complete:
		from += "; the levels past them are found from the bandwidth sweep"
	}
	return from + ": " + strings.Join(c.Notes, "; ")
}

// partTimer returns a function that records the time since its previous
// call (or since partTimer) as the named part's.
func partTimer(t *roofline.Tuning) func(name string) {
	t.PartSeconds = map[string]float64{}
	last := time.Now()
	return func(name string) {
		now := time.Now()
		t.PartSeconds[name] += now.Sub(last).Seconds()
		last = now
	}
}

// widest is the scope with the most CPUs.
func widest(scopes [][]int) []int {
	return slices.MaxFunc(scopes, func(a, b []int) int { return cmp.Compare(len(a), len(b)) })
}

// noteAboveTheory flags roofs above their theoretical peak once, with the
// clock they imply: the usual cause is a nominal clock below the real one
// (VMs show the host's base clock in /proc/cpuinfo).
func noteAboveTheory(rep *Report, ghz float64) {
	lo, hi, n := 0.0, 0.0, 0
	var roofs []string
	for _, c := range rep.Roofs.Compute {
		if c.TheoreticalGFlops == 0 || c.GFlops <= c.TheoreticalGFlops*1.02 {
			continue
		}
		r := c.GFlops / c.TheoreticalGFlops
		if n == 0 || r < lo {
			lo = r
		}
		hi = max(hi, r)
		n++
		roofs = append(roofs, fmt.Sprintf("%s (%s) %s GFLOP/s against %s", c.Name, threadsWord(c.Threads), rateText(c.GFlops, c.CI, c.IntervalUnknown), unit.Sig(c.TheoreticalGFlops)))
	}
	if n > 0 {
		rep.flag(roofline.FlagAboveTheory, fmt.Sprintf("%d compute roofs are %.0f%% to %.0f%% of their theoretical peak at %.3g GHz (%s): the cores ran at about %.2g to %.2g GHz, above the clock the peaks use",
			n, 100*lo, 100*hi, ghz, strings.Join(roofs, "; "), lo*ghz, hi*ghz))
	}
}

// flagSkipped flags the kernels the CPU cannot run, one flag per reason.
func flagSkipped(rep *Report, skipped []kernels.Skipped) {
	var reasons []string
	names := map[string][]string{}
	for _, s := range skipped {
		if names[s.Reason] == nil {
			reasons = append(reasons, s.Reason)
		}
		names[s.Reason] = append(names[s.Reason], s.Name)
	}
	for _, r := range reasons {
		rep.flag(roofline.FlagKernelSkipped, fmt.Sprintf("skipped %s: %s", strings.Join(names[r], ", "), r))
	}
}

// step records how long one step of a part took, in the order they ran.
func (r *Report) step(part, name string, d time.Duration) {
	r.Roofs.Tuning.Steps = append(r.Roofs.Tuning.Steps, roofline.Step{Part: part, Name: name, Seconds: d.Seconds()})
}

func (r *Report) flag(code, msg string) {
	r.Roofs.Flags = append(r.Roofs.Flags, roofline.Flag{Code: code, Message: msg})
}

// tally adds evaluations to the tuning summary.
type tally struct{ tuning *roofline.Tuning }

func (t *tally) add(rs ...stats.Result) map[stats.StopReason]int {
	reasons := map[stats.StopReason]int{}
	for _, r := range rs {
		if r.Invocations == 0 {
			continue // not evaluated
		}
		t.tuning.Configurations++
		t.tuning.Evaluations += r.Iterations
		t.tuning.StopReasons[string(r.Reason)]++
		reasons[r.Reason]++
	}
	return reasons
}

// threadScopes returns the CPUs of each thread scope: one thread per physical
// core (SMT siblings add no FMA pipes and share the core's caches), taken
// in order from the CPUs this process may use. Without threads the scopes
// are one core, the cores of one socket and all cores, without duplicates.
// spare maps each one-thread scope's CPU to its spare core (spareCores).
func threadScopes(topo machine.Topology, threads []int) (s [][]int, spare map[int]int, err error) {
	allowed, err := affinity.Allowed()
	if err != nil {
		return nil, nil, err
	}
	if s, err = scopes(topo, allowed, threads); err != nil {
		return nil, nil, err
	}
	return s, spareCores(topo, allowedCores(topo, allowed), s), nil
}

func scopes(topo machine.Topology, allowed, threads []int) ([][]int, error) {
	cores := allowedCores(topo, allowed)
	if threads == nil {
		perSocket := len(cores)
		if topo.Sockets > 1 {
			perSocket = max(1, topo.Cores/topo.Sockets)
		}
		threads = []int{1}
		for _, n := range []int{min(perSocket, len(cores)), len(cores)} {
			if !slices.Contains(threads, n) {
				threads = append(threads, n)
			}
		}
	}
	var out [][]int
	for _, n := range threads {
		if n > len(cores) { // Validate refused counts under 1
			return nil, fmt.Errorf("thread scope %d: rprof may use %d cores here (%d CPUs): %w", n, len(cores), len(allowed), ErrThreads)
		}
		out = append(out, cores[:n])
	}
	return out, nil
}

// allowedCores is one allowed CPU of each core, the first of its SMT
// siblings, or allowed itself when the topology has no siblings.
func allowedCores(topo machine.Topology, allowed []int) []int {
	var cores []int
	for _, sib := range topo.SMTSiblings {
		for _, c := range sib {
			if slices.Contains(allowed, c) {
				cores = append(cores, c)
				break
			}
		}
	}
	if len(cores) == 0 {
		return allowed
	}
	return cores
}

// spareCores maps the CPU of each one-thread scope to the core its
// bandwidth roofs are measured again on: the first other of cores on the
// same memory node and of the same core type, or none. On a shared host one
// core can be slowed for seconds while another is not (docs/roofs.md). A
// one-thread roof is what one thread can reach, on either core.
func spareCores(topo machine.Topology, cores []int, scopes [][]int) map[int]int {
	spare := map[int]int{}
	for _, s := range scopes {
		if len(s) != 1 {
			continue
		}
		for _, c := range cores {
			if c != s[0] && topo.Node(c) == topo.Node(s[0]) && topo.CoreType(c) == topo.CoreType(s[0]) {
				spare[s[0]] = c
				break
			}
		}
	}
	return spare
}

// widestFMA keeps the FMA kernels of the widest ISA, one per precision.
func widestFMA(ks []kernels.Compute) []kernels.Compute {
	best := map[string]kernels.Compute{}
	for _, k := range ks {
		if !k.FMA {
			continue
		}
		if b, ok := best[k.Precision]; !ok || isaBits[k.ISA] > isaBits[b.ISA] {
			best[k.Precision] = k
		}
	}
	var out []kernels.Compute
	for _, k := range ks {
		if best[k.Precision].Name == k.Name {
			out = append(out, k)
		}
	}
	return out
}

// threadsWord is "1 thread" or "n threads".
func threadsWord(n int) string {
	if n == 1 {
		return "1 thread"
	}
	return fmt.Sprintf("%d threads", n)
}

// samplesWord is "1 sample is" or "3 samples are".
func samplesWord(n int) string {
	if n == 1 {
		return "1 sample is"
	}
	return fmt.Sprintf("%d samples are", n)
}
