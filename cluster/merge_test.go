package cluster

import (
	"errors"
	"math"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/rprof/rprof/internal/docfile"
	"github.com/rprof/rprof/roofline"
)

var t0 = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

// rankPoint is a rank's point: W flops in fp64, Q bytes when it owns its
// node's traffic, running from start to end seconds after t0.
func rankPoint(job string, rank, size int, node string, w float64, owner bool, q float64, start, end float64) roofline.Point {
	p := roofline.Point{Schema: roofline.PointSchema, Label: "app", Command: []string{"./app"}, Source: "counters",
		WorkFlops: &w, WorkByPrecision: map[string]float64{roofline.Double: w}, Seconds: end - start,
		Rank: &roofline.Rank{Job: job, Launcher: "openmpi", Rank: rank, Size: size, Node: node, TrafficOwner: owner,
			Start: t0.Add(time.Duration(start * float64(time.Second))), End: t0.Add(time.Duration(end * float64(time.Second))),
			Version: "v1"}}
	if owner {
		p.TrafficBytes = &q
		r, wr := q*0.75, q*0.25
		p.ReadBytes, p.WriteBytes = &r, &wr
	} else {
		p.Flags = []roofline.Flag{{Code: roofline.FlagTrafficElsewhere, Message: "counted by the owner"}}
	}
	return p
}

// twoNodes: ranks 0,1 on a (0 owns), ranks 2,3 on b (3 owns); node traffic
// 1e9 B each.
func twoNodes() []roofline.Point {
	return []roofline.Point{
		rankPoint("j", 0, 4, "a", 1e9, true, 1e9, 0.0, 2.0),
		rankPoint("j", 1, 4, "a", 2e9, false, 0, 0.1, 1.5),
		rankPoint("j", 3, 4, "b", 4e9, true, 1e9, 0.2, 2.5),
		rankPoint("j", 2, 4, "b", 3e9, false, 0, 0.05, 3.0),
	}
}

func hasFlag(p roofline.Point, code string) bool {
	return slices.ContainsFunc(p.Flags, func(f roofline.Flag) bool { return f.Code == code })
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) }

func TestMergeSumsWorkAndOwnersTraffic(t *testing.T) {
	ms, err := Merge(twoNodes(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 1 {
		t.Fatalf("%d jobs, want 1", len(ms))
	}
	p := ms[0].Point
	j := p.Job
	checks := []struct {
		what      string
		got, want float64
	}{
		{"W", *p.WorkFlops, 10e9},
		{"W fp64", p.WorkByPrecision[roofline.Double], 10e9},
		{"Q (2 nodes × 1e9, not 4 ranks × it)", *p.TrafficBytes, 2e9},
		{"read", *p.ReadBytes, 1.5e9},
		{"write", *p.WriteBytes, 0.5e9},
		{"T first start to last end", p.Seconds, 3.0},
		{"slowest rank's time", j.SlowestSeconds, 2.95},
		{"slowest rank", float64(j.SlowestRank), 2},
		{"GFLOP/s", *p.GFlops, 10.0 / 3},
		{"intensity", *p.Intensity, 5},
	}
	for _, c := range checks {
		if !near(c.got, c.want) {
			t.Errorf("%s = %g, want %g", c.what, c.got, c.want)
		}
	}
	if len(j.Nodes) != 2 || !slices.Equal(j.Nodes[0].Owners, []int{0}) || !slices.Equal(j.Nodes[1].Owners, []int{3}) {
		t.Errorf("nodes = %+v", j.Nodes)
	}
	if len(p.Flags) != 0 {
		t.Errorf("a complete job is flagged: %+v", p.Flags)
	}
	n := ms[0].Nodes
	if len(n) != 2 || !near(*n[1].WorkFlops, 7e9) || !near(*n[1].TrafficBytes, 1e9) || !near(n[1].Seconds, 2.95) {
		t.Errorf("node b's point: W %v Q %v T %v", n[1].WorkFlops, n[1].TrafficBytes, n[1].Seconds)
	}
}

func TestMergeReportsAMissingRankAndStillMerges(t *testing.T) {
	pts := twoNodes()
	pts = slices.Delete(pts, 1, 2) // rank 1 died
	ms, err := Merge(pts, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := ms[0].Point
	if !slices.Equal(p.Job.Missing, []int{1}) || !hasFlag(p, roofline.FlagMissingRank) {
		t.Errorf("missing %v, flags %+v", p.Job.Missing, p.Flags)
	}
	if !near(*p.WorkFlops, 8e9) || !near(*p.TrafficBytes, 2e9) {
		t.Errorf("W %g Q %g, want the ranks present: 8e9, 2e9", *p.WorkFlops, *p.TrafficBytes)
	}
}

func TestMergeNodeWithoutOwnerMakesQUnknown(t *testing.T) {
	pts := twoNodes()
	pts = slices.Delete(pts, 2, 3) // rank 3, b's owner, died
	ms, err := Merge(pts, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := ms[0].Point
	if p.TrafficBytes != nil || p.Intensity != nil || !hasFlag(p, roofline.FlagTrafficOwner) {
		t.Errorf("Q %v intensity %v flags %+v: want unknown Q, flagged", p.TrafficBytes, p.Intensity, p.Flags)
	}
	if ms[0].Nodes[0].TrafficBytes == nil {
		t.Error("node a's point lost its owner's Q")
	}
}

func TestMergeTwoOwnersOnANodeMakeQUnknown(t *testing.T) {
	pts := twoNodes()
	pts[1] = rankPoint("j", 1, 4, "a", 2e9, true, 1e9, 0.1, 1.5)
	ms, err := Merge(pts, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p := ms[0].Point; p.TrafficBytes != nil || !hasFlag(p, roofline.FlagTrafficOwner) {
		t.Errorf("Q %v flags %+v: want unknown Q, flagged", p.TrafficBytes, p.Flags)
	}
}

func TestMergeSumsEmulatedRanksOwnTrafficWithoutAnOwner(t *testing.T) {
	var pts []roofline.Point
	for r, node := range []string{"a", "a", "b", "b"} {
		p := rankPoint("j", r, 4, node, 1e9, false, 0, 0, 1)
		p.Source, p.Flags = roofline.SourceEmulated, nil
		q, rd, wr := float64(r+1)*1e8, float64(r+1)*6e7, float64(r+1)*4e7
		p.TrafficBytes, p.ReadBytes, p.WriteBytes = &q, &rd, &wr
		pts = append(pts, p)
	}
	ms, err := Merge(pts, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := ms[0].Point
	if p.TrafficBytes == nil || !near(*p.TrafficBytes, 10e8) || !near(*p.ReadBytes, 6e8) || !near(*p.WriteBytes, 4e8) || p.Intensity == nil {
		t.Errorf("job Q %v (read %v, write %v): want the ranks' sum 1e9 (6e8, 4e8) and an intensity", p.TrafficBytes, p.ReadBytes, p.WriteBytes)
	}
	if hasFlag(p, roofline.FlagTrafficOwner) || !hasFlag(p, roofline.FlagRankTraffic) {
		t.Errorf("flags %+v: want %s and no %s", p.Flags, roofline.FlagRankTraffic, roofline.FlagTrafficOwner)
	}
	for i, want := range []float64{3e8, 7e8} {
		n := ms[0].Nodes[i]
		if n.TrafficBytes == nil || !near(*n.TrafficBytes, want) || p.Job.Nodes[i].TrafficBytes == nil || !near(*p.Job.Nodes[i].TrafficBytes, want) || hasFlag(n, roofline.FlagTrafficOwner) {
			t.Errorf("node %d: Q %v, job node %+v, flags %+v; want its ranks' sum %g", i, n.TrafficBytes, p.Job.Nodes[i], n.Flags, want)
		}
	}
}

func TestMergeRefusesMixedVersions(t *testing.T) {
	pts := twoNodes()
	pts[2].Rank.Version = "v2"
	_, err := Merge(pts, nil)
	var ve *VersionError
	if !errors.As(err, &ve) || !slices.Equal(ve.Versions, []string{"v1", "v2"}) {
		t.Errorf("Merge = %v, want *VersionError v1, v2", err)
	}
}

func TestMergeRefusesAPointOutsideAJob(t *testing.T) {
	pts := twoNodes()
	pts[0].Rank = nil
	if _, err := Merge(pts, nil); !errors.Is(err, ErrNotRank) {
		t.Errorf("Merge = %v, want ErrNotRank", err)
	}
}

func TestMergeSeparatesJobs(t *testing.T) {
	pts := append(twoNodes(), rankPoint("i", 0, 1, "c", 5, true, 7, 0, 1))
	ms, err := Merge(pts, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 2 || ms[0].Point.Job.ID != "i" || ms[1].Point.Job.ID != "j" {
		t.Errorf("jobs %v", ms)
	}
}

func TestMergeCarriesSharedTrafficWithItsRank(t *testing.T) {
	pts := twoNodes()
	pts[2].Flags = append(pts[2].Flags, roofline.Flag{Code: roofline.FlagSharedTraffic, Message: "job x counted too"})
	ms, err := Merge(pts, nil)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(ms[0].Point.Flags, func(f roofline.Flag) bool { return f.Code == roofline.FlagSharedTraffic })
	if i < 0 || ms[0].Point.Flags[i].Message != "rank 3: job x counted too" {
		t.Errorf("flags %+v", ms[0].Point.Flags)
	}
}

func TestMergeFlagsUnequalRoofs(t *testing.T) {
	pts := twoNodes()
	for i := range pts {
		pts[i].Rank.NodeRoofs = &roofline.NodeRoofs{CPU: "x", Threads: 2, GFlops: 100, DRAMGBytesPerS: 40}
	}
	ms, _ := Merge(pts, nil)
	if hasFlag(ms[0].Point, roofline.FlagUnequalRoofs) {
		t.Error("equal roofs flagged")
	}
	pts[2].Rank.NodeRoofs = &roofline.NodeRoofs{CPU: "x", Threads: 2, GFlops: 100, DRAMGBytesPerS: 30}
	pts[3].Rank.NodeRoofs = pts[2].Rank.NodeRoofs
	ms, _ = Merge(pts, nil)
	if n := len(slices.DeleteFunc(slices.Clone(ms[0].Point.Flags), func(f roofline.Flag) bool { return f.Code != roofline.FlagUnequalRoofs })); n != 1 {
		t.Errorf("%d unequal-roofs flags, want 1 (one per node): %+v", n, ms[0].Point.Flags)
	}
}

func TestMergePlacesUnderNodeRoofsTimesNodes(t *testing.T) {
	roofs := readFixtureRoofs(t, "roofs_zen5_vm.json")
	ms, err := Merge(twoNodes(), roofs)
	if err != nil {
		t.Fatal(err)
	}
	p := ms[0].Point
	top := slices.Max(roofs.ThreadScopes())
	peak, _ := roofs.PeakCompute(top, roofline.Double)
	mem, _ := roofs.BandwidthAt("DRAM", top)
	want := math.Min(2*peak.GFlops, 2*mem.GBytesPerS**p.Intensity)
	if p.AttainableGFlops == nil || !near(*p.AttainableGFlops, want) || p.Threads != 2*top {
		t.Errorf("attainable %v at %d threads, want %g at %d", p.AttainableGFlops, p.Threads, want, 2*top)
	}
	if !hasFlag(p, roofline.FlagJobRoofs) {
		t.Error("the job roofs' assumption is not stated")
	}
	n := ms[0].Nodes[0]
	if n.AttainableGFlops == nil || n.Threads != top {
		t.Errorf("node point not placed under the node roofs: %v at %d", n.AttainableGFlops, n.Threads)
	}
}

func TestJobRoofsScalesEveryCeiling(t *testing.T) {
	r := readFixtureRoofs(t, "roofs_zen5_vm.json")
	j := JobRoofs(r, 3)
	for i, c := range r.Compute {
		if !near(j.Compute[i].GFlops, 3*c.GFlops) || j.Compute[i].Threads != 3*c.Threads {
			t.Errorf("%s: %g at %d", c.Name, j.Compute[i].GFlops, j.Compute[i].Threads)
		}
	}
	for i, b := range r.Bandwidth {
		if !near(j.Bandwidth[i].GBytesPerS, 3*b.GBytesPerS) {
			t.Errorf("%s: %g", b.Level, j.Bandwidth[i].GBytesPerS)
		}
	}
	if r.Compute[0].Threads == j.Compute[0].Threads {
		t.Error("JobRoofs changed its input")
	}
}

func TestIntRanges(t *testing.T) {
	if got := intRanges([]int{0, 1, 2, 3, 5, 7, 8}); got != "0-3,5,7-8" {
		t.Errorf("intRanges = %q", got)
	}
}

// readFixtureRoofs reads roofline's recorded roofs document name.
func readFixtureRoofs(t *testing.T, name string) *roofline.Roofs {
	t.Helper()
	r, err := docfile.ReadRoofs(filepath.Join("..", "roofline", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return r
}
