package cluster

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/rprof/rprof/roofline"
)

// ErrNotRank: a point given to Merge is not a rank of a parallel job.
var ErrNotRank = errors.New("not a rank's point (made outside mpirun or srun)")

// VersionError refuses a job whose ranks were measured by different rprof
// builds.
type VersionError struct {
	Job      string
	Versions []string
}

func (e *VersionError) Error() string {
	return fmt.Sprintf("job %s: ranks measured by different rprof versions (%s): merge refuses to mix them", e.Job, strings.Join(e.Versions, ", "))
}

// Merged is one job's merge.
type Merged struct {
	// Point is the job point: W summed over ranks (and per precision), Q
	// summed over the nodes' traffic owners, T from the first rank's start
	// to the last one's end, placed under the node roofs × nodes.
	Point roofline.Point
	// Nodes are per-node points (W of the node's ranks, its owner's Q, T
	// from its first start to its last end), under the node roofs.
	Nodes []roofline.Point
}

// Merge groups rank points by job and merges each job. roofs, when not
// nil, are the nodes' roofs (one node's): the job point is placed under
// them × nodes, each node's point under them as they are. Problems with
// the data (missing ranks, a node without a traffic owner or with
// several, owners that shared the memory controllers, unequal roofs) are
// flags on the job point, never silent; a point that is not a rank's
// (ErrNotRank) and mixed versions (*VersionError) are errors.
func Merge(points []roofline.Point, roofs *roofline.Roofs) ([]Merged, error) {
	byJob := map[string][]roofline.Point{}
	for i, p := range points {
		if p.Rank == nil {
			return nil, fmt.Errorf("merge: point %d (%s): %w", i+1, p.Label, ErrNotRank)
		}
		byJob[p.Rank.Job] = append(byJob[p.Rank.Job], p)
	}
	jobs := make([]string, 0, len(byJob))
	for j := range byJob {
		jobs = append(jobs, j)
	}
	sort.Strings(jobs)
	var out []Merged
	for _, j := range jobs {
		m, err := mergeJob(j, byJob[j], roofs)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

func mergeJob(job string, ranks []roofline.Point, roofs *roofline.Roofs) (Merged, error) {
	version, err := jobVersion(job, ranks)
	if err != nil {
		return Merged{}, err
	}
	sort.SliceStable(ranks, func(a, b int) bool { return ranks[a].Rank.Rank < ranks[b].Rank.Rank })
	ranks, size, missing, flags := oneRankEach(ranks)

	first := ranks[0]
	jp := roofline.Point{Schema: roofline.PointSchema, Label: first.Label, Command: first.Command, Source: first.Source,
		Machine: first.Machine, Events: []roofline.EventCount{}, Samples: roofline.Samples{}}
	jp.Machine.Hostname = ""
	j := &roofline.Job{ID: job, Launcher: first.Rank.Launcher, Ranks: size, Missing: missing, Version: version, SlowestRank: -1}
	nodeRanks := groupNodes(j, ranks)
	flags = append(flags, sumWork(&jp, ranks)...)
	if perRankTraffic(ranks) {
		flags = append(flags, sumRankTraffic(&jp, ranks))
	} else {
		flags = append(flags, sumTraffic(&jp, j.Nodes, ranks)...)
	}
	spanTime(&jp, j, ranks)
	jp.Seconds = j.End.Sub(j.Start).Seconds()
	jp.CI = roofline.Uncertainty{Confidence: first.CI.Confidence, Method: "none", N: 1, Seconds: roofline.Interval{Lo: jp.Seconds, Hi: jp.Seconds}}
	jp.Samples.Seconds = []float64{jp.Seconds}
	derive(&jp)

	flags = append(flags, roofsFlags(ranks)...)
	jp.Flags = append(rankFlags(ranks), flags...)
	jp.Job = j
	nodes := len(j.Nodes)
	if roofs != nil {
		jr := JobRoofs(roofs, nodes)
		placeUnder(&jp, jr)
		if nodes > 1 {
			jp.Flags = append(jp.Flags, roofline.Flag{Code: roofline.FlagJobRoofs, Subject: roofline.SubjectPlacement, Message: fmt.Sprintf("placed under the node roofs × %d nodes: this assumes the nodes scale perfectly; the network is not a roof here", nodes)})
		}
	}

	m := Merged{Point: jp}
	for i, n := range jp.Job.Nodes {
		m.Nodes = append(m.Nodes, nodePoint(jp, n, nodeRanks[i], roofs))
	}
	return m, nil
}

// newFlag builds a Flag with a formatted message; the merge helpers below
// each return their own flags, which mergeJob appends in a fixed order.
func newFlag(code, subject, format string, args ...any) roofline.Flag {
	return roofline.Flag{Code: code, Subject: subject, Message: fmt.Sprintf(format, args...)}
}

// jobVersion is the one rprof version that wrote all of a job's points:
// points of different versions may not agree on what they count, so
// merging them is refused.
func jobVersion(job string, ranks []roofline.Point) (string, error) {
	var versions []string
	for _, p := range ranks {
		if !slices.Contains(versions, p.Rank.Version) {
			versions = append(versions, p.Rank.Version)
		}
	}
	if len(versions) > 1 {
		sort.Strings(versions)
		return "", &VersionError{Job: job, Versions: versions}
	}
	return versions[0], nil
}

// oneRankEach keeps one point per rank of ranks (sorted by rank): a second
// file for a rank is dropped, flagged. It also returns the job's size (the
// largest size any rank reported) and the ranks below it that have no
// point, flagged, since W, T and the nodes then cover only part of the job.
func oneRankEach(ranks []roofline.Point) (kept []roofline.Point, size int, missing []int, flags []roofline.Flag) {
	seen := map[int]bool{}
	kept = ranks[:0:0]
	for _, p := range ranks {
		size = max(size, p.Rank.Size)
		if seen[p.Rank.Rank] {
			flags = append(flags, newFlag(roofline.FlagMissingRank, "", "rank %d has more than one point: the first was used", p.Rank.Rank))
			continue
		}
		seen[p.Rank.Rank] = true
		kept = append(kept, p)
	}
	for r := range size {
		if !seen[r] {
			missing = append(missing, r)
		}
	}
	if missing != nil {
		flags = append(flags, newFlag(roofline.FlagMissingRank, "", "%d of the job's %d ranks have no point (ranks %s): a rank died or its file was not given; W, T and the ranks' nodes cover the ranks present only", len(missing), size, intRanges(missing)))
	}
	return kept, size, missing, flags
}

// groupNodes fills j.Nodes, in order of their lowest rank, with each node's
// ranks, traffic owners and owner's traffic, and returns each node's points
// (same order) for its node point.
func groupNodes(j *roofline.Job, ranks []roofline.Point) [][]roofline.Point {
	nodeOf := map[string]int{}
	var nodeRanks [][]roofline.Point
	for _, p := range ranks {
		i, ok := nodeOf[p.Rank.Node]
		if !ok {
			i = len(nodeRanks)
			nodeOf[p.Rank.Node] = i
			nodeRanks = append(nodeRanks, nil)
			j.Nodes = append(j.Nodes, roofline.JobNode{Node: p.Rank.Node})
		}
		nodeRanks[i] = append(nodeRanks[i], p)
		j.Nodes[i].Ranks = append(j.Nodes[i].Ranks, p.Rank.Rank)
		if p.Rank.TrafficOwner {
			j.Nodes[i].Owners = append(j.Nodes[i].Owners, p.Rank.Rank)
			if p.TrafficBytes != nil {
				j.Nodes[i].TrafficBytes = ptrTo(*p.TrafficBytes)
			}
		}
	}
	if perRankTraffic(ranks) {
		for i := range j.Nodes {
			q := sumOverRanks(nodeRanks[i], func(p roofline.Point) *float64 { return p.TrafficBytes })
			j.Nodes[i].TrafficBytes = q
		}
	}
	return nodeRanks
}

// perRankTraffic reports whether every rank's Q is its own: counted under
// emulation, where each rank's modelled caches see only its accesses, so
// the job's Q is the sum over ranks and there is no owner to elect.
func perRankTraffic(ranks []roofline.Point) bool {
	return !slices.ContainsFunc(ranks, func(p roofline.Point) bool { return p.Source != roofline.SourceEmulated })
}

// sumRankTraffic sets jp's Q (and its read and write parts) to the sum of
// the ranks' own, unknown if any rank's is, and says so.
func sumRankTraffic(jp *roofline.Point, ranks []roofline.Point) roofline.Flag {
	jp.TrafficBytes = sumOverRanks(ranks, func(p roofline.Point) *float64 { return p.TrafficBytes })
	jp.ReadBytes = sumOverRanks(ranks, func(p roofline.Point) *float64 { return p.ReadBytes })
	jp.WriteBytes = sumOverRanks(ranks, func(p roofline.Point) *float64 { return p.WriteBytes })
	if jp.TrafficBytes == nil {
		return newFlag(roofline.FlagRankTraffic, roofline.SubjectTraffic, "each rank modelled its own Q under emulation, and at least one rank's is unknown, so the job's Q is unknown")
	}
	return newFlag(roofline.FlagRankTraffic, roofline.SubjectTraffic, "Q is the sum of the %d ranks' own modelled Q (each rank counted under emulation with its own modelled caches; no traffic owner is elected): caches the ranks share on a real node are not modelled", len(ranks))
}

// sumWork sets jp's W, summed over ranks; a rank without W makes the
// job's W unknown, flagged.
func sumWork(jp *roofline.Point, ranks []roofline.Point) []roofline.Flag {
	var flags []roofline.Flag
	jp.WorkFlops = sumOverRanks(ranks, func(p roofline.Point) *float64 { return p.WorkFlops })
	if jp.WorkFlops == nil {
		flags = append(flags, newFlag(roofline.FlagMissingCounter, roofline.SubjectWork, "work is unknown for at least one rank, so the job's work is unknown"))
	}
	for _, p := range ranks {
		for k, v := range p.WorkByPrecision {
			if jp.WorkByPrecision == nil {
				jp.WorkByPrecision = map[string]float64{}
			}
			jp.WorkByPrecision[k] += v
		}
	}
	return flags
}

// sumOverRanks is the sum of get over ranks, or nil if any rank lacks it.
func sumOverRanks(ranks []roofline.Point, get func(roofline.Point) *float64) *float64 {
	var s float64
	for _, p := range ranks {
		v := get(p)
		if v == nil {
			return nil
		}
		s += *v
	}
	return &s
}

// sumTraffic sets jp's Q (and its read and write parts), summed over the
// traffic owners, one per node. A node with no owner or several makes Q
// unknown, flagged: its traffic would be missed or counted twice.
func sumTraffic(jp *roofline.Point, nodes []roofline.JobNode, ranks []roofline.Point) []roofline.Flag {
	var flags []roofline.Flag
	qKnown := true
	var q, rd, wr float64
	rdKnown, wrKnown := true, true
	for _, n := range nodes {
		switch len(n.Owners) {
		case 0:
			flags = append(flags, newFlag(roofline.FlagTrafficOwner, roofline.SubjectTraffic, "node %s has no traffic owner among the ranks present: its DRAM traffic was not counted (the owner died, its file is missing, or the lock directory was unusable), so the job's Q is unknown", n.Node))
			qKnown = false
			continue
		case 1:
		default:
			flags = append(flags, newFlag(roofline.FlagTrafficOwner, roofline.SubjectTraffic, "node %s has %d traffic owners (ranks %s): its traffic would be counted more than once, so the job's Q is unknown", n.Node, len(n.Owners), intRanges(n.Owners)))
			qKnown = false
			continue
		}
		owner := pointOf(ranks, n.Owners[0])
		if owner.TrafficBytes == nil {
			qKnown = false
			continue
		}
		q += *owner.TrafficBytes
		rdKnown = addKnown(&rd, owner.ReadBytes) && rdKnown
		wrKnown = addKnown(&wr, owner.WriteBytes) && wrKnown
	}
	if qKnown {
		jp.TrafficBytes = &q
		if rdKnown {
			jp.ReadBytes = &rd
		}
		if wrKnown {
			jp.WriteBytes = &wr
		}
	}
	return flags
}

// addKnown adds *v to *sum if v is known, and says whether it was.
func addKnown(sum *float64, v *float64) bool {
	if v == nil {
		return false
	}
	*sum += *v
	return true
}

// spanTime sets the job's start (first start), end (last end) and slowest
// rank, and jp's creation time (latest) and exit (the first failing
// rank's, in rank order).
func spanTime(jp *roofline.Point, j *roofline.Job, ranks []roofline.Point) {
	for _, p := range ranks {
		if j.Start.IsZero() || p.Rank.Start.Before(j.Start) {
			j.Start = p.Rank.Start
		}
		if p.Rank.End.After(j.End) {
			j.End = p.Rank.End
		}
		if p.Seconds > j.SlowestSeconds || j.SlowestRank < 0 {
			j.SlowestRank, j.SlowestSeconds = p.Rank.Rank, p.Seconds
		}
		if p.Created.After(jp.Created) {
			jp.Created = p.Created
		}
		if jp.Exit.Code == 0 && (p.Exit.Code != 0 || p.Exit.Signal != "") {
			jp.Exit = p.Exit
		}
	}
}

// nodePoint is one node's point: its ranks' W, its owner's Q, T from its
// first start to its last end.
func nodePoint(jp roofline.Point, n roofline.JobNode, ranks []roofline.Point, roofs *roofline.Roofs) roofline.Point {
	p := roofline.Point{Schema: roofline.PointSchema, Label: jp.Label + "@" + n.Node, Command: jp.Command, Created: jp.Created,
		Source: jp.Source, Machine: ranks[0].Machine, Events: []roofline.EventCount{}, Exit: jp.Exit}
	var w float64
	wKnown := true
	var start, end time.Time
	for _, r := range ranks {
		if r.WorkFlops == nil {
			wKnown = false
		} else {
			w += *r.WorkFlops
		}
		for k, v := range r.WorkByPrecision {
			if p.WorkByPrecision == nil {
				p.WorkByPrecision = map[string]float64{}
			}
			p.WorkByPrecision[k] += v
		}
		if start.IsZero() || r.Rank.Start.Before(start) {
			start = r.Rank.Start
		}
		if r.Rank.End.After(end) {
			end = r.Rank.End
		}
	}
	if wKnown {
		p.WorkFlops = &w
	}
	switch {
	case perRankTraffic(ranks):
		p.Flags = append(p.Flags, sumRankTraffic(&p, ranks))
	case len(n.Owners) == 1:
		o := pointOf(ranks, n.Owners[0])
		p.TrafficBytes, p.ReadBytes, p.WriteBytes = o.TrafficBytes, o.ReadBytes, o.WriteBytes
	default:
		p.Flags = append(p.Flags, roofline.Flag{Code: roofline.FlagTrafficOwner, Subject: roofline.SubjectTraffic, Message: fmt.Sprintf("node %s has %d traffic owners among the ranks present: its Q is unknown", n.Node, len(n.Owners))})
	}
	p.Job = &roofline.Job{ID: jp.Job.ID, Launcher: jp.Job.Launcher, Ranks: len(ranks), Nodes: []roofline.JobNode{n},
		Start: start, End: end, SlowestRank: -1, Version: jp.Job.Version}
	for _, r := range ranks {
		if r.Seconds > p.Job.SlowestSeconds || p.Job.SlowestRank < 0 {
			p.Job.SlowestRank, p.Job.SlowestSeconds = r.Rank.Rank, r.Seconds
		}
	}
	p.Seconds = end.Sub(start).Seconds()
	p.CI = roofline.Uncertainty{Confidence: jp.CI.Confidence, Method: "none", N: 1, Seconds: roofline.Interval{Lo: p.Seconds, Hi: p.Seconds}}
	p.Samples.Seconds = []float64{p.Seconds}
	derive(&p)
	p.Flags = append(rankFlags(ranks), p.Flags...)
	if roofs != nil {
		placeUnder(&p, roofs)
	}
	return p
}

// derive computes intensity and rates from W, Q and T.
func derive(p *roofline.Point) {
	if p.WorkFlops != nil && p.TrafficBytes != nil && *p.TrafficBytes > 0 {
		p.Intensity = ptrTo(*p.WorkFlops / *p.TrafficBytes)
	}
	if p.Seconds > 0 {
		if p.WorkFlops != nil {
			p.GFlops = ptrTo(roofline.Rate(*p.WorkFlops, p.Seconds))
		}
		if p.TrafficBytes != nil {
			p.GBytesPerS = ptrTo(roofline.Rate(*p.TrafficBytes, p.Seconds))
		}
	}
}

// placeUnder places p under r at r's widest thread scope.
func placeUnder(p *roofline.Point, r *roofline.Roofs) {
	scopes := r.ThreadScopes()
	if len(scopes) == 0 {
		return
	}
	r.PlaceAt(p, slices.Max(scopes))
}

// JobRoofs is a node's roofs scaled to n nodes: every ceiling and its
// interval × n, every thread scope × n. It assumes perfect scaling across
// nodes and says so in a flag.
func JobRoofs(node *roofline.Roofs, n int) *roofline.Roofs {
	r := *node
	f := float64(n)
	r.Compute = slices.Clone(node.Compute)
	for i := range r.Compute {
		c := &r.Compute[i]
		c.Threads *= n
		c.GFlops *= f
		c.CI = roofline.Interval{Lo: c.CI.Lo * f, Hi: c.CI.Hi * f}
		c.TheoreticalGFlops *= f
	}
	r.Bandwidth = slices.Clone(node.Bandwidth)
	for i := range r.Bandwidth {
		b := &r.Bandwidth[i]
		b.Threads *= n
		b.GBytesPerS *= f
		b.CI = roofline.Interval{Lo: b.CI.Lo * f, Hi: b.CI.Hi * f}
		b.WorkingSetBytes *= int64(n)
	}
	if node.DGEMM != nil {
		d := *node.DGEMM
		d.Threads *= n
		d.GFlops *= f
		d.CI = roofline.Interval{Lo: d.CI.Lo * f, Hi: d.CI.Hi * f}
		r.DGEMM = &d
	}
	r.Machine.Hostname = ""
	r.Flags = append(slices.Clone(node.Flags), roofline.Flag{Code: roofline.FlagJobRoofs,
		Message: fmt.Sprintf("job roofs: one node's measured roofs × %d nodes (thread scopes too); this assumes the nodes scale perfectly, and the network is not a roof", n)})
	return &r
}

// rankFlags are the ranks' flags, each (code, message) once, with the
// ranks it came from when not all.
func rankFlags(ranks []roofline.Point) []roofline.Flag {
	type key struct{ code, subject, msg string }
	var order []key
	from := map[key][]int{}
	for _, p := range ranks {
		for _, f := range p.Flags {
			if f.Code == roofline.FlagTrafficElsewhere {
				continue // the job point's Q is the owners'
			}
			k := key{f.Code, f.Subject, f.Message}
			if _, ok := from[k]; !ok {
				order = append(order, k)
			}
			from[k] = append(from[k], p.Rank.Rank)
		}
	}
	out := make([]roofline.Flag, 0, len(order))
	for _, k := range order {
		msg := k.msg
		if len(from[k]) < len(ranks) {
			msg = fmt.Sprintf("rank %s: %s", intRanges(from[k]), msg)
		}
		out = append(out, roofline.Flag{Code: k.code, Subject: k.subject, Message: msg})
	}
	return out
}

// roofsFlags flags nodes whose roofs differ by more than 5% (or whose
// CPUs differ), and ranks placed under no roofs beside ranks placed.
func roofsFlags(ranks []roofline.Point) []roofline.Flag {
	var ref *roofline.Rank
	for _, p := range ranks {
		if p.Rank.NodeRoofs != nil {
			ref = p.Rank
			break
		}
	}
	if ref == nil {
		return nil
	}
	a := ref.NodeRoofs
	differ := func(x, y float64) bool { return math.Abs(x-y) > 0.05*math.Max(x, y) }
	reported := map[string]bool{ref.Node: true}
	var out []roofline.Flag
	for _, p := range ranks {
		b := p.Rank.NodeRoofs
		if reported[p.Rank.Node] {
			continue
		}
		switch {
		case b == nil:
			out = append(out, roofline.Flag{Code: roofline.FlagUnequalRoofs, Subject: roofline.SubjectPlacement, Message: fmt.Sprintf("node %s had no roofs while node %s had", p.Rank.Node, ref.Node)})
		case a.CPU != b.CPU || a.Threads != b.Threads || differ(a.GFlops, b.GFlops) || differ(a.DRAMGBytesPerS, b.DRAMGBytesPerS):
			out = append(out, roofline.Flag{Code: roofline.FlagUnequalRoofs, Subject: roofline.SubjectPlacement, Message: fmt.Sprintf("the roofs of node %s (%s, %d threads: %.4g GFLOP/s, DRAM %.4g GB/s) differ from node %s's (%s, %d threads: %.4g GFLOP/s, DRAM %.4g GB/s): the job point is placed under one node's roofs × nodes",
				p.Rank.Node, b.CPU, b.Threads, b.GFlops, b.DRAMGBytesPerS, ref.Node, a.CPU, a.Threads, a.GFlops, a.DRAMGBytesPerS)})
		default:
			continue
		}
		reported[p.Rank.Node] = true
	}
	return out
}

func pointOf(ranks []roofline.Point, rank int) roofline.Point {
	for _, p := range ranks {
		if p.Rank.Rank == rank {
			return p
		}
	}
	return roofline.Point{}
}

// intRanges prints sorted ints as "0-3,5".
func intRanges(xs []int) string {
	var b strings.Builder
	for i := 0; i < len(xs); {
		k := i
		for k+1 < len(xs) && xs[k+1] == xs[k]+1 {
			k++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		if k > i {
			fmt.Fprintf(&b, "%d-%d", xs[i], xs[k])
		} else {
			fmt.Fprintf(&b, "%d", xs[i])
		}
		i = k + 1
	}
	return b.String()
}

func ptrTo(v float64) *float64 { return &v }
