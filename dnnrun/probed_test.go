package dnnrun

import (
	"context"
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/rprof/rprof/dnn"
)

func TestAgreementFindsCallsShorterThanTheirExecution(t *testing.T) {
	g := &dnn.Group{Millis: []float64{1, 0.010, 100}}
	for _, tt := range []struct {
		name    string
		secs    []float64
		cost    float64
		short   int
		medDiff float64
	}{
		{"every window encloses oneDNN's", []float64{1.05e-3, 0.012e-3, 100.1e-3}, 0, 0, 50e-6},
		// 100 ms is printed as 100 (6 digits): 0.5 µs of rounding on top
		// of the clock's 2 µs.
		{"within the verbose clock's resolution", []float64{0.998e-3, 0.008e-3, 99.998e-3}, 0, 0, -2e-6},
		{"the probe cost added back", []float64{0.995e-3, 0.005e-3, 99.995e-3}, 5e-6, 0, -5e-6},
		{"a call joined to a longer execution", []float64{0.010e-3, 1e-3, 100e-3}, 0, 1, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g.Counts = nil
			for i := range tt.secs {
				g.Counts = append(g.Counts, dnn.CallCount{Seconds: &tt.secs[i]})
			}
			a := AgreementOf([]*dnn.Group{g}, tt.cost)
			if a.Calls != 3 || a.Short != tt.short || math.Abs(a.Diffs[1]-tt.medDiff) > 1e-12 {
				t.Errorf("calls %d short %d diffs %v; want 3, %d, median %g", a.Calls, a.Short, a.Diffs, tt.short, tt.medDiff)
			}
		})
	}
}

func TestRunRefusesOptionsItCannotRun(t *testing.T) {
	ok := Options{Command: []string{"true"}, Confidence: 0.95}
	with := func(f func(*Options)) Options { o := ok; f(&o); return o }
	for _, tt := range []struct {
		o     Options
		field string
	}{
		{Options{Confidence: 0.95}, "Command"},
		{with(func(o *Options) { o.Count = "perf" }), "Count"},
		{with(func(o *Options) { o.Events, o.Count = []string{"page-faults"}, CountEmulate }), "Events"},
		{with(func(o *Options) { o.Confidence = 0 }), "Confidence"},
		{with(func(o *Options) { o.Threads = -1 }), "Threads"},
	} {
		var oe *OptionError
		_, err := Run(context.Background(), tt.o)
		if !errors.Is(err, ErrInvalidOptions) || !errors.As(err, &oe) || !slices.Equal(oe.Fields, []string{tt.field}) {
			t.Errorf("%+v: %v, want an *OptionError naming %s", tt.o, err, tt.field)
		}
	}
	if err := with(func(o *Options) { o.Events, o.Count = []string{"page-faults"}, CountPMU }).Validate(); err != nil {
		t.Errorf("events with the pmu mode: %v", err)
	}
}
