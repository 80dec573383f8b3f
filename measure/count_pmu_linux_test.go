package measure

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/rprof/rprof/internal/launch"
	"github.com/rprof/rprof/internal/testutil"
	"github.com/rprof/rprof/pmu"
)

// The idle baseline's counting path, with a system-wide software event in
// place of the memory controllers this machine may lack: cpu-clock on CPU 0
// counts about the baseline's duration, in spec order.
func TestCountIdleCountsSystemWideEventsForTheDuration(t *testing.T) {
	ev := pmu.Event{Name: "cpu-clock", PMU: "software", Attr: pmu.Attr{Type: 1, Config: 0}, CPUs: []int{0}}
	testutil.SkipUnlessHardware(t, pmu.Probe(ev), pmu.ErrPermission)
	const d = 100 * time.Millisecond
	o, err := countIdle(context.Background(), []counterSpec{{event: ev, kind: KindTraffic, weight: 1, class: pmu.Total, group: -1}}, d)
	if err != nil {
		t.Fatal(err)
	}
	if o.Wall < d || o.Wall > 5*d {
		t.Errorf("wall = %v, want about %v", o.Wall, d)
	}
	if got := time.Duration(o.Counts[0].Value()); got < d*9/10 || got > o.Wall*11/10 {
		t.Errorf("cpu-clock on CPU 0 = %v over %v, want about the wall time", got, o.Wall)
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

// countPMU opens per-process groups in group order and system-wide
// events apart, and must put every reading back at its spec's position.
func TestCountPMUPutsReadingsBackInSpecOrder(t *testing.T) {
	faults := pmu.Event{Name: "page-faults", PMU: "software", Attr: pmu.Attr{Type: 1, Config: 2}}
	clock := pmu.Event{Name: "task-clock", PMU: "software", Attr: pmu.Attr{Type: 1, Config: 1}}
	cpu0 := pmu.Event{Name: "cpu-clock", PMU: "software", Attr: pmu.Attr{Type: 1, Config: 0}, CPUs: []int{0}}
	specs := []counterSpec{
		{event: faults, kind: KindEvent, group: 1},
		{event: cpu0, kind: KindEvent, group: -1},
		{event: clock, kind: KindWork, weight: 1, group: 0},
	}
	// In user mode only too, as after a paranoid refusal.
	for _, userOnly := range []bool{false, true} {
		o, err := countPMU(context.Background(), launch.Spec{Argv: []string{"true"}}, specs, userOnly)
		testutil.SkipUnlessHardware(t, err, pmu.ErrPermission)
		if o.ExitCode != 0 || len(o.Counts) != 3 {
			t.Fatalf("exit %d, %d counts", o.ExitCode, len(o.Counts))
		}
		// true takes well under a second but many microseconds of CPU, and
		// faults in far fewer pages than it runs nanoseconds.
		faultN, cpuNs, taskNs := o.Counts[0].Value(), o.Counts[1].Value(), o.Counts[2].Value()
		if !(faultN > 0 && faultN < 10000) {
			t.Errorf("user only %v: page-faults = %v: not a page-fault count", userOnly, faultN)
		}
		if !(taskNs > 10000 && taskNs <= float64(o.Wall)) {
			t.Errorf("user only %v: task-clock = %v ns in %v: not the target's CPU time", userOnly, taskNs, o.Wall)
		}
		if !(cpuNs > 0.5*float64(o.Wall) && cpuNs < 2*float64(o.Wall)) {
			t.Errorf("user only %v: system-wide cpu-clock on CPU 0 = %v ns in %v: not the wall time", userOnly, cpuNs, o.Wall)
		}
	}
}
