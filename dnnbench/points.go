package dnnbench

import (
	"github.com/rprof/rprof/dnn"
	"github.com/rprof/rprof/internal/stats"
	"github.com/rprof/rprof/roofline"
)

// Method summarises the samples of a problem: the stopping rule's
// interval and every figure of its point.
const Method = stats.DefaultMethod

// Points makes each result a labelled point through dnn's groups, so that
// a replayed shape and a traced one carry the same label ("cold" added
// for cold caches); o says how, its Method and CPUs (the results'
// threads) set here.
func Points(results []Result, o dnn.PointOptions) []roofline.Point {
	var groups []*dnn.Group
	for i := range results {
		r := &results[i]
		ms := make([]float64, len(r.Seconds.Samples))
		for j, s := range r.Seconds.Samples {
			ms[j] = s * 1e3
		}
		groups = append(groups, dnn.NewGroup(&r.Record, ms))
	}
	o.Method = Method
	if len(results) > 0 {
		o.CPUs = results[0].Threads
	}
	pts := dnn.Points(groups, o)
	for i := range pts {
		if results[i].Cold {
			pts[i].Label += " cold"
		}
	}
	return pts
}
