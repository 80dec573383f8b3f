package gate

import (
	"fmt"
	"math"
	"strings"

	"github.com/rprof/rprof/internal/stats"
	"github.com/rprof/rprof/roofline"

	"github.com/rprof/rprof/internal/unit"
)

// Limits are the gate's thresholds, as relative changes (0.05 is 5%). A
// limit of +Inf turns its check off; MinFraction 0 does too. There is no
// zero-means-default here: a MaxSlowdown of 0 fails any significant
// slowdown.
type Limits struct {
	// MaxSlowdown is the largest slowdown accepted: of time, or of the
	// fraction of attainable when machine or roofs differ.
	MaxSlowdown float64
	// MaxWorkGrowth and MaxTrafficGrowth are the largest growths of W and
	// Q accepted.
	MaxWorkGrowth    float64
	MaxTrafficGrowth float64
	// MinFraction is the lowest fraction of attainable performance
	// accepted for the new run.
	MinFraction float64
}

// DefaultLimits: W is counted almost exactly, so 1% of growth is a change
// of the code; DRAM traffic moves with prefetching and background traffic,
// hence the wider limit.
var DefaultLimits = Limits{MaxSlowdown: 0.05, MaxWorkGrowth: 0.01, MaxTrafficGrowth: 0.10}

// Outcome is the result of one check or of the whole gate, in increasing
// order of severity.
type Outcome int

const (
	// Skipped: the check could not be made (a figure is unknown) or is off.
	Skipped Outcome = iota
	// Pass: no regression beyond the limit.
	Pass
	// Undecided: the data cannot tell (too few repetitions, the command
	// failed, machines differ without roofs to compare against).
	Undecided
	// Regression: a significant change beyond the limit.
	Regression
)

func (o Outcome) String() string {
	switch o {
	case Skipped:
		return "not checked"
	case Pass:
		return "pass"
	case Undecided:
		return "undecided"
	case Regression:
		return "regression"
	}
	return fmt.Sprintf("outcome(%d)", int(o))
}

// Check names.
const (
	CheckRun      = "run"
	CheckTime     = "time"
	CheckFraction = "fraction of attainable"
	// CheckTimeAndFraction judges a run on the baseline's machine under
	// roofs measured again: see bothCheck.
	CheckTimeAndFraction = "time and fraction of attainable"
	CheckWork            = "work W"
	CheckTraffic         = "traffic Q"
	CheckMinFraction     = "minimum fraction"
)

// Check is one rule applied to the new run.
type Check struct {
	Name    string
	Outcome Outcome
	// Detail is one line: the figures, the test and the limit.
	Detail string
}

// Verdict is the gate's decision for one labelled point.
type Verdict struct {
	Label   string
	Outcome Outcome
	// Reason is one line saying why.
	Reason string
	// Basis is what speed was judged on: CheckTime; CheckFraction when the
	// machine differs from the baseline's; CheckTimeAndFraction when only
	// the roofs do.
	Basis  string
	Checks []Check
	// Notes are context (what differs from the baseline, the new run's
	// validity flags) shown under the checks.
	Notes   []string
	Pair    Pair
	Limits  Limits
	Options Options
}

// Decide compares the new point with its baseline and applies the limits.
func Decide(baseline, current roofline.Point, limits Limits, opts Options) (*Verdict, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	if limits.MaxSlowdown < 0 || limits.MaxWorkGrowth < 0 || limits.MaxTrafficGrowth < 0 || limits.MinFraction < 0 {
		return nil, fmt.Errorf("gate limits must not be negative")
	}
	pair := comparePair(baseline, current, opts)
	v := &Verdict{Label: current.Label, Pair: pair, Limits: limits, Options: opts, Basis: CheckTime}
	v.Notes = append(v.Notes, pair.Context...)
	for _, f := range current.Flags {
		v.Notes = append(v.Notes, fmt.Sprintf("new run flagged %s: %s", f.Code, f.Message))
	}

	if c, failed := runCheck(current); failed {
		v.Checks = append(v.Checks, c)
		v.Pair.Rows = nil // figures of a failed run are not the kernel's
		v.finish()
		return v, nil
	}
	switch {
	case pair.OtherMachine:
		v.Basis = CheckFraction
		v.Checks = append(v.Checks, speedCheck(&pair, CheckFraction, limits.MaxSlowdown, opts))
	case pair.OtherRoofs:
		v.Basis = CheckTimeAndFraction
		v.Checks = append(v.Checks, bothCheck(&pair, limits.MaxSlowdown, opts))
	default:
		v.Checks = append(v.Checks, speedCheck(&pair, CheckTime, limits.MaxSlowdown, opts))
	}
	if n := noiseNote(&pair, v.Basis, limits.MaxSlowdown); n != "" {
		v.Notes = append(v.Notes, n)
	}
	v.Checks = append(v.Checks,
		growthCheck(CheckWork, pair.Row(MetricWork), limits.MaxWorkGrowth, baseline.Source, current.Source, ""),
	)
	trafficSkip := ""
	// Counted traffic depends on the machine's caches; analytic traffic is
	// the algorithm's and compares anywhere.
	if pair.OtherMachine && (baseline.Source != roofline.SourceAnalytic || current.Source != roofline.SourceAnalytic) {
		trafficSkip = "not checked: the machine differs, and counted DRAM traffic depends on the caches and prefetchers"
	}
	v.Checks = append(v.Checks,
		growthCheck(CheckTraffic, pair.Row(MetricTraffic), limits.MaxTrafficGrowth, baseline.Source, current.Source, trafficSkip),
	)
	if limits.MinFraction > 0 {
		v.Checks = append(v.Checks, minFractionCheck(pair.Row(MetricFraction), limits.MinFraction))
	}
	v.finish()
	return v, nil
}

func runCheck(p roofline.Point) (Check, bool) {
	switch {
	case p.Exit.Signal != "":
		return Check{Name: CheckRun, Outcome: Undecided, Detail: fmt.Sprintf("could not measure: the command was killed by %s", p.Exit.Signal)}, true
	case p.Exit.Code != 0:
		return Check{Name: CheckRun, Outcome: Undecided, Detail: fmt.Sprintf("could not measure: the command exited with status %d", p.Exit.Code)}, true
	}
	return Check{}, false
}

// speedCheck judges time, or the fraction of attainable when the context
// changed: a regression is a significant worsening beyond the limit.
func speedCheck(pair *Pair, basis string, limit float64, opts Options) Check {
	c := Check{Name: basis}
	if math.IsInf(limit, 1) {
		// Time on a shared runner is noise: the gate is on W and Q.
		c.Outcome, c.Detail = Skipped, "not checked: turned off"
		return c
	}
	metric, sign := MetricTime, 1.0
	if basis == CheckFraction {
		metric, sign = MetricFraction, -1.0
		if pair.SameRoofs {
			c.Outcome = Undecided
			c.Detail = "could not decide: the machine differs from the baseline's but both points were placed under the same roofs; measure this machine's roofs (rprof roofs) and run under them, so that fractions of attainable compare"
			return c
		}
	}
	r := pair.Row(metric)
	switch {
	case r == nil || !r.Old.Known || !r.New.Known:
		c.Outcome = Undecided
		if basis == CheckFraction {
			c.Detail = "could not decide: the machine differs from the baseline's and the fraction of attainable is unknown (it needs W and roofs on both points)"
		} else {
			c.Detail = "could not decide: time is unknown in a point"
		}
		return c
	case r.Test == nil:
		c.Outcome = Undecided
		c.Detail = fmt.Sprintf("could not decide: %s, %s; repeat more (the baseline too)", basis, r.NoTest)
		return c
	case r.Test.Base == 0:
		c.Outcome = Undecided
		c.Detail = fmt.Sprintf("could not decide: the baseline's %s is 0", basis)
		return c
	}
	t := r.Test
	worse := sign * t.Delta / t.Base
	what := "slower"
	if basis == CheckFraction {
		what = "lower"
	}
	test := testLine(t, opts)
	lim := fmt.Sprintf("limit %s", unit.Relative(limit))
	switch {
	case r.Significant && worse > limit:
		c.Outcome = Regression
		c.Detail = fmt.Sprintf("%s %s %s%s (%s), %s", basis, unit.Relative(worse), what, relInterval(t, sign, opts), test, lim)
	case !r.Significant:
		c.Outcome = Pass
		c.Detail = fmt.Sprintf("%s %s, not significant (%s), %s", basis, unit.Change(sign*t.Delta/t.Base), test, lim)
		if res := resolution(t); !math.IsNaN(res) {
			c.Detail += fmt.Sprintf("; resolution ±%s", unit.Relative(res))
		}
	case worse > 0:
		c.Outcome = Pass
		c.Detail = fmt.Sprintf("%s %s %s%s (%s), within %s", basis, unit.Relative(worse), what, relInterval(t, sign, opts), test, lim)
	default:
		c.Outcome = Pass
		better := "faster"
		if basis == CheckFraction {
			better = "higher"
		}
		c.Detail = fmt.Sprintf("%s %s %s (%s)", basis, unit.Relative(-worse), better, test)
	}
	return c
}

// bothCheck judges a run on the baseline's machine whose roofs were
// measured again. Time is the kernel's own figure there, and the fraction
// of attainable tells a slower kernel from a slower machine: a regression
// must show in both. Time alone worse means the roof moved down with it;
// fraction alone worse means the roof moved up (or its measurement did).
func bothCheck(pair *Pair, limit float64, opts Options) Check {
	t := speedCheck(pair, CheckTime, limit, opts)
	f := speedCheck(pair, CheckFraction, limit, opts)
	c := Check{Name: CheckTimeAndFraction, Outcome: max(t.Outcome, f.Outcome)}
	switch {
	case t.Outcome == Regression && f.Outcome == Regression:
		c.Detail = t.Detail + "; " + f.Detail
	case t.Outcome == Undecided || f.Outcome == Undecided:
		c.Detail = t.Detail + "; " + f.Detail
	case t.Outcome == Regression || f.Outcome == Regression:
		c.Outcome = Pass
		c.Detail = t.Detail + "; but " + f.Detail + ": the roofs differ, so this is not counted as a kernel regression"
	default:
		c.Detail = t.Detail + "; " + f.Detail
	}
	return c
}

// resolution is the half-width of the interval of the relative change: the
// smallest change this comparison could tell from noise (NaN when the test
// gives no interval).
func resolution(t *stats.Comparison) float64 {
	if math.IsNaN(t.Lo) || t.Base == 0 {
		return math.NaN()
	}
	return (t.Hi - t.Lo) / 2 / math.Abs(t.Base)
}

// noiseNote warns, when no significant change was seen, that the noise is
// wider than the limit: slowdowns of the limit's size then pass unseen.
func noiseNote(pair *Pair, basis string, limit float64) string {
	metric := MetricTime
	if basis == CheckFraction {
		metric = MetricFraction
	}
	r := pair.Row(metric)
	if r == nil || r.Test == nil || r.Significant {
		return ""
	}
	res := resolution(r.Test)
	if math.IsNaN(res) || res <= limit {
		return ""
	}
	return fmt.Sprintf("the noise is wider than the limit: changes of %s below ±%s cannot be told from noise here, against a limit of %s; gate on a quieter machine, or repeat more (--max-repeat, --max-time)", metric, unit.Relative(res), unit.Relative(limit))
}

// relInterval is the worsening's interval, when the test gives one.
func relInterval(t *stats.Comparison, sign float64, opts Options) string {
	if math.IsNaN(t.Lo) || t.Base == 0 {
		return ""
	}
	lo, hi := sign*t.Lo/t.Base, sign*t.Hi/t.Base
	if lo > hi {
		lo, hi = hi, lo
	}
	f := unit.Relative
	if lo < 0 {
		f = unit.Change
	}
	return fmt.Sprintf(", %g%% CI %s", opts.Confidence*100, span(lo, hi, f))
}

func testLine(t *stats.Comparison, opts Options) string {
	name := "Welch t"
	if t.Test == stats.TestMannWhitney {
		name = "Mann-Whitney U"
	}
	return fmt.Sprintf("%s %s n=%d+%d", name, unit.PValue(t.P), t.N1, t.N2)
}

func growthCheck(name string, r *Row, limit float64, oldSource, newSource, skip string) Check {
	c := Check{Name: name, Outcome: Skipped}
	metric := MetricWork
	hint := "no floating-point counters here; pass --work with the analytic count"
	if name == CheckTraffic {
		metric = MetricTraffic
		hint = "no memory-controller counters here; pass --traffic with the analytic bytes"
	}
	switch {
	case skip != "":
		c.Detail = skip
		return c
	case math.IsInf(limit, 1):
		c.Detail = "not checked: turned off"
		return c
	case r == nil || (!r.Old.Known && !r.New.Known):
		c.Detail = fmt.Sprintf("not checked: %s is unknown in both points (%s)", metric, hint)
		return c
	case !r.Old.Known:
		c.Detail = fmt.Sprintf("not checked: %s is unknown in the baseline (regenerate it with --update-baseline)", metric)
		return c
	case !r.New.Known:
		c.Detail = fmt.Sprintf("not checked: %s is unknown in the new run (%s)", metric, hint)
		return c
	case math.IsNaN(r.Change):
		c.Detail = fmt.Sprintf("not checked: %s is 0 in the baseline", metric)
		return c
	}
	how := ""
	if oldSource == roofline.SourceAnalytic || newSource == roofline.SourceAnalytic {
		how = ", analytic"
	}
	inexact := ""
	if r.Inexact != "" {
		inexact = "; not exact between emulated runs: " + r.Inexact
	}
	if r.Change > limit && math.Abs(r.New.Center-r.Old.Center) <= r.Slack {
		c.Outcome = Pass
		c.Detail = fmt.Sprintf("%s %s (%s → %s), within the %s B an emulated Q may move between environments", metric, unit.Change(r.Change), number(r.Old.Center, r.Unit), number(r.New.Center, r.Unit), unit.Count(r.Slack))
		return c
	}
	if r.Change > limit {
		c.Outcome = Regression
		c.Detail = fmt.Sprintf("%s grew %s (%s → %s%s), limit %s%s", metric, unit.Relative(r.Change), number(r.Old.Center, r.Unit), number(r.New.Center, r.Unit), how, unit.Relative(limit), inexact)
		return c
	}
	c.Outcome = Pass
	c.Detail = fmt.Sprintf("%s %s (%s → %s%s), limit %s%s", metric, unit.Change(r.Change), number(r.Old.Center, r.Unit), number(r.New.Center, r.Unit), how, unit.Relative(limit), inexact)
	if r.Significant && r.Change < 0 {
		// Less work is not a regression, but a kernel that stopped doing its
		// work is also faster: say that the runs differ.
		c.Detail += "; the run does less than the baseline, so its time is not like for like"
	}
	return c
}

// minFractionCheck fails when the new run is confidently below the minimum:
// the top of its interval is below it.
func minFractionCheck(r *Row, min float64) Check {
	c := Check{Name: CheckMinFraction, Outcome: Skipped}
	if r == nil || !r.New.Known {
		c.Detail = "not checked: the fraction of attainable is unknown (it needs W and a roofs document)"
		return c
	}
	f := r.New
	interval := ""
	hi := f.Center
	switch {
	case f.N == 1:
		interval = " (n=1, no interval)"
	case !math.IsNaN(f.Hi):
		hi = f.Hi
		interval = ", CI " + span(f.Lo, f.Hi, unit.Percent)
	}
	switch {
	case hi < min:
		c.Outcome = Regression
		c.Detail = fmt.Sprintf("fraction of attainable %s%s, below minimum %s", unit.Percent(f.Center), interval, unit.Percent(min))
	case f.Center < min:
		c.Outcome = Pass
		c.Detail = fmt.Sprintf("fraction of attainable %s%s, not significantly below minimum %s", unit.Percent(f.Center), interval, unit.Percent(min))
	default:
		c.Outcome = Pass
		c.Detail = fmt.Sprintf("fraction of attainable %s%s, minimum %s", unit.Percent(f.Center), interval, unit.Percent(min))
	}
	return c
}

// finish sets the overall outcome (the most severe check's) and the one-line
// reason.
func (v *Verdict) finish() {
	v.Outcome = Skipped
	for _, c := range v.Checks {
		if c.Outcome > v.Outcome {
			v.Outcome = c.Outcome
		}
	}
	var worst, skipped []string
	for _, c := range v.Checks {
		if c.Outcome == v.Outcome {
			worst = append(worst, c.Detail)
		}
		if c.Outcome == Skipped {
			skipped = append(skipped, c.Name)
		}
	}
	switch v.Outcome {
	case Regression:
		v.Reason = "regression: " + strings.Join(worst, "; ")
	case Undecided:
		v.Reason = strings.Join(worst, "; ")
	default:
		v.Reason = "pass: " + strings.Join(worst, "; ")
		if len(skipped) > 0 && v.Outcome == Pass {
			v.Reason += "; not checked: " + strings.Join(skipped, ", ")
		}
	}
	switch {
	case v.Outcome == Undecided:
	case v.Basis == CheckFraction:
		v.Notes = append(v.Notes, "compared fractions of attainable performance instead of time, because the machine differs")
	case v.Basis == CheckTimeAndFraction:
		v.Notes = append(v.Notes, "compared time and fraction of attainable performance, because the roofs differ: a regression must show in both")
	}
}
