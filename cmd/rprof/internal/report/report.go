// Package report writes roofline reports from roofs and point documents: a
// self-contained HTML page (inline SVG chart, no network fetches) and a
// Markdown summary fit for a CI job summary. It never prints; notes about
// values left out are returned to the caller.
package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/rprof/rprof/cmd/rprof/internal/chart"
	"github.com/rprof/rprof/roofline"
	"github.com/rprof/rprof/roofs"

	"github.com/rprof/rprof/internal/unit"
)

// Input is what a report shows.
type Input struct {
	// Roofs may be nil: the report then shows the points alone.
	Roofs *roofline.Roofs
	// RoofsPath names the roofs file in the report.
	RoofsPath string
	Points    []roofline.Point
	// Chart tunes the chart and selects the thread scope of the roofs.
	Chart chart.Options
}

// view is the report as strings, shared by the HTML and Markdown writers
// so that both always say the same.
type view struct {
	Title     string
	Machine   []pair
	RoofsFile string
	RoofsDate string
	Threads   int
	Compute   []computeRow
	Bandwidth []bandwidthRow
	RoofFlags []roofline.Flag
	Tuning    string
	Points    []pointRow
	Notes     []string
	Footnotes []footnote
	NoRoofs   bool
	// RoofCI and PointCI head the interval columns with their level,
	// "99% CI": the roofs', and the points' when they share one.
	RoofCI, PointCI string
}

type pair struct{ Key, Value string }

type computeRow struct {
	Name, ISA, Precision, Threads, GFlops, CI, Theoretical, OfTheoretical string
}

type bandwidthRow struct {
	Level, Kernel, Threads, GBytesPerS, CI, WorkingSet string
}

type pointRow struct {
	Label, Source, Command, Exit, Threads     string
	Work, Traffic, Seconds, Intensity, GFlops string
	Bound, Attainable, Fraction               string
	Flags                                     []flagRef
	Events                                    []eventRow
	Overhead, Samples                         string
}

type flagRef struct {
	Code  string
	N     int // footnote number
	Level roofline.Severity
}

type footnote struct {
	N           int
	Point, Code string
	Message     string
	Level       roofline.Severity
}

type eventRow struct {
	Name, PMU, Value, Raw, Running, Unit string
}

const dash = "—"

func buildView(in Input) (*view, error) {
	if in.Roofs == nil && len(in.Points) == 0 {
		return nil, fmt.Errorf("%w: no points and no roofs", chart.ErrEmpty)
	}
	threads, err := chart.ThreadScope(in.Roofs, in.Points, in.Chart.Threads)
	if err != nil {
		return nil, err
	}
	v := &view{Threads: threads, RoofsFile: in.RoofsPath, NoRoofs: in.Roofs == nil,
		RoofCI: unit.RoundPercent(roofs.Confidence) + " CI", PointCI: pointsCI(in.Points)}
	v.Title = in.Chart.Title
	if v.Title == "" {
		v.Title = "Roofline report"
	}
	var m roofline.Machine
	if in.Roofs != nil {
		m = in.Roofs.Machine
		v.addRoofs(in.Roofs)
	} else {
		m = in.Points[0].Machine
	}
	v.Machine = machinePairs(m)
	for i := range in.Points {
		v.addPoint(in.Roofs, &in.Points[i])
	}
	return v, nil
}

// pointsCI heads the points' interval columns: "95% CI" when they share
// that level, else "CI" (each point's level is in its document).
func pointsCI(points []roofline.Point) string {
	for _, p := range points {
		if p.CI.Confidence != points[0].CI.Confidence {
			return "CI"
		}
	}
	if len(points) == 0 || points[0].CI.Confidence <= 0 {
		return "CI"
	}
	return unit.RoundPercent(points[0].CI.Confidence) + " CI"
}

// scopeGroup is the points one chart shows, under the roofs of one thread
// scope.
type scopeGroup struct {
	threads int
	points  []roofline.Point
}

// chartGroups splits the points into one chart per thread scope the roofs
// were measured at, in order of first appearance. Points of a scope the
// roofs lack, or of none, join the first chart. A scope asked for in
// Chart.Threads, or no roofs, gives one chart of every point.
func chartGroups(in Input, first int) []scopeGroup {
	if in.Roofs == nil || in.Chart.Threads > 0 {
		return []scopeGroup{{threads: first, points: in.Points}}
	}
	scopes := in.Roofs.ThreadScopes()
	groups := []scopeGroup{{threads: first}}
	for _, p := range in.Points {
		t := first
		if p.Threads > 0 && slices.Contains(scopes, p.Threads) {
			t = p.Threads
		}
		i := slices.IndexFunc(groups, func(g scopeGroup) bool { return g.threads == t })
		if i < 0 {
			groups = append(groups, scopeGroup{threads: t})
			i = len(groups) - 1
		}
		groups[i].points = append(groups[i].points, p)
	}
	return groups
}

// renderCharts draws each group's chart with draw and gathers the notes of
// all of them, each once.
func renderCharts(in Input, first int, draw func(g scopeGroup, opts chart.Options) ([]string, error)) ([]string, error) {
	var notes []string
	for _, g := range chartGroups(in, first) {
		opts := in.Chart
		opts.Threads = g.threads
		n, err := draw(g, opts)
		if err != nil {
			return nil, err
		}
		for _, s := range n {
			if !slices.Contains(notes, s) {
				notes = append(notes, s)
			}
		}
	}
	return notes, nil
}

func machinePairs(m roofline.Machine) []pair {
	cpu := m.CPU
	out := []pair{
		{"CPU", orDash(cpu.ModelName)},
		{"vendor, family, model, stepping", fmt.Sprintf("%s, 0x%X, 0x%X, %d", orDash(cpu.Vendor), cpu.Family, cpu.Model, cpu.Stepping)},
		{"microarchitecture", cpu.MicroarchWords()},
		{"sockets, cores, threads", fmt.Sprintf("%d, %d, %d", m.Sockets, m.Cores, m.Threads)},
		{"kernel", orDash(m.Kernel)},
		{"host", orDash(m.Hostname)},
	}
	vm := "no"
	if m.VM {
		vm = "yes: counters and bandwidth may be shared with other guests"
	}
	return append(out, pair{"virtual machine", vm})
}

func (v *view) addRoofs(r *roofline.Roofs) {
	if !r.Created.IsZero() {
		v.RoofsDate = r.Created.UTC().Format("2006-01-02 15:04 MST")
	}
	for _, c := range r.Compute {
		row := computeRow{
			Name: c.Name, ISA: c.ISA, Precision: c.Precision, Threads: fmt.Sprint(c.Threads),
			GFlops: unit.Value(c.GFlops), CI: roofInterval(c.GFlops, c.CI, c.IntervalUnknown),
			Theoretical: dash, OfTheoretical: dash,
		}
		if l := c.Library; l != nil {
			// What ran, as the DGEMM row says its library and shape.
			row.ISA = fmt.Sprintf("%s %s, %s", l.Name, l.Version, l.Implementation)
			v.RoofFlags = append(v.RoofFlags, l.Flags...)
		}
		if c.TheoreticalGFlops > 0 {
			row.Theoretical = unit.Value(c.TheoreticalGFlops)
			if c.FrequencyGHz > 0 {
				row.Theoretical += fmt.Sprintf(" at %s GHz", unit.Value(c.FrequencyGHz))
			}
			row.OfTheoretical = unit.RoundPercent(c.GFlops / c.TheoreticalGFlops)
		}
		v.Compute = append(v.Compute, row)
	}
	if d := r.DGEMM; d != nil {
		name := "dgemm " + d.Library
		if d.Version != "" {
			name += " " + d.Version
		}
		isa := orDash(d.CoreName)
		v.Compute = append(v.Compute, computeRow{
			Name: name, ISA: isa + fmt.Sprintf(", %d×%d×%d", d.M, d.N, d.K), Precision: roofline.Double,
			Threads: fmt.Sprint(d.Threads), GFlops: unit.Value(d.GFlops), CI: roofInterval(d.GFlops, d.CI, d.IntervalUnknown),
			Theoretical: dash, OfTheoretical: dash,
		})
		v.RoofFlags = append(v.RoofFlags, d.Flags...)
	}
	for _, b := range r.Bandwidth {
		v.Bandwidth = append(v.Bandwidth, bandwidthRow{
			Level: b.Level, Kernel: b.Kernel, Threads: fmt.Sprint(b.Threads),
			GBytesPerS: unit.Value(b.GBytesPerS), CI: roofInterval(b.GBytesPerS, b.CI, b.IntervalUnknown),
			WorkingSet: unit.Bytes(b.WorkingSetBytes),
		})
	}
	v.RoofFlags = append(v.RoofFlags, r.Flags...)
	t := r.Tuning
	if t.Evaluations > 0 || t.Seconds > 0 {
		v.Tuning = fmt.Sprintf("%d configurations, %d evaluations in %s s", t.Configurations, t.Evaluations, unit.Value(t.Seconds))
		if t.Method != "" {
			v.Tuning += "; " + t.Method
		}
		if len(t.StopReasons) > 0 {
			var reasons []string
			for k, n := range t.StopReasons {
				reasons = append(reasons, fmt.Sprintf("%s %d", k, n))
			}
			slices.Sort(reasons)
			v.Tuning += "; stopped on " + strings.Join(reasons, ", ")
		}
	}
}

func (v *view) addPoint(r *roofline.Roofs, p *roofline.Point) {
	row := pointRow{
		Label: orDash(p.Label), Source: orDash(p.Source), Command: strings.Join(p.Command, " "),
		Work: scaled(p.WorkFlops, 1e9), Traffic: scaled(p.TrafficBytes, 1e9),
		Intensity: optional(p.Intensity), GFlops: optional(p.GFlops),
		Bound: dash, Attainable: optional(p.AttainableGFlops), Fraction: percent(p.FractionOfAttainable),
	}
	row.Seconds = unit.Value(p.Seconds)
	if ci := p.CI.Seconds; ci.Hi > 0 {
		row.Seconds += " " + bracket(ci)
	}
	if p.GFlops != nil && p.CI.GFlops != nil {
		row.GFlops += " " + bracket(*p.CI.GFlops)
	}
	// Placement under the roofs of this report, which may differ from the
	// roofs the point was placed under when it was measured. Without
	// roofs, the placement recorded in the point is shown as such; with
	// roofs that cannot place it, none (the chart notes why).
	if r == nil {
		if p.Bound != nil {
			row.Bound = p.Bound.String() + " (as recorded)"
		}
	} else {
		row.Bound, row.Attainable, row.Fraction = dash, dash, dash
	}
	v.placeRow(&row, r, p)
	for _, f := range p.Flags {
		// The machine table says when it is a VM; repeating that on
		// every point would bury the flags that single one out.
		if f.Code != roofline.FlagVM {
			v.addFootnote(&row, f)
		}
	}
	row.Events = eventRows(p.Events)
	row.Overhead = overheadText(p.Overhead)
	row.Samples = samplesText(p)
	row.Exit = fmt.Sprint(p.Exit.Code)
	if p.Exit.Signal != "" {
		row.Exit += " (" + p.Exit.Signal + ")"
	}
	v.Points = append(v.Points, row)
}

// placeRow places the point under the report's roofs of its own thread
// scope when they were measured (the chart can show only one), and
// footnotes a point above its roof.
func (v *view) placeRow(row *pointRow, r *roofline.Roofs, p *roofline.Point) {
	threads := v.Threads
	if r != nil && p.Threads > 0 && slices.Contains(r.ThreadScopes(), p.Threads) {
		threads = p.Threads
	}
	row.Threads = fmt.Sprint(threads)
	if p.Threads > 0 && p.Threads != threads {
		row.Threads = fmt.Sprintf("%d (roofs: %d)", p.Threads, threads)
	}
	if r == nil || p.Intensity == nil || p.GFlops == nil || !(*p.Intensity > 0) {
		return
	}
	pl, err := r.PlacePoint(p, threads)
	if err != nil {
		return
	}
	row.Bound = pl.Bound.String()
	row.Attainable = unit.Value(pl.AttainableGFlops)
	row.Fraction = unit.RoundPercent(pl.Fraction)
	if pl.AboveRoof(p) && !hasFlag(p.Flags, roofline.FlagAboveRoof) {
		v.addFootnote(row, pl.AboveRoofFlag())
	}
}

// eventRows lists every counter's reading.
func eventRows(events []roofline.EventCount) []eventRow {
	var out []eventRow
	for _, e := range events {
		running := dash
		if e.Enabled > 0 {
			running = unit.RoundPercent(float64(e.Running) / float64(e.Enabled))
		}
		out = append(out, eventRow{
			Name: e.Name, PMU: orDash(e.PMU), Value: unit.Whole(e.Value), Raw: fmt.Sprint(e.Raw),
			Running: running, Unit: orDash(e.Unit),
		})
	}
	return out
}

// overheadText says what was subtracted, "" when nothing was.
func overheadText(o *roofline.Overhead) string {
	if o == nil {
		return ""
	}
	s := fmt.Sprintf("%s: %s s", orDash(strings.Join(o.Command, " ")), unit.Value(o.Seconds))
	if o.WorkFlops != nil {
		s += fmt.Sprintf(", %s FLOP", unit.Value(*o.WorkFlops))
	}
	if o.TrafficBytes != nil {
		s += fmt.Sprintf(", %s bytes", unit.Value(*o.TrafficBytes))
	}
	if o.IdleBytesPerS != nil {
		s += fmt.Sprintf(", idle DRAM %s B/s", unit.Value(*o.IdleBytesPerS))
	}
	return s
}

// samplesText lists the per-repetition times and how their interval was
// computed.
func samplesText(p *roofline.Point) string {
	if len(p.Samples.Seconds) == 0 {
		return ""
	}
	s := make([]string, len(p.Samples.Seconds))
	for i, x := range p.Samples.Seconds {
		s[i] = unit.Value(x)
	}
	out := fmt.Sprintf("n=%d, %s s", len(s), strings.Join(s, ", "))
	switch {
	case len(s) == 1 || p.CI.Method == "none":
		out += "; no interval from a single sample"
	case p.CI.Method != "":
		out += fmt.Sprintf("; %s CI by %s", unit.RoundPercent(p.CI.Confidence), p.CI.Method)
	}
	return out
}

func (v *view) addFootnote(row *pointRow, f roofline.Flag) {
	n := len(v.Footnotes) + 1
	v.Footnotes = append(v.Footnotes, footnote{N: n, Point: row.Label, Code: f.Code, Message: f.Message, Level: f.Severity()})
	row.Flags = append(row.Flags, flagRef{Code: f.Code, N: n, Level: f.Severity()})
}

func hasFlag(flags []roofline.Flag, code string) bool {
	return slices.ContainsFunc(flags, func(f roofline.Flag) bool { return f.Code == code })
}

// interval writes a CI as "[lo, hi] ±p%".
func interval(v float64, ci roofline.Interval) string {
	pct, ok := unit.HalfWidthPercent(v, ci.Lo, ci.Hi)
	if !ok {
		return dash
	}
	return bracket(ci) + " ±" + pct
}

// roofInterval is a roof's interval, or, where its samples were too few
// for one (unknown), their range and that its uncertainty is unknown:
// never "±0.0%".
func roofInterval(v float64, ci roofline.Interval, unknown bool) string {
	if unknown {
		return roofline.UnknownUncertainty(ci)
	}
	return interval(v, ci)
}

func bracket(ci roofline.Interval) string {
	return "[" + unit.Value(ci.Lo) + ", " + unit.Value(ci.Hi) + "]"
}

func optional(v *float64) string {
	if v == nil {
		return dash
	}
	return unit.Value(*v)
}

func scaled(v *float64, scale float64) string {
	if v == nil {
		return dash
	}
	return unit.Value(*v / scale)
}

func percent(v *float64) string {
	if v == nil {
		return dash
	}
	return unit.RoundPercent(*v)
}

func orDash(s string) string {
	if s == "" {
		return dash
	}
	return s
}
