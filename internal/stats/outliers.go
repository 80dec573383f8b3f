package stats

import "math"

// OutlierScore is the modified z-score (0.6745 × distance from the median
// / median absolute deviation, Iglewicz and Hoaglin) beyond which Outliers
// counts a value far from the others; it stays sound with 3 to 5 values,
// where a mean and standard deviation are pulled by the very value in
// question.
const OutlierScore = 3.5

// Outliers is the indices of xs whose modified z-score exceeds
// OutlierScore, in order; when most values equal the median (no deviation
// to scale by), every value that differs from it. Nil for fewer than 3
// values.
func Outliers(xs []float64) []int {
	if len(xs) < 3 {
		return nil
	}
	m := Median(xs)
	dev := make([]float64, len(xs))
	for i, x := range xs {
		dev[i] = math.Abs(x - m)
	}
	mad := Median(dev)
	var far []int
	for i, d := range dev {
		if (mad == 0 && d > 0) || (mad > 0 && 0.6745*d/mad > OutlierScore) {
			far = append(far, i)
		}
	}
	return far
}
