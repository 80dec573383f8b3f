package stats

import (
	"math"
	"testing"
)

func TestWelfordMatchesTwoPassFormulas(t *testing.T) {
	tests := []struct {
		name string
		xs   []float64
	}{
		{"small integers", []float64{2, 4, 4, 4, 5, 5, 7, 9}},
		{"large offset keeps precision", []float64{1e9 + 4, 1e9 + 7, 1e9 + 13, 1e9 + 16}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var w Welford
			var sum float64
			for _, x := range tt.xs {
				w.Add(x)
				sum += x
			}
			mean := sum / float64(len(tt.xs))
			var ss float64
			for _, x := range tt.xs {
				ss += (x - mean) * (x - mean)
			}
			variance := ss / float64(len(tt.xs)-1)
			if math.Abs(w.Mean()-mean) > 1e-9*math.Abs(mean) {
				t.Errorf("mean = %v, want %v", w.Mean(), mean)
			}
			if math.Abs(w.Variance()-variance) > 1e-9*variance {
				t.Errorf("variance = %v, want %v", w.Variance(), variance)
			}
		})
	}
}

func TestCriticalValueUsesStudentTBelowThirtyAndNormalFrom(t *testing.T) {
	tests := []struct {
		n    int
		conf float64
		want float64 // from standard tables
	}{
		{2, 0.95, 12.706},
		{5, 0.95, 2.776},
		{10, 0.99, 3.250},
		{29, 0.95, 2.048},
		{30, 0.95, 1.960},
		{1000, 0.99, 2.576},
	}
	for _, tt := range tests {
		if got := CriticalValue(tt.n, tt.conf); math.Abs(got-tt.want) > 1e-3 {
			t.Errorf("CriticalValue(%d, %v) = %.4f, want %.3f", tt.n, tt.conf, got, tt.want)
		}
	}
}

func TestHalfWidthIsUndefinedBelowTwoSamples(t *testing.T) {
	var w Welford
	w.Add(1)
	if !math.IsNaN(w.HalfWidth(0.95)) {
		t.Fatalf("half-width with one sample = %v, want NaN", w.HalfWidth(0.95))
	}
}
