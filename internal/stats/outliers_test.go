package stats

import (
	"slices"
	"testing"
)

func TestOutliersUseTheMedianDeviationNotTheOutlierItself(t *testing.T) {
	tests := []struct {
		xs   []float64
		want []int
	}{
		{[]float64{1, 1.01, 0.99, 1.02, 0.98}, nil},
		{[]float64{1, 1.01, 0.99, 2, 0.98}, []int{3}},
		{[]float64{1, 1, 1, 1.5, 1}, []int{3}},
		{[]float64{1, 2}, nil},
		{nil, nil},
	}
	for _, tt := range tests {
		if got := Outliers(tt.xs); !slices.Equal(got, tt.want) {
			t.Errorf("Outliers(%v) = %v, want %v", tt.xs, got, tt.want)
		}
	}
}
