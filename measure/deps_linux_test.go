package measure

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/rprof/rprof/internal/testutil"
	"github.com/rprof/rprof/pmu"
)

// The idle baseline's counting path, with a system-wide software event in
// place of the memory controllers this machine may lack: cpu-clock on CPU 0
// counts about the baseline's duration, in spec order.
func TestCountIdleCountsSystemWideEventsForTheDuration(t *testing.T) {
	ev := pmu.Event{Name: "cpu-clock", PMU: "software", Attr: pmu.Attr{Type: 1, Config: 0}, CPUs: []int{0}}
	if err := pmu.Probe(ev); errors.Is(err, pmu.ErrPermission) {
		testutil.SkipUnlessHardware(t, err)
	}
	const d = 100 * time.Millisecond
	o, err := countIdle(context.Background(), []counterSpec{{event: ev, kind: kindTraffic, weight: 1, class: dirTotal, group: -1}}, d)
	if err != nil {
		t.Fatal(err)
	}
	if o.wall < d || o.wall > 5*d {
		t.Errorf("wall = %v, want about %v", o.wall, d)
	}
	if got := time.Duration(o.counts[0].Value()); got < d*9/10 || got > o.wall*11/10 {
		t.Errorf("cpu-clock on CPU 0 = %v over %v, want about the wall time", got, o.wall)
	}
}

func TestCountIdleStopsWhenCancelled(t *testing.T) {
	ev := pmu.Event{Name: "cpu-clock", PMU: "software", Attr: pmu.Attr{Type: 1, Config: 0}, CPUs: []int{0}}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	_, err := countIdle(ctx, []counterSpec{{event: ev, group: -1}}, time.Minute)
	if !errors.Is(err, context.Canceled) && !errors.Is(err, pmu.ErrPermission) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if time.Since(start) > 10*time.Second {
		t.Errorf("countIdle kept counting after cancellation")
	}
}
