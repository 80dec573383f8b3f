package measure

import (
	"time"

	"github.com/rprof/rprof/pmu"
)

// Kinds of counters a run opens.
type kind int

const (
	kindWork    kind = iota // FP work: weight is FLOPs per count
	kindTraffic             // DRAM traffic: weight is bytes per count
	kindUser                // an -e event: reported, not weighed
)

// counterSpec is one counter of a run with what its count means.
type counterSpec struct {
	event pmu.Event
	kind  kind
	// weight is FLOPs (work) or bytes (traffic) per count.
	weight float64
	// class is the precision of a work event or the direction of a traffic
	// event.
	class string
	// group is the per-process counter group the event is opened in, or -1
	// for a system-wide event.
	group int
}

// outcome is what one run of a command gave: counts parallel to the specs
// it was run with, wall time and how it ended.
type outcome struct {
	counts   []pmu.Count
	wall     time.Duration
	exit     int
	signal   string
	outlived []int // processes the target left running
}

// tally is W, Q and the user events of one run (or the difference of two).
type tally struct {
	seconds float64
	// hasWork, hasRead, hasWrite, hasTraffic say which figures were counted.
	hasWork, hasRead, hasWrite, hasTraffic bool
	work                                   float64
	workBy                                 map[string]float64
	read, write, traffic                   float64
	// events are the user events' multiplex-scaled counts, in spec order.
	events []float64
}

// tallyOf computes W = Σ count x FLOPs/count (split by precision) and
// Q = Σ count x bytes/count over every memory-controller box and socket
// (read, write and total; "total"-direction events count in Q only), with
// each count scaled for multiplexing.
func tallyOf(specs []counterSpec, o outcome) tally {
	t := tally{seconds: o.wall.Seconds()}
	for i, s := range specs {
		v := o.counts[i].Value()
		switch s.kind {
		case kindWork:
			f := v * s.weight
			if !t.hasWork {
				t.hasWork, t.workBy = true, map[string]float64{}
			}
			t.work += f
			if s.class != "" {
				t.workBy[s.class] += f
			}
		case kindTraffic:
			b := v * s.weight
			t.hasTraffic = true
			t.traffic += b
			switch s.class {
			case pmu.Read:
				t.hasRead = true
				t.read += b
			case pmu.Write:
				t.hasWrite = true
				t.write += b
			}
		case kindUser:
			t.events = append(t.events, v)
		}
	}
	return t
}

// minus returns t - o: the kernel run less its overhead run.
func (t tally) minus(o tally) tally {
	d := t
	d.seconds -= o.seconds
	d.work -= o.work
	d.read -= o.read
	d.write -= o.write
	d.traffic -= o.traffic
	if t.workBy != nil {
		d.workBy = map[string]float64{}
		for k, v := range t.workBy {
			d.workBy[k] = v - o.workBy[k]
		}
	}
	d.events = make([]float64, len(t.events))
	for i := range t.events {
		d.events[i] = t.events[i] - o.events[i]
	}
	return d
}
