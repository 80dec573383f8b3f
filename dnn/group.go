package dnn

import (
	"slices"
	"strings"
)

// Group is the executions of one primitive: the same kind, implementation,
// propagation kind, tensors (layouts and data types), attributes, algorithm
// and problem.
type Group struct {
	Kind           string
	Implementation string
	PropKind       string
	Tensors        []Tensor
	Attributes     string
	Auxiliary      string
	Problem        string
	// Millis holds the wall time of each execution, in trace order.
	Millis []float64
	// Counts holds each execution's counted call (parallel to Millis);
	// nil when no counts were joined (see Join).
	Counts []CallCount
	// Execs holds each execution's index among the trace's executions
	// (parallel to Millis), the index Join pairs calls by; nil unless the
	// trace was Ordered.
	Execs []int
	Model Analytic
	// Match is the counted group of another run of the same problem
	// (MatchCounted); nil when counts were not asked for.
	Match *CountMatch
}

// Calls is the number of executions.
func (g *Group) Calls() int { return len(g.Millis) }

// TotalMillis is the summed wall time of the executions.
func (g *Group) TotalMillis() float64 {
	s := 0.0
	for _, m := range g.Millis {
		s += m
	}
	return s
}

// DataTypes lists the distinct data types of the present tensors, "f32" or
// "u8:s8:f32".
func (g *Group) DataTypes() string {
	var dts []string
	for _, t := range g.Tensors {
		if t.Present() && !slices.Contains(dts, t.DataType) {
			dts = append(dts, t.DataType)
		}
	}
	return strings.Join(dts, ":")
}

// NewGroup is the group of r's primitive with the given execution times
// (ms), modelled.
func NewGroup(r *Record, millis []float64) *Group {
	return &Group{
		Kind: r.Kind, Implementation: r.Implementation, PropKind: r.PropKind,
		Tensors: r.Tensors, Attributes: r.Attributes, Auxiliary: r.Auxiliary,
		Problem: r.Problem, Millis: millis, Model: Model(r),
	}
}

func groupKey(r *Record) string {
	var b strings.Builder
	for _, s := range []string{r.Engine, r.Kind, r.Implementation, r.PropKind} {
		b.WriteString(s)
		b.WriteByte(',')
	}
	for _, t := range r.Tensors {
		b.WriteString(t.Arg + ":" + t.DataType + ":" + t.FormatKind + ":" + t.Tag + ":" + t.Strides + " ")
	}
	b.WriteString("," + r.Attributes + "," + r.Auxiliary + "," + r.Problem)
	return b.String()
}

// GroupExecs groups the executions among records (creations are left out),
// sorted by total time, longest first; ties keep trace order.
func GroupExecs(records []Record) []*Group {
	var gr grouper
	for i := range records {
		if records[i].Exec() {
			gr.add(&records[i], true)
		}
	}
	return gr.sorted()
}

// grouper groups executions as they arrive: each group keeps its
// executions' times and indices, not their records.
type grouper struct {
	byKey  map[string]*Group
	groups []*Group // in order of first execution
	execs  int
}

// add adds an execution to its group, with its index when ordered.
func (gr *grouper) add(r *Record, ordered bool) {
	key := groupKey(r)
	g := gr.byKey[key]
	if g == nil {
		if gr.byKey == nil {
			gr.byKey = map[string]*Group{}
		}
		// The record's strings share its line: the group keeps copies.
		g = NewGroup(detach(r), nil)
		gr.byKey[key] = g
		gr.groups = append(gr.groups, g)
	}
	g.Millis = append(g.Millis, r.Millis)
	if ordered {
		g.Execs = append(g.Execs, gr.execs)
	}
	gr.execs++
}

// sorted is the groups sorted by total time, longest first; ties keep
// the order of first execution.
func (gr *grouper) sorted() []*Group {
	groups := slices.Clone(gr.groups)
	slices.SortStableFunc(groups, func(a, b *Group) int {
		ta, tb := a.TotalMillis(), b.TotalMillis()
		switch {
		case ta > tb:
			return -1
		case ta < tb:
			return 1
		}
		return 0
	})
	return groups
}

// detach is a copy of r whose strings do not share the line it was parsed
// from.
func detach(r *Record) *Record {
	c := *r
	for _, s := range []*string{&c.Syntax, &c.Operation, &c.Engine, &c.Kind, &c.Implementation, &c.PropKind, &c.Attributes, &c.Auxiliary, &c.Problem, &c.Version} {
		*s = strings.Clone(*s)
	}
	c.Tensors = slices.Clone(c.Tensors)
	for i := range c.Tensors {
		t := &c.Tensors[i]
		for _, s := range []*string{&t.Arg, &t.DataType, &t.Properties, &t.FormatKind, &t.Tag, &t.Strides, &t.Extra} {
			*s = strings.Clone(*s)
		}
	}
	return &c
}
