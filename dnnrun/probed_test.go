package dnnrun

import (
	"context"
	"errors"
	"math"
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
	for _, o := range []Options{{}, {Command: []string{"true"}, Count: "perf"}} {
		if _, err := Run(context.Background(), o); !errors.Is(err, ErrInvalidOptions) {
			t.Errorf("%+v: %v, want ErrInvalidOptions", o, err)
		}
	}
}
