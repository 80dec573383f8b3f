package stats

import (
	"math"
	"testing"
)

func TestQuantileInterpolatesBetweenOrderStatistics(t *testing.T) {
	xs := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	for _, c := range []struct{ q, want float64 }{
		{0, 1}, {0.5, 5.5}, {0.99, 9.91}, {1, 10},
	} {
		if got := Quantile(xs, c.q); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("Quantile(1..10, %g) = %g, want %g", c.q, got, c.want)
		}
	}
	if got := Quantile([]float64{7}, 0.99); got != 7 {
		t.Errorf("one value: %g", got)
	}
	if !math.IsNaN(Quantile(nil, 0.5)) {
		t.Error("no values must give NaN")
	}
}
