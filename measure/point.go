package measure

import (
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/rprof/rprof/internal/stats"
	"github.com/rprof/rprof/regions"
	"github.com/rprof/rprof/roofline"

	"github.com/rprof/rprof/internal/unit"
)

// rep is one repetition: the target's run and, with an overhead command,
// the overhead run made just before it.
type rep struct {
	kernel   Outcome
	overhead *Outcome
	// regions is what the probes gave in the kernel's run (nil without
	// Config.Counting.Regions).
	regions *regions.Result
}

// inputs is everything a point is computed from; building it is pure.
type inputs struct {
	cfg Config
	// plan is the regions the target's runs attached (nil: none).
	plan     *regionPlan
	source   string
	counters []Counter
	reps     []rep
	// idle is the idle-baseline run (background counters only), nil
	// without.
	idle *Outcome
	// notes are flags known before running (no uncore, VM, unverified
	// events...).
	notes   []roofline.Flag
	machine roofline.Machine
	roofs   *roofline.Roofs
	created time.Time
	cpus    int // online CPUs, for the default thread scope
	// idleCPUs is how many CPUs stayed idle on average while the
	// repetitions ran; nil when not known.
	idleCPUs *float64
	// stdinOnce: the target's standard input, as it was before the first
	// run, is data one run consumes (see readOnce).
	stdinOnce bool
}

// buildPoint turns recorded runs into a point: overhead and idle
// subtraction, statistics over the repetitions, derived figures, validity
// flags and placement under the roofs.
func buildPoint(in inputs) (*roofline.Point, error) {
	cfg := in.cfg
	p := &roofline.Point{
		Schema:  roofline.PointSchema,
		Label:   cfg.Target.Label,
		Command: cfg.Target.Command,
		Created: in.created,
		Source:  in.source,
		Machine: in.machine,
		Flags:   slices.Clone(in.notes),
		Events:  []roofline.EventCount{},
	}
	if p.Label == "" {
		p.Label = filepath.Base(cfg.Target.Command[0])
	}
	if len(in.reps) == 0 {
		return nil, fmt.Errorf("measure: no repetition was run")
	}
	last := in.reps[len(in.reps)-1].kernel
	p.Exit = roofline.Exit{Code: last.ExitCode, Signal: last.Signal}

	nets, err := netTallies(in, p)
	if err != nil {
		return nil, err
	}
	seconds := timeFigures(p, nets, cfg.Repetition.Confidence)
	works, traffics := workAndTraffic(in, nets)
	if works != nil {
		p.Samples.WorkFlops = works
		p.WorkFlops = checkedMedian(p, roofline.SubjectWork, "work", "FLOP", works, cfg.Repetition.Confidence, in.source == roofline.SourceCounters)
		if p.WorkFlops != nil && counted(in.source) {
			p.WorkByPrecision = medianBy(nets, in.source == roofline.SourceEmulated)
		}
	}
	if traffics != nil {
		p.Samples.TrafficBytes = traffics
		p.TrafficBytes = checkedMedian(p, roofline.SubjectTraffic, "DRAM traffic", "B", traffics, cfg.Repetition.Confidence, in.source == roofline.SourceCounters)
		if q, _ := nets[0].dram(); p.TrafficBytes != nil && counted(in.source) {
			noisy := in.source == roofline.SourceCounters
			if q.hasRead {
				p.ReadBytes = checkedMedian(p, roofline.SubjectRead, "DRAM reads", "B", field(nets, func(t tally) float64 { q, _ := t.dram(); return q.read }), cfg.Repetition.Confidence, noisy)
			}
			if q.hasWrite {
				p.WriteBytes = checkedMedian(p, roofline.SubjectWrite, "DRAM writes", "B", field(nets, func(t tally) float64 { q, _ := t.dram(); return q.write }), cfg.Repetition.Confidence, noisy)
			}
		}
	}

	// Rates: mean and interval of the per-repetition rates, when every
	// repetition's net time is positive.
	if timeUsable(p, seconds) {
		p.GFlops, p.CI.GFlops = rate(works, seconds, cfg.Repetition.Confidence, p.WorkFlops != nil)
		p.GBytesPerS, p.CI.GBytesPerS = rate(traffics, seconds, cfg.Repetition.Confidence, p.TrafficBytes != nil)
		p.Flags = append(p.Flags, wideTimeFlag(p, in, seconds)...)
	}
	if p.WorkFlops != nil && p.TrafficBytes != nil && *p.TrafficBytes > 0 {
		p.Intensity = ptr(*p.WorkFlops / *p.TrafficBytes)
	}
	p.Levels = levelTraffic(nets, p.WorkFlops)
	p.Functions, p.Emulation = last.Functions, last.Emulation

	var evFlags []roofline.Flag
	p.Events, evFlags = eventCounts(in, nets)
	p.Flags = append(p.Flags, evFlags...)
	p.Flags = append(p.Flags, countFlags(in)...)
	p.Flags = append(p.Flags, exitFlags(in.reps)...)
	p.Flags = append(p.Flags, runFlags(in)...)
	p.CPUSeconds, p.Parallelism = parallelism(in.reps)
	if in.roofs != nil {
		place(p, in)
	}
	if plan, res := in.plan, in.reps[len(in.reps)-1].regions; plan != nil && res != nil {
		p.Regions = regionPoints(plan, *res, last.Functions, in.roofs, p.Threads)
		if cfg.Hooks.CallGroups != nil {
			if groups := cfg.Hooks.CallGroups(res.Calls); groups != nil {
				p.Regions = groupPoints(plan, *res, groups, in.roofs, p.Threads)
			}
		}
		p.Flags = append(p.Flags, plan.notes...)
		p.Flags = append(p.Flags, resultFlags(*res)...)
	}
	return p, nil
}

// timeFigures sets T, its interval and samples from the net times, which
// it returns.
func timeFigures(p *roofline.Point, nets []tally, confidence float64) []float64 {
	n := len(nets)
	seconds := make([]float64, n)
	var tw stats.Welford
	for i, t := range nets {
		seconds[i] = t.seconds
		tw.Add(t.seconds)
	}
	p.Samples.Seconds = seconds
	p.Seconds = tw.Mean()
	p.CI = roofline.Uncertainty{Confidence: confidence, Method: "none", N: n,
		Seconds: interval(&tw, confidence)}
	if n >= 2 {
		p.CI.Method = stats.CIMethod(n)
	}
	return seconds
}

// workAndTraffic is W and Q of each repetition: the analytic values, or
// the counted ones; nil when unknown.
func workAndTraffic(in inputs, nets []tally) (works, traffics []float64) {
	switch {
	case in.source == roofline.SourceAnalytic:
		if in.cfg.Counting.Work != nil {
			works = repeatValue(*in.cfg.Counting.Work, len(nets))
		}
		if in.cfg.Counting.Traffic != nil {
			traffics = repeatValue(*in.cfg.Counting.Traffic, len(nets))
		}
	case nets[0].hasWork || hasDRAM(nets[0]):
		for _, t := range nets {
			if t.hasWork {
				works = append(works, t.work)
			}
			if q, ok := t.dram(); ok {
				traffics = append(traffics, q.total)
			}
		}
		// One repetition's unknown count makes the median unknown: never
		// 0 in its place.
		if slices.ContainsFunc(nets, func(t tally) bool { return t.workUnknown }) {
			works = nil
		}
		if slices.ContainsFunc(nets, func(t tally) bool { return t.trafficUnknown }) {
			traffics = nil
		}
	}
	return works, traffics
}

// netTallies computes each repetition's tally less its overhead run and less
// the idle DRAM rate x its time.
func netTallies(in inputs, p *roofline.Point) ([]tally, error) {
	var idle *tally
	if in.idle != nil {
		t := tallyOf(background(in.counters, *in.idle))
		if !(t.seconds > 0) {
			return nil, fmt.Errorf("measure: idle baseline lasted %gs", t.seconds)
		}
		idle = &t
	}
	nets := make([]tally, len(in.reps))
	var ohSeconds stats.Welford
	var ohRuns []tally
	for i, r := range in.reps {
		t := tallyOf(in.counters, r.kernel)
		if r.overhead != nil {
			o := tallyOf(in.counters, *r.overhead)
			ohRuns = append(ohRuns, o)
			ohSeconds.Add(o.seconds)
			t = t.minus(o)
		}
		if idle != nil {
			t = t.lessIdle(*idle)
		}
		nets[i] = t
	}
	if ohRuns != nil || idle != nil {
		p.Overhead = overheadRecord(in, ohRuns, idle)
	}
	return nets, nil
}

// overheadRecord says what was subtracted: the overhead runs' medians and
// the idle rate.
func overheadRecord(in inputs, oh []tally, idle *tally) *roofline.Overhead {
	o := &roofline.Overhead{}
	if oh != nil {
		o.Command = in.cfg.Counting.Overhead
		o.Seconds = stats.Median(field(oh, func(t tally) float64 { return t.seconds }))
		if oh[0].hasWork {
			o.WorkFlops = ptr(stats.Median(field(oh, func(t tally) float64 { return t.work })))
		}
		if hasDRAM(oh[0]) {
			o.TrafficBytes = ptr(stats.Median(field(oh, func(t tally) float64 { q, _ := t.dram(); return q.total })))
		}
	}
	if idle != nil {
		if q, ok := idle.dram(); ok {
			o.IdleBytesPerS = ptr(q.total / idle.seconds)
		}
	}
	var runs []Outcome
	for _, r := range in.reps {
		if r.overhead != nil {
			runs = append(runs, *r.overhead)
		}
	}
	if runs != nil {
		for i, c := range in.counters {
			o.Events = append(o.Events, medianCount(c, i, runs))
		}
	}
	return o
}

// timeUsable reports whether rates can be computed from the net times: all
// must be positive. Otherwise the time and the rates are unknown, and a
// flag says that the overhead run took as long as the target.
func timeUsable(p *roofline.Point, seconds []float64) bool {
	for i, s := range seconds {
		if !(s > 0) {
			p.Flags = append(p.Flags, roofline.Flag{Code: roofline.FlagNegative, Subject: roofline.SubjectSeconds,
				Message: fmt.Sprintf("time is not positive after subtraction (repetition %d: %.6f s): the overhead command took as long as the target, so GFLOP/s and GB/s are unknown", i+1, s)})
			p.Seconds, p.CI.Seconds = 0, roofline.Interval{}
			return false
		}
	}
	return true
}

// rate is the mean and interval of xs[i]/seconds[i] in units of 1e9 per
// second; nil when the figure is unknown.
func rate(xs, seconds []float64, confidence float64, known bool) (*float64, *roofline.Interval) {
	if !known {
		return nil, nil
	}
	var w stats.Welford
	for i := range xs {
		w.Add(roofline.Rate(xs[i], seconds[i]))
	}
	if w.N() < 2 {
		return ptr(w.Mean()), nil
	}
	ci := interval(&w, confidence)
	return ptr(w.Mean()), &ci
}

// checkedMedian is the median of a per-repetition figure, or nil with a
// flag when it is negative (overhead or idle subtraction took more than
// there was). With subtracted counts and two or more repetitions, a median
// within the confidence half-width of zero is flagged as below the noise.
func checkedMedian(p *roofline.Point, subject, what, u string, xs []float64, confidence float64, counted bool) *float64 {
	m := stats.Median(xs)
	if m < 0 {
		p.Flags = append(p.Flags, roofline.Flag{Code: roofline.FlagNegative, Subject: subject,
			Message: fmt.Sprintf("%s is negative after subtraction (median %s %s): the overhead run or idle baseline counted more than the target; %s is reported as unknown", what, unit.Sig(m), u, what)})
		return nil
	}
	subtracted := p.Overhead != nil
	if counted && subtracted && len(xs) >= 2 {
		var w stats.Welford
		for _, x := range xs {
			w.Add(x)
		}
		if h := w.HalfWidth(confidence); m <= h {
			p.Flags = append(p.Flags, roofline.Flag{Code: roofline.FlagBelowNoise, Subject: subject,
				Message: fmt.Sprintf("%s after subtraction (%s %s) is within its %g%% confidence half-width (%s %s): it cannot be told from zero", what, unit.Sig(m), u, confidence*100, unit.Sig(h), u)})
		}
	}
	return &m
}

// medianBy is the median work of each precision.
func medianBy(nets []tally, dropZero bool) map[string]float64 {
	by := map[string]float64{}
	for k := range nets[0].workBy {
		by[k] = stats.Median(field(nets, func(t tally) float64 { return t.workBy[k] }))
		if dropZero && by[k] == 0 {
			delete(by, k)
		}
	}
	if len(by) == 0 {
		return nil
	}
	return by
}

// eventCounts reports every counter: Value is the median over repetitions
// of the multiplex-scaled count less the overhead run's; Raw, Enabled and
// Running are the medians of the target's own readings. A negative Value
// is reported as measured, with a flag.
func eventCounts(in inputs, nets []tally) (out []roofline.EventCount, flags []roofline.Flag) {
	kernels := make([]Outcome, len(in.reps))
	for j, r := range in.reps {
		kernels[j] = r.kernel
	}
	out = []roofline.EventCount{}
	user := 0
	for i, c := range in.counters {
		if c.Exact {
			continue
		}
		ec := medianCount(c, i, kernels)
		vals := make([]float64, len(in.reps))
		for j, r := range in.reps {
			switch {
			case c.Kind == KindEvent:
				vals[j] = nets[j].events[user]
			case r.overhead != nil:
				vals[j] = r.kernel.Counts[i].Value() - r.overhead.Counts[i].Value()
			default:
				vals[j] = r.kernel.Counts[i].Value()
			}
		}
		if c.Kind == KindEvent {
			user++
		}
		ec.Value = stats.Median(vals)
		if ec.Value < 0 {
			flags = append(flags, roofline.Flag{Code: roofline.FlagNegative, Subject: roofline.EventSubject(c.Name),
				Message: fmt.Sprintf("%s is negative after subtraction (median %s): the overhead run counted more than the target", c.Name, unit.Sig(ec.Value))})
		}
		out = append(out, ec)
	}
	return out, flags
}

// medianCount is counter i's reading, the median of each field over runs.
func medianCount(ctr Counter, i int, runs []Outcome) roofline.EventCount {
	var vals, raws, ens, runnings []float64
	for _, o := range runs {
		c := o.Counts[i]
		vals = append(vals, c.Value())
		raws = append(raws, float64(c.Raw))
		ens = append(ens, float64(c.Enabled))
		runnings = append(runnings, float64(c.Running))
	}
	return roofline.EventCount{
		Name:    ctr.Name,
		PMU:     ctr.PMU,
		Unit:    ctr.Unit,
		Value:   stats.Median(vals),
		Raw:     uint64(stats.Median(raws)),
		Enabled: uint64(stats.Median(ens)),
		Running: uint64(stats.Median(runnings)),
	}
}

// neverMeans says what a count that never ran does to the point.
func neverMeans(k Kind) string {
	switch k {
	case KindWork:
		return ", and so is W"
	case KindTraffic:
		return ", and so is the traffic it is part of"
	}
	return " and taken as 0"
}

// countFlags flags counters that were multiplexed (with the smallest
// running/enabled ratio seen), never ran, or counted nothing.
func countFlags(in inputs) []roofline.Flag {
	var flags []roofline.Flag
	for i, ctr := range in.counters {
		minFrac, never, zero := 1.0, false, true
		for _, r := range in.reps {
			for _, o := range []*Outcome{&r.kernel, r.overhead} {
				if o == nil {
					continue
				}
				c := o.Counts[i]
				switch {
				case c.Running == 0:
					never = true
				case c.Multiplexed():
					minFrac = math.Min(minFrac, c.RunningFraction())
				}
			}
			if r.kernel.Counts[i].Raw != 0 {
				zero = false
			}
		}
		name := ctr.Name
		subject := roofline.EventSubject(name)
		switch {
		case never:
			flags = append(flags, roofline.Flag{Code: roofline.FlagMissingCounter, Subject: subject,
				Message: fmt.Sprintf("%s was never scheduled on a counter (time running 0): its count is unknown%s", name, neverMeans(ctr.Kind))})
		case zero && ctr.Kind != KindEvent && !ctr.Exact:
			flags = append(flags, roofline.Flag{Code: roofline.FlagMissingCounter, Subject: subject,
				Message: fmt.Sprintf("%s counted 0: the target did no such work, or the counter does not count it here", name)})
		}
		if minFrac < 1 {
			flags = append(flags, roofline.Flag{Code: roofline.FlagMultiplexed, Subject: subject,
				Message: fmt.Sprintf("%s was multiplexed: on a counter %.1f%% of the time it was enabled (worst repetition); its count is scaled up by enabled/running and is an estimate", name, minFrac*100)})
		}
	}
	return flags
}

// exitFlags flags a target that failed; repetition stops at the first one.
func exitFlags(reps []rep) []roofline.Flag {
	k := reps[len(reps)-1].kernel
	switch {
	case k.Signal != "":
		return []roofline.Flag{{Code: roofline.FlagSignaled, Subject: roofline.SubjectExit,
			Message: fmt.Sprintf("the target was killed by %s in repetition %d: its counts cover a partial run", k.Signal, len(reps))}}
	case k.ExitCode != 0:
		return []roofline.Flag{{Code: roofline.FlagNonzeroExit, Subject: roofline.SubjectExit,
			Message: fmt.Sprintf("the target exited with status %d in repetition %d: it may not have done its normal work", k.ExitCode, len(reps))}}
	}
	return nil
}

// runFlags flags what the runs missed: processes the target left running,
// and a standard input only the first run could read.
func runFlags(in inputs) []roofline.Flag {
	var flags []roofline.Flag
	for i, r := range in.reps {
		if n := len(r.kernel.Outlived); n > 0 {
			flags = append(flags, roofline.Flag{Code: roofline.FlagOutlived, Subject: roofline.SubjectExit,
				Message: fmt.Sprintf("%d process(es) the target started were still running when it exited (repetition %d, pids %v): T ends at the target's exit, their counts go only as far as they ran before rprof read the counters, and rprof then killed them", n, i+1, r.kernel.Outlived)})
			break
		}
	}
	runs := len(in.reps)
	if in.cfg.Counting.Overhead != nil {
		runs *= 2
	}
	if runs > 1 && in.stdinOnce {
		flags = append(flags, roofline.Flag{Code: roofline.FlagStdinOnce,
			Message: fmt.Sprintf("standard input is a pipe or file, read by the first of %d runs (repetitions and overhead runs); the later ones found it at its end", runs)})
	}
	return flags
}

// readOnce says whether a target's standard input holds data one run
// consumes: a pipe, socket or file does; nothing (/dev/null), a terminal or
// another device does not, nor an empty in-memory reader.
func readOnce(r io.Reader) bool {
	if r == nil {
		return false
	}
	f, ok := r.(*os.File)
	if !ok {
		if l, ok := r.(interface{ Len() int }); ok {
			return l.Len() > 0
		}
		return true // fed through one pipe, once
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&fs.ModeDevice == 0
}

// parallelism is the mean CPU time of the target's runs and their CPU time
// over their wall time, from the runs that know their CPU time (before
// overhead subtraction: the overhead command's parallelism is not the
// program's); 0, 0 when none does.
func parallelism(reps []rep) (cpuSeconds, ratio float64) {
	var cpu, wall time.Duration
	n := 0
	for _, r := range reps {
		if r.kernel.CPU > 0 && r.kernel.Wall > 0 {
			cpu, wall, n = cpu+r.kernel.CPU, wall+r.kernel.Wall, n+1
		}
	}
	if n == 0 {
		return 0, 0
	}
	return cpu.Seconds() / float64(n), cpu.Seconds() / wall.Seconds()
}

// busyIdleCPUs: with fewer CPUs than this idle on average, the machine was
// busy enough to have held the program's threads back.
const busyIdleCPUs = 0.5

// place classifies the point under the roofs of the chosen thread scope
// and flags a point above its roof.
func place(p *roofline.Point, in inputs) {
	p.RoofsFile = in.cfg.Placement.RoofsPath
	roofline.MarkForeign(p, in.roofs)
	scope := roofline.ThreadScope(roofline.ScopeInputs{Scopes: in.roofs.ThreadScopes(), Want: in.cfg.Placement.Threads,
		Parallelism: p.Parallelism, CPUs: in.cpus})
	in.roofs.PlaceAt(p, scope.Threads)
	p.ThreadsRule = scope.Rule
	if scope.Rule == roofline.ScopeRuleParallelism && in.idleCPUs != nil && *in.idleCPUs < busyIdleCPUs && roofline.UsedThreads(p.Parallelism) < in.cpus {
		p.Flags = append(p.Flags, roofline.Flag{Code: roofline.FlagBusyMachine, Subject: roofline.SubjectPlacement,
			Message: busyMachine(*in.idleCPUs, in.cpus, p.Parallelism, p.Threads)})
	}
}

// busyMachine says how the CPUs were shared while the program ran and
// what that leaves unknown: the program's own share is not the others'
// (a single-threaded program on two CPUs, the other one busy, had its
// CPU), and its parallelism cannot tell its threads from fewer CPUs than
// it had threads.
func busyMachine(idle float64, cpus int, parallelism float64, scope int) string {
	shares := fmt.Sprintf("the program had %.2f of the %d CPUs on average while it ran, other processes or the hypervisor %.2f, and %.2f stayed idle",
		parallelism, cpus, max(0, float64(cpus)-idle-parallelism), idle)
	used := roofline.UsedThreads(parallelism)
	if scope < used {
		return fmt.Sprintf("%s: it is placed under the largest measured scope, %d threads, below the %d it kept busy; it may have run more threads still, which shared the CPUs it had", shares, scope, used)
	}
	threads := fmt.Sprintf("%d to %d threads", used, scope)
	switch {
	case used == scope && used == 1:
		threads = "1 thread"
	case used == scope:
		threads = fmt.Sprintf("%d threads", used)
	}
	return fmt.Sprintf("%s: the %d-thread roofs it is placed under are right for a program of %s; one of more threads shared the CPUs it had, so its parallelism is below the threads it ran and the scope too small",
		shares, scope, threads)
}

func interval(w *stats.Welford, confidence float64) roofline.Interval {
	if w.N() < 2 {
		return roofline.Interval{Lo: w.Mean(), Hi: w.Mean()}
	}
	lo, hi := w.MeanCI(confidence)
	return roofline.Interval{Lo: lo, Hi: hi}
}

// counted reports whether W and Q of a source were counted by a backend
// (rather than given or unknown).
func counted(source string) bool {
	return source == roofline.SourceCounters || source == roofline.SourceEmulated
}

// levelOrder is the memory hierarchy from the core down.
var levelOrder = []string{roofline.LevelL1, roofline.LevelL2, roofline.LevelL3, roofline.LevelDRAM}

// levelTraffic is the median traffic between each pair of adjacent levels
// counted, from the core down, with W over each; nil when only DRAM (or
// nothing) was counted.
func levelTraffic(nets []tally, work *float64) []roofline.LevelTraffic {
	var out []roofline.LevelTraffic
	upper := "core"
	if slices.ContainsFunc(nets, func(t tally) bool { return t.trafficUnknown }) {
		return nil
	}
	for _, l := range levelOrder {
		if _, ok := nets[0].traffic[l]; !ok {
			continue
		}
		read := stats.Median(field(nets, func(t tally) float64 { return t.traffic[l].read }))
		write := stats.Median(field(nets, func(t tally) float64 { return t.traffic[l].write }))
		row := roofline.LevelTraffic{Upper: upper, Lower: l, ReadBytes: read, WriteBytes: write}
		if work != nil && read+write > 0 {
			row.Intensity = ptr(*work / (read + write))
		}
		out = append(out, row)
		upper = l
	}
	if len(out) < 2 {
		return nil
	}
	return out
}

func field(ts []tally, f func(tally) float64) []float64 {
	out := make([]float64, len(ts))
	for i, t := range ts {
		out[i] = f(t)
	}
	return out
}

func repeatValue(v float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

func ptr(v float64) *float64 { return &v }

func hasDRAM(t tally) bool {
	_, ok := t.dram()
	return ok
}

// background keeps the background counters of an idle run: the counts of
// the others mean nothing.
func background(counters []Counter, o Outcome) ([]Counter, Outcome) {
	var cs []Counter
	bo := o
	bo.Counts = nil
	for i, c := range counters {
		if c.Background {
			cs = append(cs, c)
			bo.Counts = append(bo.Counts, o.Counts[i])
		}
	}
	return cs, bo
}
