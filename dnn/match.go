package dnn

import (
	"fmt"
	"strings"

	"github.com/rprof/rprof/roofline"
)

// CountMatch is what counted the calls of a timed group in another run of
// the program (an emulated run executes other implementations than the
// native one), or why nothing did.
type CountMatch struct {
	// Group is the counted run's group of the same problem; nil when none
	// matches (Flags say why).
	Group *Group
	// Counted summarises Group's counted calls.
	Counted Counted
	// Flags are the match's: counted-other-implementation, not-counted,
	// and CountFlags' gaps of the counted figures.
	Flags []roofline.Flag
}

// problemKey is what defines a primitive's problem, whatever the
// implementation chose: kind, propagation, attributes, algorithm, problem
// descriptor, data types, and the layouts a user sets (the outer
// dimension order of every tensor but the weights: an implementation picks
// the weights' layout and the inner block sizes of format "any").
func problemKey(g *Group) string {
	var b strings.Builder
	for _, s := range []string{g.Kind, g.PropKind, g.Attributes, g.Auxiliary, g.Problem} {
		b.WriteString(s)
		b.WriteByte(',')
	}
	for _, t := range g.Tensors {
		b.WriteString(t.Arg + ":" + t.DataType)
		if baseArg(t.Arg) != "wei" {
			outer, _, _ := parseTag(t.Tag)
			b.WriteString(":" + t.FormatKind + ":" + outer)
		}
		b.WriteByte(' ')
	}
	return b.String()
}

// exactKey is the group's key but for the implementation.
func exactKey(g *Group) string {
	var b strings.Builder
	b.WriteString(problemKey(g))
	for _, t := range g.Tensors {
		b.WriteString(t.Tag + ":" + t.Strides + " ")
	}
	return b.String()
}

// Describe names a group's implementation and layouts, "jit:avx2 src
// acdb wei ABcd8b8a dst acdb".
func (g *Group) Describe() string {
	parts := []string{g.Implementation}
	for _, t := range g.Tensors {
		if t.Present() {
			parts = append(parts, t.Arg+" "+t.Tag)
		}
	}
	return strings.Join(parts, " ")
}

// MatchCounted gives every timed group (of the run that was timed) the
// group of the counted run that executed the same problem, and sets its
// Match. A group of the same layouts matches first; else the one group of
// the same problem (kind, propagation, attributes, algorithm, problem,
// data types and user layouts), flagged counted-other-implementation,
// provided no other timed group claims it. Anything else is not guessed:
// the group is flagged not-counted.
func MatchCounted(timed, counted []*Group) {
	exact := map[string][]*Group{}
	relaxed := map[string][]*Group{}
	for _, c := range counted {
		exact[exactKey(c)] = append(exact[exactKey(c)], c)
		relaxed[problemKey(c)] = append(relaxed[problemKey(c)], c)
	}
	claims := map[string]int{}
	for _, g := range timed {
		claims[problemKey(g)]++
	}
	for _, g := range timed {
		g.Match = match(g, exact[exactKey(g)], relaxed[problemKey(g)], claims[problemKey(g)])
	}
}

func match(g *Group, exact, relaxed []*Group, claims int) *CountMatch {
	m := &CountMatch{}
	switch {
	case len(exact) == 1:
		m.Group = exact[0]
	case len(exact) == 0 && len(relaxed) == 1 && claims == 1:
		m.Group = relaxed[0]
	case len(exact)+len(relaxed) == 0:
		m.Flags = append(m.Flags, roofline.Flag{Code: roofline.FlagUncounted, Subject: roofline.SubjectWork,
			Message: "the counted run executed no primitive of this problem: W and Q are analytic"})
		return m
	default:
		m.Flags = append(m.Flags, roofline.Flag{Code: roofline.FlagUncounted, Subject: roofline.SubjectWork,
			Message: fmt.Sprintf("%d groups of the counted run and %d timed groups share this problem with other layouts: which was counted for which is not guessed; W and Q are analytic", len(relaxed), claims)})
		return m
	}
	c := m.Group
	counted, ok := c.Counted()
	if !ok {
		m.Flags = append(m.Flags, roofline.Flag{Code: roofline.FlagUncounted, Subject: roofline.SubjectWork,
			Message: "the counted run's calls of this problem have no counts (every one overlapped another thread's call, or the calls could not be joined): W and Q are analytic"})
		m.Flags = append(m.Flags, CountFlags(c.Model, counted)...)
		return m
	}
	if c.Implementation != g.Implementation || exactKey(c) != exactKey(g) {
		m.Flags = append(m.Flags, roofline.Flag{Code: roofline.FlagCountedOther, Subject: roofline.SubjectWork,
			Message: fmt.Sprintf("timed %s; counted %s: W and Q are those of the counted implementation", g.Describe(), c.Describe())})
	}
	m.Counted = counted
	m.Flags = append(m.Flags, CountFlags(c.Model, counted)...)
	return m
}
