package dnn

import (
	"fmt"
	"math"
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
// (the mean of the calls, with its interval), W and Q analytic. Labels that
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
	est := stats.MethodMean.Estimate(secs, o.Confidence)
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
			Confidence: o.Confidence, Method: "student-t", N: len(secs), Seconds: ci,
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
	if a.WorkFlops != nil && est.Value > 0 {
		p.GFlops = ptr(*a.WorkFlops / est.Value / 1e9)
		if ci.Lo > 0 {
			p.CI.GFlops = &roofline.Interval{Lo: *a.WorkFlops / ci.Hi / 1e9, Hi: *a.WorkFlops / ci.Lo / 1e9}
		}
	}
	if a.TrafficBytes != nil && est.Value > 0 {
		p.GBytesPerS = ptr(*a.TrafficBytes / est.Value / 1e9)
	}
	if i := a.Intensity(); !math.IsNaN(i) {
		p.Intensity = &i
	}
	if o.Roofs != nil {
		place(&p, o)
	}
	return p
}

// place puts a point under the roofs of the thread scope. With a modelled
// Q, a point above its roof is most often data that stayed in cache
// between calls: DRAM moved less than the compulsory traffic.
func place(p *roofline.Point, o PointOptions) {
	p.RoofsFile = o.RoofsFile
	if why := roofline.ForeignRoofs(o.Roofs.Machine, p.Machine); why != "" {
		p.Flags = append(p.Flags, roofline.Flag{Code: roofline.FlagForeignRoofs, Subject: roofline.SubjectPlacement, Message: why})
	}
	o.Roofs.PlaceAt(p, roofline.ThreadScope(o.Roofs.ThreadScopes(), o.Threads, 0, o.CPUs))
}
