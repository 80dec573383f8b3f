package dnn

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/rprof/rprof/internal/stats"
	"github.com/rprof/rprof/roofline"
)

// PointOptions say how groups become roofline points.
type PointOptions struct {
	Command    []string
	Created    time.Time
	Confidence float64
	// Method summarises a group's times into its time and interval, the
	// one statistic of every figure of its point (default: the mean).
	Method stats.Method
	// Roofs, when not nil, places each point under the roofs of Threads
	// (0: the largest measured scope not above CPUs).
	Roofs     *roofline.Roofs
	RoofsFile string
	Threads   int
	CPUs      int
	// Trace, when set, adds its skipped-lines flag to every point.
	Trace *Trace
	// Machine is where the points were measured.
	Machine roofline.Machine
	// For groups with counted calls (Group.Match): CountSource is the
	// points' source (roofline.SourceEmulated), CountNotes the flags of
	// how they were counted, and Emulation how an emulator counted them
	// (copied into each point, with its calls and counted implementation).
	CountSource string
	CountNotes  []roofline.Flag
	Emulation   *roofline.Emulation
}

// Label names a group in a point set: kind, algorithm, implementation,
// propagation, source layout, data types and problem.
func (g *Group) Label() string {
	parts := []string{g.Kind}
	if alg := auxValue(g.Auxiliary, "alg"); alg != "" {
		parts = append(parts, alg)
	}
	parts = append(parts, g.Implementation)
	if g.PropKind != "undef" {
		parts = append(parts, g.PropKind)
	}
	for _, t := range g.Tensors {
		if t.Present() {
			parts = append(parts, t.Tag)
			break
		}
	}
	parts = append(parts, g.DataTypes(), g.Problem)
	if ops := postOps(g.Attributes); len(ops) > 0 {
		parts = append(parts, "post-ops:"+strings.Join(ops, "+"))
	}
	return strings.Join(parts, " ")
}

// Points turns groups into labelled points: time from the verbose trace
// (o.Method's summary of the calls, with its interval), W and Q analytic. Labels that
// two groups share get a "#2" suffix so that every point can be paired.
func Points(groups []*Group, o PointOptions) []roofline.Point {
	seen := map[string]int{}
	var out []roofline.Point
	for _, g := range groups {
		p := g.point(o)
		if t := o.Trace; t != nil && t.Skipped > 0 {
			p.Flags = append(p.Flags, roofline.Flag{Code: roofline.FlagSkipped,
				Message: fmt.Sprintf("%d verbose lines did not parse and were skipped (first: %s)", t.Skipped, t.Examples[0])})
		}
		seen[p.Label]++
		if n := seen[p.Label]; n > 1 {
			p.Label = fmt.Sprintf("%s #%d", p.Label, n)
		}
		out = append(out, p)
	}
	return out
}

func (g *Group) point(o PointOptions) roofline.Point {
	secs := make([]float64, len(g.Millis))
	for i, ms := range g.Millis {
		secs[i] = ms / 1e3
	}
	method := o.Method
	if method == "" {
		method = stats.MethodMean
	}
	est := method.Estimate(secs, o.Confidence)
	ci := roofline.Interval{Lo: est.Value, Hi: est.Value}
	if est.Bounded() {
		ci = roofline.Interval{Lo: math.Max(est.Lo, 0), Hi: est.Hi}
	}
	p := roofline.Point{
		Schema:  roofline.PointSchema,
		Label:   g.Label(),
		Command: o.Command,
		Created: o.Created,
		Source:  roofline.SourceAnalytic,
		Seconds: est.Value,
		CI: roofline.Uncertainty{
			Confidence: o.Confidence, Method: method.IntervalName(len(secs)), N: len(secs), Seconds: ci,
		},
		Samples: roofline.Samples{Seconds: secs},
		Machine: o.Machine,
		Flags: append([]roofline.Flag{{Code: roofline.FlagAnalytic,
			Message: "W and Q are modelled from the oneDNN problem descriptor (Q: every tensor once from DRAM); the time is oneDNN's own, per call, from its verbose trace"}},
			g.Model.Flags...),
	}
	a := g.Model
	p.WorkFlops, p.TrafficBytes = a.WorkFlops, a.TrafficBytes
	if a.WorkFlops != nil && a.Precision != "" {
		p.WorkByPrecision = map[string]float64{a.Precision: *a.WorkFlops}
	}
	if m := g.Match; m != nil {
		p.Flags = append(p.Flags, m.Flags...)
		if m.Counted.WorkFlops != nil {
			useCounted(&p, m, o)
		}
	}
	w, q := p.WorkFlops, p.TrafficBytes
	if w != nil && est.Value > 0 {
		p.GFlops = ptr(roofline.Rate(*w, est.Value))
		if ci.Lo > 0 {
			p.CI.GFlops = &roofline.Interval{Lo: roofline.Rate(*w, ci.Hi), Hi: roofline.Rate(*w, ci.Lo)}
		}
	}
	if q != nil && est.Value > 0 {
		p.GBytesPerS = ptr(roofline.Rate(*q, est.Value))
	}
	if i := intensity(w, q); !math.IsNaN(i) {
		p.Intensity = &i
	}
	if o.Roofs != nil {
		place(&p, o)
	}
	return p
}

// useCounted makes W (and Q, when counted) of p the median counts of one
// call of its matched group, keeping the analytic figures beside them.
func useCounted(p *roofline.Point, m *CountMatch, o PointOptions) {
	c := m.Counted
	p.Analytic = &roofline.AnalyticFigures{WorkFlops: p.WorkFlops, TrafficBytes: p.TrafficBytes}
	p.Source = o.CountSource
	p.WorkFlops, p.WorkByPrecision = c.WorkFlops, c.WorkByPrecision
	p.Flags = slices.DeleteFunc(p.Flags, func(f roofline.Flag) bool { return f.Code == roofline.FlagAnalytic })
	p.Flags = append(slices.Clone(o.CountNotes), p.Flags...)
	if r, ok := Ratio(c.WorkFlops, p.Analytic.WorkFlops); ok {
		p.Analytic.WorkRatio = &r
	}
	if r, ok := Ratio(c.TrafficBytes, p.Analytic.TrafficBytes); ok {
		p.Analytic.TrafficRatio = &r
	}
	if c.TrafficBytes != nil {
		p.TrafficBytes = c.TrafficBytes
	} else {
		p.Flags = append(p.Flags, roofline.Flag{Code: roofline.FlagAnalytic, Subject: roofline.SubjectTraffic,
			Message: "Q is analytic: every tensor once from DRAM; the counts have no traffic"})
	}
	if o.Emulation != nil {
		em := *o.Emulation
		em.Calls = c.Calls
		if m.Group.Implementation != "" && hasCode(m.Flags, roofline.FlagCountedOther) {
			em.CountedAs = m.Group.Describe()
		}
		p.Emulation = &em
	}
}

func hasCode(fs []roofline.Flag, code string) bool {
	return slices.ContainsFunc(fs, func(f roofline.Flag) bool { return f.Code == code })
}

// place puts a point under the roofs of the thread scope. With a modelled
// Q, a point above its roof is most often data that stayed in cache
// between calls: DRAM moved less than the compulsory traffic.
func place(p *roofline.Point, o PointOptions) {
	p.RoofsFile = o.RoofsFile
	roofline.MarkForeign(p, o.Roofs)
	scope := roofline.ThreadScope(roofline.ScopeInputs{Scopes: o.Roofs.ThreadScopes(), Want: o.Threads, CPUs: o.CPUs})
	o.Roofs.PlaceAt(p, scope.Threads)
	p.ThreadsRule = scope.Rule
	if p.WorkFlops != nil && *p.WorkFlops == 0 {
		placeTraffic(p, o.Roofs, scope.Threads)
	}
}

// placeTraffic places a point without work (a reorder: its intensity is 0,
// so it has no place on the roofline's log axes) under the DRAM roof
// alone: the fraction reached is its GB/s over the roof's, and it is
// above the roof when its GB/s interval is above the roof's.
func placeTraffic(p *roofline.Point, roofs *roofline.Roofs, threads int) {
	mem, ok := roofs.BandwidthAt(roofline.LevelDRAM, threads)
	if p.GBytesPerS == nil || !ok || !(mem.GBytesPerS > 0) {
		return
	}
	f := *p.GBytesPerS / mem.GBytesPerS
	p.Bound = &roofline.Bound{Kind: roofline.BoundMemory, Roof: mem.Level, GBytesPerS: mem.GBytesPerS}
	p.FractionOfAttainable = &f
	lo := *p.GBytesPerS
	if ci := p.CI.Seconds; ci.Hi > 0 {
		lo = roofline.Rate(*p.TrafficBytes, ci.Hi)
	}
	if lo > max(mem.CI.Hi, mem.GBytesPerS) {
		p.Flags = append(p.Flags, roofline.Flag{Code: roofline.FlagAboveRoof, Subject: roofline.SubjectPlacement, Message: fmt.Sprintf(
			"the point is %.0f%% above its roof (%s, %.4g GB/s), beyond both confidence intervals: a measurement error (miscounted traffic, or roofs of another machine or thread count), not a result",
			(f-1)*100, mem.Level, mem.GBytesPerS)})
	}
}
