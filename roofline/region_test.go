package roofline

import "testing"

func TestRegionPointsAreLabelledPointsOfOneSample(t *testing.T) {
	w, gf := 2e9, 20.0
	p := Point{Schema: PointSchema, Label: "app", Command: []string{"./app"}, Source: "counters", Threads: 2,
		CI: Uncertainty{Confidence: 0.95},
		Regions: []Region{
			{Name: "dgemm", Calls: 3, Seconds: 0.1, WorkFlops: &w, GFlops: &gf, Flags: []Flag{{Code: FlagUncountedCalls}}},
			{Name: "init", Calls: 1, Seconds: 0.01},
		}}
	rs := p.RegionPoints()
	if len(rs) != 2 || rs[0].Label != "app/dgemm" || rs[1].Label != "app/init" {
		t.Fatalf("%+v", rs)
	}
	d := rs[0]
	if d.Seconds != 0.1 || d.WorkFlops != &w || d.GFlops != &gf || d.Threads != 2 || d.CI.N != 1 ||
		len(d.Samples.Seconds) != 1 || len(d.Samples.WorkFlops) != 1 || d.Flags[0].Code != FlagUncountedCalls {
		t.Errorf("%+v", d)
	}
	if rs[1].WorkFlops != nil || rs[1].Samples.WorkFlops != nil {
		t.Errorf("a region without W must stay without: %+v", rs[1])
	}
}
