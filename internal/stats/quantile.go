package stats

import "math"

// Quantile is the q-quantile (0 <= q <= 1) of sorted values, interpolated
// linearly between the order statistics around rank q*(n-1) (Hyndman and
// Fan's type 7, the default of R and NumPy). NaN when sorted is empty.
func Quantile(sorted []float64, q float64) float64 {
	n := len(sorted)
	if n == 0 {
		return math.NaN()
	}
	h := q * float64(n-1)
	lo := int(math.Floor(h))
	if lo >= n-1 {
		return sorted[n-1]
	}
	return sorted[lo] + (h-float64(lo))*(sorted[lo+1]-sorted[lo])
}
