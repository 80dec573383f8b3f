package measure

import (
	"github.com/rprof/rprof/pmu"
	"github.com/rprof/rprof/roofline"
)

// flow is one level's traffic in bytes: read, written, and in all
// ("total"-direction counters count in total only).
type flow struct {
	read, write, total float64
	hasRead, hasWrite  bool
}

func (f flow) minus(o flow) flow {
	f.read -= o.read
	f.write -= o.write
	f.total -= o.total
	return f
}

// tally is W, Q and the events of one run (or the difference of two).
type tally struct {
	seconds float64
	// hasWork says W was counted.
	hasWork bool
	work    float64
	workBy  map[string]float64
	// traffic is Q by level (roofline.LevelDRAM...), for each level counted.
	traffic map[string]flow
	// workUnknown and trafficUnknown say a counter of W or of Q never ran
	// (a run cut short before it was counted, a counter never scheduled):
	// the sum is unknown, not the others' alone.
	workUnknown, trafficUnknown bool
	// events are the KindEvent counters' multiplex-scaled counts, in
	// counter order.
	events []float64
}

// dram is the DRAM level's traffic, Q, and whether it was counted.
func (t tally) dram() (flow, bool) {
	f, ok := t.traffic[roofline.LevelDRAM]
	return f, ok
}

// tallyOf computes W = Σ count x FLOPs/count (split by precision) and each
// level's traffic Σ count x bytes/count over every counter (for DRAM, every
// memory-controller box and socket), with each count scaled for
// multiplexing.
func tallyOf(counters []Counter, o Outcome) tally {
	t := tally{seconds: o.Wall.Seconds()}
	for i, c := range counters {
		v := o.Counts[i].Value()
		never := o.Counts[i].Running == 0
		switch c.Kind {
		case KindWork:
			t.workUnknown = t.workUnknown || never
			f := v * c.Weight
			if !t.hasWork {
				t.hasWork, t.workBy = true, map[string]float64{}
			}
			t.work += f
			if c.Precision != "" {
				t.workBy[c.Precision] += f
			}
		case KindTraffic:
			t.trafficUnknown = t.trafficUnknown || never
			b := v * c.Weight
			if t.traffic == nil {
				t.traffic = map[string]flow{}
			}
			f := t.traffic[c.Level]
			f.total += b
			switch c.Direction {
			case pmu.Read:
				f.hasRead = true
				f.read += b
			case pmu.Write:
				f.hasWrite = true
				f.write += b
			}
			t.traffic[c.Level] = f
		case KindEvent:
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
	d.workUnknown = t.workUnknown || o.workUnknown
	d.trafficUnknown = t.trafficUnknown || o.trafficUnknown
	if t.workBy != nil {
		d.workBy = map[string]float64{}
		for k, v := range t.workBy {
			d.workBy[k] = v - o.workBy[k]
		}
	}
	if t.traffic != nil {
		d.traffic = map[string]flow{}
		for l, f := range t.traffic {
			d.traffic[l] = f.minus(o.traffic[l])
		}
	}
	d.events = make([]float64, len(t.events))
	for i := range t.events {
		d.events[i] = t.events[i] - o.events[i]
	}
	return d
}

// lessIdle subtracts the idle rate of each background level times t's
// duration.
func (t tally) lessIdle(idle tally) tally {
	if t.traffic == nil || idle.traffic == nil {
		return t
	}
	f := t.seconds / idle.seconds
	d := t
	d.traffic = map[string]flow{}
	for l, fl := range t.traffic {
		if il, ok := idle.traffic[l]; ok {
			fl = fl.minus(flow{read: il.read * f, write: il.write * f, total: il.total * f})
		}
		d.traffic[l] = fl
	}
	return d
}
