package stats

import (
	"math"
	"testing"
)

func TestMedianCIUsesBinomialOrderStatistics(t *testing.T) {
	seq := func(n int) []float64 {
		xs := make([]float64, n)
		for i := range xs {
			// Reversed so the function must sort.
			xs[i] = float64(n - i)
		}
		return xs
	}
	tests := []struct {
		name   string
		n      int
		conf   float64
		lo, hi float64 // 1-based ranks from standard tables, as values of seq
	}{
		{"n=5 at 95% is too few for any interval", 5, 0.95, math.Inf(-1), math.Inf(1)},
		{"n=6 at 95% spans the extremes", 6, 0.95, 1, 6},
		{"n=10 at 95% is x(2)..x(9)", 10, 0.95, 2, 9},
		{"n=20 at 99% is x(4)..x(17)", 20, 0.99, 4, 17},
		{"n=7 at 99% is too few", 7, 0.99, math.Inf(-1), math.Inf(1)},
		{"n=8 at 99% spans the extremes", 8, 0.99, 1, 8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := MedianCI(seq(tt.n), tt.conf)
			if e.Lo != tt.lo || e.Hi != tt.hi {
				t.Errorf("interval = [%v, %v], want [%v, %v]", e.Lo, e.Hi, tt.lo, tt.hi)
			}
			if want := float64(tt.n+1) / 2; e.Value != want {
				t.Errorf("median = %v, want %v", e.Value, want)
			}
		})
	}
}

func TestEstimateByMethod(t *testing.T) {
	// A sample with one slow outlier, as noise on a shared machine gives.
	xs := []float64{100, 101, 99, 100, 102, 98, 100, 101, 99, 40}
	tests := []struct {
		m         Method
		wantValue float64
	}{
		{MethodMean, 94},
		{MethodMedian, 100},
		{MethodBootstrap, 100},
	}
	for _, tt := range tests {
		t.Run(string(tt.m), func(t *testing.T) {
			e := tt.m.Estimate(xs, 0.95)
			if math.Abs(e.Value-tt.wantValue) > 1e-9 {
				t.Errorf("value = %v, want %v", e.Value, tt.wantValue)
			}
			if !(e.Lo <= e.Value && e.Value <= e.Hi) {
				t.Errorf("interval [%v, %v] does not hold the estimate %v", e.Lo, e.Hi, e.Value)
			}
			if e.N != len(xs) {
				t.Errorf("n = %d, want %d", e.N, len(xs))
			}
		})
	}
}

func TestOutlierWidensMeanIntervalMoreThanMedianInterval(t *testing.T) {
	xs := []float64{100, 101, 99, 100, 102, 98, 100, 101, 99, 100, 101, 99, 100, 100, 40}
	mean := MethodMean.Estimate(xs, 0.95)
	med := MethodMedian.Estimate(xs, 0.95)
	if mean.RelHalfWidth() <= med.RelHalfWidth() {
		t.Errorf("mean half-width %.3f <= median half-width %.3f; one outlier should widen the mean's", mean.RelHalfWidth(), med.RelHalfWidth())
	}
}

func TestBootstrapIsReproducible(t *testing.T) {
	xs := []float64{3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9}
	a := BootstrapMedianCI(xs, 0.95, 500)
	b := BootstrapMedianCI(xs, 0.95, 500)
	if a != b {
		t.Errorf("two runs differ: %+v and %+v", a, b)
	}
}

func TestParseMethodRejectsUnknownNames(t *testing.T) {
	for _, s := range []string{"mean", "median", "bootstrap"} {
		if _, err := ParseMethod(s); err != nil {
			t.Errorf("ParseMethod(%q): %v", s, err)
		}
	}
	if _, err := ParseMethod("mode"); err == nil {
		t.Error("ParseMethod(\"mode\") succeeded")
	}
}
