package regions

import (
	"math"
	"testing"
	"time"

	"github.com/rprof/rprof/pmu"
)

// rec builds a record at t microseconds.
func rec(kind RecordKind, tid uint32, region uint64, tUS float64, sp uint64, cpu uint32, counts ...uint64) Record {
	r := Record{Kind: kind, TID: tid, TGID: 1, Region: region, Time: uint64(tUS * 1e3), SP: sp, CPU: cpu}
	for i := 0; i+1 < len(counts); i += 2 {
		r.Counts = append(r.Counts, pmu.Count{Raw: counts[i], Enabled: counts[i+1], Running: counts[i+1]})
	}
	return r
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestAggregatorSubtractsProbeCostInsideAndPerNestedCall(t *testing.T) {
	// outer (region 0) runs 0..100 us and calls inner (region 1) at
	// 10..30 us and 40..60 us. A probe costs 1 us inside a call's window
	// and 3 us of wall time per call.
	cost := Cost{Inside: time.Microsecond, Call: 3 * time.Microsecond}
	a := NewAggregator([]string{"outer", "inner"}, []Cost{cost, cost}, Cost{}, 0, false)
	for _, r := range []Record{
		rec(Entry, 7, 0, 0, 1000, 0),
		rec(Entry, 7, 1, 10, 900, 0), rec(Exit, 7, 1, 30, 900, 0),
		rec(Entry, 7, 1, 40, 900, 0), rec(Exit, 7, 1, 60, 900, 0),
		rec(Exit, 7, 0, 100, 1000, 0),
	} {
		a.Add(r)
	}
	st := a.Stats()
	outer, inner := st[0], st[1]
	// inner: 20 us measured - 1 us inside = 19 us per call.
	if inner.Calls != 2 || !near(inner.Seconds, 38e-6) || !near(inner.Median, 19e-6) {
		t.Errorf("inner: %+v", inner)
	}
	// outer: 100 us - 1 inside - 2 nested calls x 3 = 93 us; self:
	// 93 - 38 = 55 us.
	if !near(outer.Seconds, 93e-6) || !near(outer.SelfSeconds, 55e-6) || !near(outer.MeasuredSeconds, 100e-6) {
		t.Errorf("outer: total %g self %g measured %g, want 93e-6, 55e-6, 100e-6", outer.Seconds, outer.SelfSeconds, outer.MeasuredSeconds)
	}
}

func TestAggregatorCountsRecursionOnceInclusive(t *testing.T) {
	a := NewAggregator([]string{"f"}, nil, Cost{}, 0, false)
	for _, r := range []Record{
		rec(Entry, 1, 0, 0, 1000, 0),
		rec(Entry, 1, 0, 10, 900, 0),
		rec(Exit, 1, 0, 20, 900, 0),
		rec(Exit, 1, 0, 30, 1000, 0),
	} {
		a.Add(r)
	}
	f := a.Stats()[0]
	if f.Calls != 2 || !near(f.Seconds, 30e-6) || !near(f.SelfSeconds, 30e-6) || !near(f.Mean, 20e-6) {
		t.Errorf("%+v: want 2 calls, 30 us inclusive and self, 20 us mean", f)
	}
}

func TestAggregatorAbandonsCallsLeftByLongjmp(t *testing.T) {
	// main's region g (sp 1000) calls h (sp 900) which longjmps back into
	// g: h never returns; g returns normally.
	a := NewAggregator([]string{"g", "h"}, nil, Cost{}, 0, false)
	for _, r := range []Record{
		rec(Entry, 1, 0, 0, 1000, 0),
		rec(Entry, 1, 1, 5, 900, 0),
		rec(Exit, 1, 0, 50, 1000, 0),
		rec(Exit, 1, 1, 60, 700, 0), // a return of h never entered
	} {
		a.Add(r)
	}
	st := a.Stats()
	if st[0].Calls != 1 || st[1].Calls != 0 || st[1].NeverLeft != 1 || a.OrphanExits != 1 {
		t.Errorf("g %+v, h %+v, orphans %d", st[0], st[1], a.OrphanExits)
	}
}

func TestAggregatorKeepsCountsOfCallsThatStayedOnTheirCPU(t *testing.T) {
	a := NewAggregator([]string{"f", "g"}, nil, Cost{}, 2, true)
	for _, r := range countedRecords {
		a.Add(r)
	}
	f := a.Stats()[0]
	if f.Calls != 3 || f.Migrated != 1 || f.Switched != 1 || len(f.Counts) != 1 {
		t.Fatalf("%+v", f)
	}
	// The call that stayed on CPU 0: 100 faults over 10 us.
	if f.Counts[0].Raw != 100 || !near(f.CountedSeconds, 10e-6) {
		t.Errorf("counted %d faults over %g s, want 100 over 10e-6", f.Counts[0].Raw, f.CountedSeconds)
	}
}

// countedRecords are three calls of region 0 with the context-switch
// guard (counter 0) and page faults: one stays on CPU 0, one migrates, one
// is switched out. Region 1, nested in the first, is never counted.
var countedRecords = []Record{
	rec(Entry, 1, 0, 0, 1000, 0, 5, 100, 50, 100),
	rec(Entry, 1, 1, 2, 900, 0, 5, 102, 60, 102),
	rec(Exit, 1, 1, 4, 900, 0, 5, 104, 70, 104),
	rec(Exit, 1, 0, 10, 1000, 0, 5, 110, 150, 110),
	rec(Entry, 1, 0, 20, 1000, 0, 5, 120, 150, 120),
	rec(Exit, 1, 0, 30, 1000, 1, 9, 130, 999, 130),
	rec(Entry, 1, 0, 40, 1000, 1, 9, 140, 999, 140),
	rec(Exit, 1, 0, 50, 1000, 1, 11, 150, 1500, 150),
}

func TestAggregatorKeepsEachCallInReturnOrder(t *testing.T) {
	a := NewAggregator([]string{"f", "g"}, nil, Cost{}, 2, true)
	a.KeepCalls()
	for _, r := range countedRecords {
		a.Add(r)
	}
	calls := a.Calls()
	want := []struct {
		region        int
		startUS, usec float64
		migrated      bool
		switched      bool
		faults        int64 // -1: not counted
	}{
		{1, 2, 2, false, false, 10},
		{0, 0, 10, false, false, 100},
		{0, 20, 10, true, false, -1},
		{0, 40, 10, false, true, -1},
	}
	if len(calls) != len(want) {
		t.Fatalf("%d calls, want %d: %+v", len(calls), len(want), calls)
	}
	for i, w := range want {
		c := calls[i]
		if c.Region != w.region || !near(float64(c.Start)/1e3, w.startUS) || !near(c.Seconds, w.usec*1e-6) ||
			c.Migrated() != w.migrated || c.Switched != w.switched {
			t.Errorf("call %d: %+v, want %+v", i, c, w)
		}
		switch {
		case w.faults < 0 && c.Counts != nil:
			t.Errorf("call %d counted %+v: its counts include other work", i, c.Counts)
		case w.faults >= 0 && (len(c.Counts) != 1 || c.Counts[0].Raw != uint64(w.faults)):
			t.Errorf("call %d counted %+v, want %d faults and the guard left out", i, c.Counts, w.faults)
		}
	}
	if !calls[1].Outermost || !near(calls[1].SelfSeconds, 8e-6) {
		t.Errorf("f's first call: outermost %v self %g, want true and 8 us", calls[1].Outermost, calls[1].SelfSeconds)
	}
}

func TestSummarizeOfARegionsCallsIsItsStats(t *testing.T) {
	a := NewAggregator([]string{"f", "g"}, nil, Cost{}, 2, true)
	a.KeepCalls()
	for _, r := range countedRecords {
		a.Add(r)
	}
	var f []Call
	for _, c := range a.Calls() {
		if c.Region == 0 {
			f = append(f, c)
		}
	}
	whole := a.Stats()[0]
	for _, tt := range []struct {
		name  string
		calls []Call
		want  Stats
	}{
		{"all calls", f, whole},
		{"the counted call", f[:1], Stats{Name: "part", Calls: 1, Threads: 1, Seconds: 10e-6, MeasuredSeconds: 10e-6,
			SelfSeconds: 8e-6, Mean: 10e-6, MeasuredMean: 10e-6, Median: 10e-6, P99: 10e-6,
			Counts: []pmu.Count{{Raw: 100, Enabled: 10, Running: 10}}, CountedSeconds: 10e-6}},
		{"the uncounted calls", f[1:], Stats{Name: "part", Calls: 2, Migrated: 1, Switched: 1, Threads: 1, Seconds: 20e-6,
			MeasuredSeconds: 20e-6, SelfSeconds: 20e-6, Mean: 10e-6, MeasuredMean: 10e-6, Median: 10e-6, P99: 10e-6,
			Counts: []pmu.Count{{}}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := Summarize(tt.want.Name, Cost{}, 1, tt.calls)
			if got.Name != tt.want.Name || got.Calls != tt.want.Calls || got.Migrated != tt.want.Migrated ||
				got.Switched != tt.want.Switched || got.Threads != tt.want.Threads || !near(got.Seconds, tt.want.Seconds) ||
				!near(got.SelfSeconds, tt.want.SelfSeconds) || !near(got.Mean, tt.want.Mean) || !near(got.P99, tt.want.P99) ||
				!near(got.CountedSeconds, tt.want.CountedSeconds) || len(got.Counts) != 1 || got.Counts[0] != tt.want.Counts[0] {
				t.Errorf("got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestAggregatorPairsLikwidMarkersByThreadAndTag(t *testing.T) {
	a := NewAggregator(nil, nil, Cost{}, 0, false)
	start := func(tid uint32, tag string, tUS float64) Record {
		r := rec(StartMarker, tid, MaxRegions, tUS, 0, 0)
		r.Tag = tag
		return r
	}
	stop := func(tid uint32, tag string, tUS float64) Record {
		r := rec(StopMarker, tid, MaxRegions, tUS, 0, 0)
		r.Tag = tag
		return r
	}
	for _, r := range []Record{
		start(1, "a", 0), start(2, "a", 1), start(1, "b", 2),
		stop(1, "a", 10), // overlapping regions close by tag, not by order
		stop(1, "b", 12), stop(2, "a", 21),
		start(1, "c", 30), // never stopped
	} {
		a.Add(r)
	}
	st := a.Stats()
	if len(st) != 3 || st[0].Name != "a" || st[1].Name != "b" || st[2].Name != "c" {
		t.Fatalf("regions %+v", st)
	}
	if st[0].Calls != 2 || st[0].Threads != 2 || !near(st[0].Seconds, 30e-6) {
		t.Errorf("a: %+v, want 2 calls on 2 threads, 30 us", st[0])
	}
	if st[1].Calls != 1 || !near(st[1].Seconds, 10e-6) || st[2].NeverLeft != 1 {
		t.Errorf("b: %+v; c: %+v", st[1], st[2])
	}
}

func TestDecodeRecordReadsTheProgramsLayout(t *testing.T) {
	b := make([]byte, recordSize(1, true))
	put := func(off int, v uint64, n int) {
		for i := range n {
			b[off+i] = byte(v >> (8 * i))
		}
	}
	put(offTime, 123456789, 8)
	put(offPidTgid, 42<<32|43, 8)
	put(offCookie, 3, 8)
	put(offSP, 0x7ffd0000, 8)
	put(offCPU, 1, 4)
	put(offKind, uint64(StartMarker), 4)
	put(offCounters, 1000, 8)
	put(offCounters+8, 20, 8)
	put(offCounters+16, 10, 8)
	copy(b[recordSize(1, false):], "tag\x00junk")
	r, err := DecodeRecord(b, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := Record{Time: 123456789, TGID: 42, TID: 43, Region: 3, SP: 0x7ffd0000, CPU: 1, Kind: StartMarker,
		Counts: []pmu.Count{{Raw: 1000, Enabled: 20, Running: 10}}, Tag: "tag"}
	if r.Time != want.Time || r.TGID != 42 || r.TID != 43 || r.Region != 3 || r.SP != want.SP || r.CPU != 1 ||
		r.Kind != StartMarker || r.Counts[0] != want.Counts[0] || r.Tag != "tag" {
		t.Errorf("got %+v, want %+v", r, want)
	}
	if _, err := DecodeRecord(b[:10], 1); err == nil {
		t.Error("a short record must fail")
	}
}
