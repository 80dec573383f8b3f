package gate

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/rprof/rprof/internal/stats"
	"github.com/rprof/rprof/roofline"
)

// Options are the statistical settings of a comparison. Copy DefaultOptions
// and change what you need; zero fields take the defaults.
type Options struct {
	// Test is the two-sample test of timed figures: stats.TestWelch
	// (default) or stats.TestMannWhitney. Summaries without samples are
	// always tested with Welch's t.
	Test string
	// Alpha is the significance level (default 0.05).
	Alpha float64
	// Confidence is the level of the intervals of differences (default
	// 0.95).
	Confidence float64
	// Tolerance is the relative change of W, Q and intensity still counted
	// as the same (default 0.01).
	Tolerance float64
}

// DefaultOptions are the settings used when none are given.
var DefaultOptions = Options{Test: stats.TestWelch, Alpha: 0.05, Confidence: 0.95, Tolerance: 0.01}

// ErrLabels is wrapped by errors about labels that do not pair up.
var ErrLabels = errors.New("labels do not match")

func (o Options) withDefaults() (Options, error) {
	if o.Test == "" {
		o.Test = DefaultOptions.Test
	}
	if o.Test != stats.TestWelch && o.Test != stats.TestMannWhitney {
		return o, fmt.Errorf("test %q: want %s or %s", o.Test, stats.TestWelch, stats.TestMannWhitney)
	}
	if o.Alpha == 0 {
		o.Alpha = DefaultOptions.Alpha
	}
	if o.Confidence == 0 {
		o.Confidence = DefaultOptions.Confidence
	}
	if o.Tolerance == 0 {
		o.Tolerance = DefaultOptions.Tolerance
	}
	if !(o.Alpha > 0 && o.Alpha < 1) || !(o.Confidence > 0 && o.Confidence < 1) {
		return o, fmt.Errorf("alpha %g and confidence %g must be in (0, 1)", o.Alpha, o.Confidence)
	}
	if !(o.Tolerance > 0) {
		return o, fmt.Errorf("tolerance %g must be positive", o.Tolerance)
	}
	return o, nil
}

// Metric names, as shown in tables.
const (
	MetricTime      = "time"
	MetricGFlops    = "GFLOP/s"
	MetricFraction  = "fraction"
	MetricWork      = "W"
	MetricTraffic   = "Q"
	MetricIntensity = "intensity"
)

// Value is one side of a row.
type Value struct {
	Known  bool
	Center float64
	// Lo and Hi bound Center (NaN when there is no interval).
	Lo, Hi float64
	// N is the number of repetitions behind Center (0 when unknown).
	N int
}

// Row compares one metric of two points.
type Row struct {
	Metric string
	// Unit is the unit of Center ("s", "GFLOP/s", "FLOP", "B", "FLOP/B",
	// "" for a fraction).
	Unit     string
	Old, New Value
	// Change is New/Old - 1 (NaN when either is unknown or Old is 0).
	Change float64
	// Deterministic rows are compared against Tolerance (none when Exact);
	// the others with a test.
	Deterministic bool
	// Exact: both points' figure is deterministic (roofline.Point's
	// ExactWork, ExactTraffic; the intensity needs both), so the row was
	// compared with no tolerance.
	Exact bool
	// Inexact says why a row of two emulated points was compared with the
	// tolerance after all (InexactThreads, InexactUnrecorded); "" otherwise.
	Inexact string
	// Slack is the change in bytes an exact modelled Q may show between
	// runs in different environments (the larger argument and
	// environment block of the two, in whole lines); 0 otherwise.
	Slack float64
	// Test is the two-sample test of a timed row; nil when it could not be
	// run, and NoTest says why.
	Test   *stats.Comparison
	NoTest string
	// FromIntervals: a point kept no samples, so the test ran on summaries
	// recovered from the confidence intervals.
	FromIntervals bool
	// Significant: the test's p is below Alpha (timed rows), or the change
	// is beyond the tolerance (deterministic rows).
	Significant bool
}

// Pair is the comparison of two points with the same label.
type Pair struct {
	Label    string
	Old, New roofline.Point
	Rows     []Row
	// Context lists what differs between the two measurements besides the
	// kernel: machine, thread scope, roofs. Empty when they are alike.
	Context []string
	// Flags are both points' validity warnings, as "old|new code: message".
	Flags []string
	// OtherMachine: the CPU or its core count (roofline.CompareMachines),
	// or the thread scope differs. OtherRoofs: both points were placed,
	// under roofs giving different ceilings. SameRoofs: both were placed,
	// under the same ceiling.
	OtherMachine, OtherRoofs, SameRoofs bool
}

// Row returns the row of a metric, or nil.
func (p *Pair) Row(metric string) *Row {
	for i := range p.Rows {
		if p.Rows[i].Metric == metric {
			return &p.Rows[i]
		}
	}
	return nil
}

// anyKnown reports whether a row has a figure on either side.
func (p *Pair) anyKnown() bool {
	for _, r := range p.Rows {
		if r.Old.Known || r.New.Known {
			return true
		}
	}
	return false
}

// Comparison is the result of comparing two files of points.
type Comparison struct {
	Options Options
	Pairs   []Pair
}

// Compare pairs the points of two files by label and compares each pair.
// Two single points are compared whatever their labels; in sets every label
// must be on both sides.
func Compare(old, new []roofline.Point, opts Options) (*Comparison, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	if len(old) == 0 || len(new) == 0 {
		return nil, fmt.Errorf("compare: a file holds no points")
	}
	c := &Comparison{Options: opts}
	if len(old) == 1 && len(new) == 1 {
		c.addPair(old[0], new[0], opts)
		return c, nil
	}
	oldBy, err := byLabel(old)
	if err != nil {
		return nil, fmt.Errorf("old file: %w", err)
	}
	newBy, err := byLabel(new)
	if err != nil {
		return nil, fmt.Errorf("new file: %w", err)
	}
	var onlyOld, onlyNew []string
	for l := range oldBy {
		if _, ok := newBy[l]; !ok {
			onlyOld = append(onlyOld, fmt.Sprintf("%q", l))
		}
	}
	for l := range newBy {
		if _, ok := oldBy[l]; !ok {
			onlyNew = append(onlyNew, fmt.Sprintf("%q", l))
		}
	}
	if len(onlyOld) > 0 || len(onlyNew) > 0 {
		sort.Strings(onlyOld)
		sort.Strings(onlyNew)
		var parts []string
		if len(onlyOld) > 0 {
			parts = append(parts, "only in old: "+strings.Join(onlyOld, ", "))
		}
		if len(onlyNew) > 0 {
			parts = append(parts, "only in new: "+strings.Join(onlyNew, ", "))
		}
		return nil, fmt.Errorf("%w: %s", ErrLabels, strings.Join(parts, "; "))
	}
	// Keep the old file's order.
	for _, p := range old {
		c.addPair(p, newBy[p.Label], opts)
	}
	return c, nil
}

// addPair compares two points, then their regions matched by name, each
// region a pair of its own after its point's; a region on one side only
// is flagged on the point's pair.
func (c *Comparison) addPair(old, new roofline.Point, opts Options) {
	c.Pairs = append(c.Pairs, comparePair(old, new, opts))
	pair := &c.Pairs[len(c.Pairs)-1]
	oldRs, newRs := old.RegionPoints(), new.RegionPoints()
	newBy := map[string]roofline.Point{}
	for i, r := range newRs {
		newBy[new.Regions[i].Name] = r
	}
	matched := map[string]bool{}
	var regions []Pair
	for i, r := range oldRs {
		name := old.Regions[i].Name
		n, ok := newBy[name]
		if !ok {
			pair.Flags = append(pair.Flags, fmt.Sprintf("region %q is only in old", name))
			continue
		}
		matched[name] = true
		regions = append(regions, comparePair(r, n, opts))
	}
	for _, r := range new.Regions {
		if !matched[r.Name] {
			pair.Flags = append(pair.Flags, fmt.Sprintf("region %q is only in new", r.Name))
		}
	}
	c.Pairs = append(c.Pairs, regions...)
}

func byLabel(points []roofline.Point) (map[string]roofline.Point, error) {
	m := map[string]roofline.Point{}
	for _, p := range points {
		if _, dup := m[p.Label]; dup {
			return nil, fmt.Errorf("%w: label %q appears twice", ErrLabels, p.Label)
		}
		m[p.Label] = p
	}
	return m, nil
}

func comparePair(old, new roofline.Point, opts Options) Pair {
	label := new.Label
	if old.Label != new.Label {
		label = old.Label + " → " + new.Label
	}
	pr := Pair{Label: label, Old: old, New: new}
	contextChanges(&pr)
	for _, side := range []struct {
		name string
		p    roofline.Point
	}{{"old", old}, {"new", new}} {
		for _, f := range side.p.Flags {
			pr.Flags = append(pr.Flags, fmt.Sprintf("%s %s: %s", side.name, f.Code, f.Message))
		}
	}
	for _, m := range []string{MetricTime, MetricGFlops, MetricFraction} {
		pr.Rows = append(pr.Rows, timedRow(m, old, new, opts))
	}
	// Between two points whose figure is exact any change is real, with no
	// tolerance: emulated W always, modelled Q (and so the intensity) only
	// when both runs were on one thread.
	work := old.ExactWork() && new.ExactWork()
	traffic := old.ExactTraffic() && new.ExactTraffic()
	inexact := ""
	if work && !traffic {
		inexact = inexactTraffic(old, new)
	}
	q := countedRow(MetricTraffic, "B", old.TrafficBytes, new.TrafficBytes, traffic, inexact, opts)
	if traffic {
		q.Slack = environmentSlack(old, new)
		q.Significant = q.Significant && math.Abs(q.New.Center-q.Old.Center) > q.Slack
	}
	pr.Rows = append(pr.Rows,
		countedRow(MetricWork, "FLOP", old.WorkFlops, new.WorkFlops, work, "", opts),
		q,
		countedRow(MetricIntensity, "FLOP/B", old.Intensity, new.Intensity, work && traffic, inexact, opts))
	return pr
}

// environmentSlack is how far the modelled Q of two exact emulated points
// may differ for want of the same environment alone: the stack is modelled
// relative to the program's first access, so only the lines of the
// argument and environment block the program reads can change, at most
// the larger block, in whole 64-byte lines.
func environmentSlack(old, new roofline.Point) float64 {
	b := max(old.Emulation.EnvironmentBytes, new.Emulation.EnvironmentBytes)
	return float64((b + 63) / 64 * 64)
}

// inexactTraffic says why the Q of two emulated points is not exact.
func inexactTraffic(old, new roofline.Point) string {
	for _, p := range []roofline.Point{old, new} {
		if p.Emulation != nil && p.Emulation.ImageThreads > 1 {
			return InexactThreads
		}
	}
	return InexactUnrecorded
}

// Reasons a row of two emulated points is compared with the tolerance
// (Row.Inexact).
const (
	// InexactThreads: a run had several threads, whose interleaving
	// changes the modelled Q.
	InexactThreads = "Q modelled over several threads"
	// InexactUnrecorded: a point does not say how many threads it ran
	// (written by an rprof that did not record it).
	InexactUnrecorded = "threads per process not recorded"
)

func countedRow(metric, unit string, old, new *float64, exact bool, inexact string, opts Options) Row {
	r := Row{Metric: metric, Unit: unit, Deterministic: true, Exact: exact, Inexact: inexact, Old: counted(old), New: counted(new)}
	r.Change = change(r.Old, r.New)
	tolerance := opts.Tolerance
	if exact {
		tolerance = 0
	}
	r.Significant = !math.IsNaN(r.Change) && math.Abs(r.Change) > tolerance
	return r
}

func counted(v *float64) Value {
	if v == nil {
		return Value{Lo: math.NaN(), Hi: math.NaN()}
	}
	return Value{Known: true, Center: *v, Lo: math.NaN(), Hi: math.NaN()}
}

func change(old, new Value) float64 {
	if !old.Known || !new.Known || old.Center == 0 {
		return math.NaN()
	}
	return new.Center/old.Center - 1
}

// series is a timed metric of one point: its centre, interval, and either
// its per-repetition samples or a summary recovered from the interval.
type series struct {
	v       Value
	samples []float64
	summary *stats.Summary
}

// timedSeries derives a timed metric of p. GFLOP/s and fraction samples are
// W (or the repetition's own W) over each repetition's time, so they carry
// the same noise as time.
func timedSeries(metric string, p roofline.Point) series {
	s := series{v: Value{Lo: math.NaN(), Hi: math.NaN()}}
	conf := p.CI.Confidence
	var perRep func(i int, t float64) (float64, bool)
	switch metric {
	case MetricTime:
		if p.Seconds <= 0 {
			return s
		}
		s.v = Value{Known: true, Center: p.Seconds, Lo: p.CI.Seconds.Lo, Hi: p.CI.Seconds.Hi, N: p.CI.N}
		perRep = func(_ int, t float64) (float64, bool) { return t, true }
	case MetricGFlops, MetricFraction:
		if p.GFlops == nil || p.WorkFlops == nil {
			return s
		}
		scale := 1.0
		center := *p.GFlops
		if metric == MetricFraction {
			if p.AttainableGFlops == nil || *p.AttainableGFlops <= 0 || p.FractionOfAttainable == nil {
				return s
			}
			scale = 1 / *p.AttainableGFlops
			center = *p.FractionOfAttainable
		}
		s.v = Value{Known: true, Center: center, Lo: math.NaN(), Hi: math.NaN(), N: p.CI.N}
		if p.CI.GFlops != nil {
			s.v.Lo, s.v.Hi = p.CI.GFlops.Lo*scale, p.CI.GFlops.Hi*scale
		} else if p.CI.Seconds.Lo > 0 {
			// Time's interval carried over: GFLOP/s is W/T.
			s.v.Lo = center * p.Seconds / p.CI.Seconds.Hi
			s.v.Hi = center * p.Seconds / p.CI.Seconds.Lo
		}
		perRep = func(i int, t float64) (float64, bool) {
			w := *p.WorkFlops
			if len(p.Samples.WorkFlops) == len(p.Samples.Seconds) {
				w = p.Samples.WorkFlops[i]
			}
			if t <= 0 {
				return 0, false
			}
			return roofline.Rate(w, t) * scale, true
		}
	default:
		return s
	}
	for i, t := range p.Samples.Seconds {
		x, ok := perRep(i, t)
		if !ok {
			s.samples = nil
			break
		}
		s.samples = append(s.samples, x)
	}
	if len(s.samples) < 2 {
		s.samples = nil
		if conf > 0 && p.CI.N >= 2 && !math.IsNaN(s.v.Lo) {
			if sum, err := stats.SummaryFromCI(s.v.Center, s.v.Lo, s.v.Hi, p.CI.N, conf); err == nil {
				s.summary = &sum
			}
		}
	}
	if s.v.N == 0 {
		s.v.N = len(p.Samples.Seconds)
	}
	return s
}

func timedRow(metric string, old, new roofline.Point, opts Options) Row {
	o, n := timedSeries(metric, old), timedSeries(metric, new)
	r := Row{Metric: metric, Old: o.v, New: n.v}
	switch metric {
	case MetricTime:
		r.Unit = "s"
	case MetricGFlops:
		r.Unit = "GFLOP/s"
	}
	r.Change = change(r.Old, r.New)
	if !r.Old.Known || !r.New.Known {
		r.NoTest = "unknown"
		return r
	}
	var cmp stats.Comparison
	var err error
	switch {
	case o.samples != nil && n.samples != nil && opts.Test == stats.TestMannWhitney:
		cmp, err = stats.MannWhitneyU(o.samples, n.samples)
	case o.samples != nil && n.samples != nil:
		cmp, err = stats.WelchT(o.samples, n.samples, opts.Confidence)
	default:
		osum, nsum := summaryOf(o), summaryOf(n)
		if osum == nil || nsum == nil {
			r.NoTest = fmt.Sprintf("n=%d+%d: too few repetitions to test", r.Old.N, r.New.N)
			return r
		}
		cmp, err = stats.WelchTSummary(*osum, *nsum, opts.Confidence)
		r.FromIntervals = true
	}
	if err != nil {
		r.NoTest = fmt.Sprintf("n=%d+%d: too few repetitions to test", r.Old.N, r.New.N)
		return r
	}
	r.Test = &cmp
	r.Significant = cmp.Significant(opts.Alpha)
	return r
}

func summaryOf(s series) *stats.Summary {
	if s.summary != nil {
		return s.summary
	}
	if len(s.samples) >= 2 {
		sum := stats.Summarize(s.samples)
		return &sum
	}
	return nil
}

// contextChanges records what differs between the two measurements besides
// the kernel: machine, thread scope, roofs; and the command line or the
// overhead subtracted, which may measure other work under one label.
func contextChanges(pr *Pair) {
	old, new := pr.Old, pr.New
	if oc, nc := commandText(old), commandText(new); oc != nc && len(old.Command) > 0 && len(new.Command) > 0 {
		pr.Context = append(pr.Context, fmt.Sprintf("command differs: %s → %s", oc, nc))
	}
	// A point that names no CPU (a baseline written without machine
	// information) keeps time as the basis, and a note says so: fractions
	// of attainable on a guess would change the gate's mode, or leave it
	// undecided for want of roofs.
	switch m := roofline.CompareMachines(old.Machine, new.Machine); {
	case m.OtherCPU || m.OtherCores:
		pr.OtherMachine = true
		pr.Context = append(pr.Context, fmt.Sprintf("machine differs: %s → %s", machineName(old.Machine, m), machineName(new.Machine, m)))
	case !m.CPUKnown:
		pr.Context = append(pr.Context, fmt.Sprintf("machine unknown: %s → %s; compared as the same machine", cpuName(old.Machine.CPU), cpuName(new.Machine.CPU)))
	}
	if old.Threads != new.Threads && old.Threads != 0 && new.Threads != 0 {
		pr.OtherMachine = true
		pr.Context = append(pr.Context, fmt.Sprintf("thread scope differs: %d → %d threads", old.Threads, new.Threads))
	}
	ob, nb := old.Bound, new.Bound
	if ob != nil && nb != nil && ob.Kind == nb.Kind {
		ov, unit := ob.Value()
		nv, _ := nb.Value()
		// The same roofs document gives the same ceiling to the last bit;
		// any difference means the roofs were measured again.
		if ob.Roof == nb.Roof && (ov == nv || math.Abs(nv/ov-1) < 1e-9) {
			pr.SameRoofs = true
		} else {
			pr.OtherRoofs = true
			pr.Context = append(pr.Context, fmt.Sprintf("roofs differ: %s roof %s → %s", ob.Kind, roofValue(ob, ov, nb, unit), roofValue(nb, nv, ob, unit)))
		}
	}
}

// commandText is a point's command line and the overhead command
// subtracted from it, if any.
func commandText(p roofline.Point) string {
	s := strings.Join(p.Command, " ")
	if p.Overhead != nil && len(p.Overhead.Command) > 0 {
		s += " (less " + strings.Join(p.Overhead.Command, " ") + ")"
	}
	return s
}

// roofValue writes a binding roof's value, "45.6 GB/s", naming the roof
// when the other point is bound by another roof of the same kind.
func roofValue(b *roofline.Bound, v float64, other *roofline.Bound, unit string) string {
	s := fmt.Sprintf("%.4g %s", v, unit)
	if b.Roof != other.Roof {
		s = b.Roof + " " + s
	}
	return s
}

// machineName names a side of a machine difference: its CPU, and its
// cores when those differ.
func machineName(m roofline.Machine, match roofline.MachineMatch) string {
	s := cpuName(m.CPU)
	if match.OtherCores {
		s += fmt.Sprintf(", %d cores", m.Cores)
	}
	return s
}

func cpuName(c roofline.CPU) string {
	name := c.ModelName
	if name == "" {
		name = c.Vendor
	}
	if name == "" {
		name = "unknown CPU"
	}
	if c.Microarch != "" {
		name += " (" + c.Microarch + ")"
	}
	return name
}
