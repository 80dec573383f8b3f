// Package stats is the statistics engine shared by `rprof roofs` (early
// stopping of benchmark evaluations, seed 000) and `rprof run` (adaptive
// repetition): online mean and variance, confidence intervals and stop rules.
package stats

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// Welford accumulates the mean and variance of a sample online, in one pass
// and without catastrophic cancellation (Welford 1962).
type Welford struct {
	n    int
	mean float64
	m2   float64
}

// Add adds one observation.
func (w *Welford) Add(x float64) {
	w.n++
	d := x - w.mean
	w.mean += d / float64(w.n)
	w.m2 += d * (x - w.mean)
}

// N is the number of observations.
func (w *Welford) N() int { return w.n }

// Mean is the sample mean (0 with no observations).
func (w *Welford) Mean() float64 { return w.mean }

// Variance is the unbiased sample variance (NaN with fewer than two
// observations).
func (w *Welford) Variance() float64 {
	if w.n < 2 {
		return math.NaN()
	}
	return w.m2 / float64(w.n-1)
}

// StdDev is the sample standard deviation.
func (w *Welford) StdDev() float64 { return math.Sqrt(w.Variance()) }

// NormalFrom is the sample size from which intervals use the normal
// quantile instead of Student's t (seed 000 uses 30).
const NormalFrom = 30

// CriticalValue is the two-sided quantile for a mean of n observations at the
// given confidence: Student's t with n-1 degrees of freedom below NormalFrom,
// the standard normal from then on.
func CriticalValue(n int, confidence float64) float64 {
	p := 1 - (1-confidence)/2
	if n >= NormalFrom {
		return distuv.UnitNormal.Quantile(p)
	}
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n - 1)}.Quantile(p)
}

// HalfWidth is the half-width of the confidence interval of the mean (NaN
// with fewer than two observations).
func (w *Welford) HalfWidth(confidence float64) float64 {
	if w.n < 2 {
		return math.NaN()
	}
	return CriticalValue(w.n, confidence) * w.StdDev() / math.Sqrt(float64(w.n))
}

// MeanCI is the confidence interval of the mean.
func (w *Welford) MeanCI(confidence float64) (lo, hi float64) {
	h := w.HalfWidth(confidence)
	return w.mean - h, w.mean + h
}

// CIMethod names the interval method used for n observations.
func CIMethod(n int) string {
	if n >= NormalFrom {
		return "normal"
	}
	return "student-t"
}
