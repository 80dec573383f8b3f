package stats

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"
)

// Method is how a sample is summarised into an estimate with a confidence
// interval.
type Method string

const (
	// MethodMean is the sample mean with a Student-t interval (normal from
	// NormalFrom observations): seed 000's rule, which assumes normality.
	MethodMean Method = "mean"
	// MethodMedian is the sample median with a distribution-free interval
	// from order statistics (binomial coverage).
	MethodMedian Method = "median"
	// MethodBootstrap is the sample median with a percentile bootstrap
	// interval (fixed resampling seed, so runs are reproducible).
	MethodBootstrap Method = "bootstrap"
)

// DefaultMethod is the summary rprof uses unless told otherwise. The choice
// and the evidence for it (coverage on samples recorded on a noisy machine)
// are in docs/roofs.md.
const DefaultMethod = MethodMedian

// ParseMethod turns a method name into a Method.
func ParseMethod(s string) (Method, error) {
	switch m := Method(s); m {
	case MethodMean, MethodMedian, MethodBootstrap:
		return m, nil
	}
	return "", fmt.Errorf("unknown method %q (want mean, median or bootstrap)", s)
}

// Estimate is a point estimate with its confidence interval [Lo, Hi]. With
// too few observations for the confidence asked, Lo is -Inf and Hi +Inf.
type Estimate struct {
	Value float64
	Lo    float64
	Hi    float64
	N     int
	// Min and Max are the sample's range.
	Min, Max float64
}

// Bounded reports whether the interval is finite.
func (e Estimate) Bounded() bool { return !math.IsInf(e.Lo, 0) && !math.IsInf(e.Hi, 0) }

// HalfWidth is half the interval's width (+Inf when unbounded).
func (e Estimate) HalfWidth() float64 { return (e.Hi - e.Lo) / 2 }

// RelHalfWidth is the half-width relative to the estimate (+Inf when
// unbounded or the estimate is zero).
func (e Estimate) RelHalfWidth() float64 {
	if e.Value == 0 {
		return math.Inf(1)
	}
	return e.HalfWidth() / math.Abs(e.Value)
}

func unbounded(v float64, n int) Estimate {
	return Estimate{Value: v, Lo: math.Inf(-1), Hi: math.Inf(1), N: n}
}

// IntervalName names the interval Estimate gives for n observations, as a
// point records it.
func (m Method) IntervalName(n int) string {
	switch m {
	case MethodMedian:
		return "order-statistic"
	case MethodBootstrap:
		return "bootstrap"
	}
	return CIMethod(n)
}

// Estimate estimates the centre of xs with method m at the given two-sided
// confidence (e.g. 0.99).
func (m Method) Estimate(xs []float64, confidence float64) Estimate {
	var e Estimate
	switch m {
	case MethodMedian:
		e = MedianCI(xs, confidence)
	case MethodBootstrap:
		e = BootstrapMedianCI(xs, confidence, bootstrapResamples)
	default:
		var w Welford
		for _, x := range xs {
			w.Add(x)
		}
		e = unbounded(w.Mean(), w.N())
		if w.N() >= 2 {
			e.Lo, e.Hi = w.MeanCI(confidence)
		}
	}
	if len(xs) > 0 {
		e.Min, e.Max = slices.Min(xs), slices.Max(xs)
	}
	return e
}

// MedianCI is the median of xs with the distribution-free interval
// [x(j), x(n+1-j)] between order statistics, where j is the largest rank
// whose binomial(n, 1/2) tail stays within (1-confidence)/2. It assumes only
// independent observations, not their distribution.
func MedianCI(xs []float64, confidence float64) Estimate {
	n := len(xs)
	if n == 0 {
		return unbounded(math.NaN(), 0)
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	med := Median(s)
	j := orderStatisticRank(n, confidence)
	if j < 1 {
		return unbounded(med, n)
	}
	return Estimate{Value: med, Lo: s[j-1], Hi: s[n-j], N: n}
}

// orderStatisticRank returns the largest j (1-based) with
// P(Binomial(n, 1/2) <= j-1) <= (1-confidence)/2, or 0 when even the sample
// extremes do not reach the confidence.
func orderStatisticRank(n int, confidence float64) int {
	alpha := (1 - confidence) / 2
	b := distuv.Binomial{N: float64(n), P: 0.5}
	j := 0
	for k := 1; k <= n/2; k++ {
		if b.CDF(float64(k-1)) > alpha {
			break
		}
		j = k
	}
	return j
}

// bootstrapResamples is the number of resamples of MethodBootstrap: enough
// for stable 1% tails at the sample sizes the stop rules see.
const bootstrapResamples = 1000

// BootstrapMedianCI is the median of xs with a percentile bootstrap interval
// from b resamples. The generator has a fixed seed so that one sample always
// gives one interval.
func BootstrapMedianCI(xs []float64, confidence float64, b int) Estimate {
	n := len(xs)
	if n < 2 {
		if n == 0 {
			return unbounded(math.NaN(), 0)
		}
		return unbounded(xs[0], n)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	meds := make([]float64, b)
	re := make([]float64, n)
	for i := range meds {
		for k := range re {
			re[k] = xs[rng.IntN(n)]
		}
		meds[i] = Median(re)
	}
	slices.Sort(meds)
	alpha := (1 - confidence) / 2
	lo := meds[int(math.Floor(alpha*float64(b-1)))]
	hi := meds[int(math.Ceil((1-alpha)*float64(b-1)))]
	return Estimate{Value: Median(xs), Lo: lo, Hi: hi, N: n}
}
