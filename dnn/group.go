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
	// (parallel to Millis), the index Join pairs calls by.
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
func GroupExecs(records []Record) []*Group { return GroupCounted(records, nil) }

// GroupCounted is GroupExecs with each execution's counted call, as Join
// returns them (parallel to the exec records; nil for none).
func GroupCounted(records []Record, counts []CallCount) []*Group {
	byKey := map[string]*Group{}
	var groups []*Group
	k := 0 // the exec's index among the execs
	for i := range records {
		r := &records[i]
		if !r.Exec() {
			continue
		}
		key := groupKey(r)
		g := byKey[key]
		if g == nil {
			g = NewGroup(r, nil)
			byKey[key] = g
			groups = append(groups, g)
		}
		g.Millis = append(g.Millis, r.Millis)
		g.Execs = append(g.Execs, k)
		if k < len(counts) {
			g.Counts = append(g.Counts, counts[k])
		}
		k++
	}
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
