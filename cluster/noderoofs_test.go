package cluster

import (
	"errors"
	"slices"
	"testing"

	"github.com/rprof/rprof/roofline"
)

// nodeRoofs is the fixture measured on host, with its DRAM roofs scaled
// by dram.
func nodeRoofs(t *testing.T, host string, dram float64) roofline.Roofs {
	r := *readFixtureRoofs(t, "roofs_zen5_vm.json")
	r.Machine.Hostname = host
	r.Bandwidth = slices.Clone(r.Bandwidth)
	for i := range r.Bandwidth {
		if r.Bandwidth[i].Level == "DRAM" {
			r.Bandwidth[i].GBytesPerS *= dram
		}
	}
	return r
}

func TestMergeRoofsOneTypeKeepsTheLowestAndScalesTheJob(t *testing.T) {
	a, b := nodeRoofs(t, "a", 1), nodeRoofs(t, "b", 0.9)
	types, job, err := MergeRoofs([]roofline.Roofs{a, b})
	if err != nil {
		t.Fatal(err)
	}
	if len(types) != 1 || !slices.Equal(types[0].Nodes, []string{"a", "b"}) {
		t.Fatalf("types %+v", types)
	}
	got, _ := types[0].Roofs.BandwidthAt("DRAM", 1)
	want, _ := b.BandwidthAt("DRAM", 1)
	if got.GBytesPerS != want.GBytesPerS {
		t.Errorf("type DRAM %g, want node b's lower %g", got.GBytesPerS, want.GBytesPerS)
	}
	if !slices.ContainsFunc(types[0].Roofs.Flags, func(f roofline.Flag) bool { return f.Code == roofline.FlagUnequalRoofs }) {
		t.Error("a 10% DRAM difference between nodes of one type is not flagged")
	}
	if job == nil {
		t.Fatal("no job roofs for one node type")
	}
	jd, _ := job.BandwidthAt("DRAM", 2)
	if !near(jd.GBytesPerS, 2*got.GBytesPerS) {
		t.Errorf("job DRAM on 2 threads %g, want 2 × %g", jd.GBytesPerS, got.GBytesPerS)
	}
}

func TestMergeRoofsSeveralTypesHaveNoJobRoofs(t *testing.T) {
	a, b := nodeRoofs(t, "a", 1), nodeRoofs(t, "b", 1)
	b.Machine.CPU.ModelName = "another CPU"
	types, job, err := MergeRoofs([]roofline.Roofs{a, b})
	if err != nil || len(types) != 2 || job != nil {
		t.Errorf("types %d, job %v, err %v: want 2 types, no job roofs", len(types), job != nil, err)
	}
	if _, _, err := MergeRoofs(nil); !errors.Is(err, ErrNoRoofs) {
		t.Errorf("MergeRoofs(nil) = %v", err)
	}
}
