package stats

import (
	"errors"
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/gonum/stat/distuv"
)

// Names of the two-sample tests, as shown in reports.
const (
	TestWelch       = "welch-t"
	TestMannWhitney = "mann-whitney-u"
)

// ErrTooFewSamples is returned when a sample is too small for a test.
var ErrTooFewSamples = errors.New("too few samples")

// Summary is what is left of a sample when only its summary was kept.
type Summary struct {
	N      int
	Mean   float64
	StdDev float64
}

// Summarize returns the summary of xs.
func Summarize(xs []float64) Summary {
	var w Welford
	for _, x := range xs {
		w.Add(x)
	}
	return Summary{N: w.N(), Mean: w.Mean(), StdDev: w.StdDev()}
}

// SummaryFromCI recovers the standard deviation of n observations from the
// confidence interval of their mean, inverting HalfWidth. It is how a
// comparison tests documents that kept only a mean and its interval.
func SummaryFromCI(mean, lo, hi float64, n int, confidence float64) (Summary, error) {
	if n < 2 {
		return Summary{}, fmt.Errorf("summary from interval: n=%d: %w", n, ErrTooFewSamples)
	}
	if !(hi >= lo) {
		return Summary{}, fmt.Errorf("summary from interval: [%g, %g] is not an interval", lo, hi)
	}
	half := (hi - lo) / 2
	sd := half * math.Sqrt(float64(n)) / CriticalValue(n, confidence)
	return Summary{N: n, Mean: mean, StdDev: sd}, nil
}

// Comparison is the result of a two-sample test of "b differs from a".
type Comparison struct {
	// Test names the test (TestWelch or TestMannWhitney).
	Test   string
	N1, N2 int
	// Base is a's centre: its mean for Welch's t, its median for
	// Mann-Whitney U. Delta is b's centre minus Base.
	Base  float64
	Delta float64
	// Lo and Hi bound Delta at the requested confidence (Welch's t only;
	// NaN for Mann-Whitney U, which gives no interval here).
	Lo, Hi float64
	// P is the two-sided p-value of "no difference".
	P float64
}

// Significant reports whether P is below alpha.
func (c Comparison) Significant(alpha float64) bool { return c.P < alpha }

// WelchT compares the means of a and b with Welch's unequal-variances t test
// and gives the confidence interval of the difference.
func WelchT(a, b []float64, confidence float64) (Comparison, error) {
	return WelchTSummary(Summarize(a), Summarize(b), confidence)
}

// WelchTSummary is WelchT on summaries, for documents that kept no samples.
func WelchTSummary(a, b Summary, confidence float64) (Comparison, error) {
	if a.N < 2 || b.N < 2 {
		return Comparison{}, fmt.Errorf("welch t test: n=%d and n=%d, need at least 2 each: %w", a.N, b.N, ErrTooFewSamples)
	}
	c := Comparison{Test: TestWelch, N1: a.N, N2: b.N, Base: a.Mean, Delta: b.Mean - a.Mean}
	va := a.StdDev * a.StdDev / float64(a.N)
	vb := b.StdDev * b.StdDev / float64(b.N)
	se := math.Sqrt(va + vb)
	if se == 0 {
		// Both samples are constant: they differ exactly when the means do.
		c.Lo, c.Hi = c.Delta, c.Delta
		c.P = 1
		if c.Delta != 0 {
			c.P = 0
		}
		return c, nil
	}
	// Welch-Satterthwaite degrees of freedom.
	df := (va + vb) * (va + vb) / (va*va/float64(a.N-1) + vb*vb/float64(b.N-1))
	t := c.Delta / se
	c.P = 2 * distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Survival(math.Abs(t))
	// CriticalValue takes a sample size; rounding df down makes the interval
	// slightly conservative and keeps the normal switch at the same place.
	half := CriticalValue(int(math.Floor(df))+1, confidence) * se
	c.Lo, c.Hi = c.Delta-half, c.Delta+half
	return c, nil
}

// exactMannWhitneyMax is the largest n1*n2 for which Mann-Whitney U uses the
// exact distribution when there are no ties; above it, and with ties, the
// normal approximation with tie and continuity corrections is used.
const exactMannWhitneyMax = 400

// MannWhitneyU compares a and b with the Mann-Whitney U (Wilcoxon rank-sum)
// test, which assumes nothing about the distributions: timing samples are
// often skewed by interference, where a t test is off.
func MannWhitneyU(a, b []float64) (Comparison, error) {
	n1, n2 := len(a), len(b)
	if n1 < 1 || n2 < 1 {
		return Comparison{}, fmt.Errorf("mann-whitney u test: n=%d and n=%d: %w", n1, n2, ErrTooFewSamples)
	}
	ma := Median(a)
	c := Comparison{Test: TestMannWhitney, N1: n1, N2: n2, Base: ma, Delta: Median(b) - ma, Lo: math.NaN(), Hi: math.NaN()}

	type obs struct {
		x     float64
		fromA bool
	}
	all := make([]obs, 0, n1+n2)
	for _, x := range a {
		all = append(all, obs{x, true})
	}
	for _, x := range b {
		all = append(all, obs{x, false})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].x < all[j].x })
	// Midranks; tieTerm accumulates sum(t^3 - t) over tie groups.
	var rankA, tieTerm float64
	ties := false
	for i := 0; i < len(all); {
		j := i
		for j < len(all) && all[j].x == all[i].x {
			j++
		}
		rank := float64(i+j+1) / 2 // ranks i+1..j averaged
		for k := i; k < j; k++ {
			if all[k].fromA {
				rankA += rank
			}
		}
		if t := float64(j - i); t > 1 {
			ties = true
			tieTerm += t*t*t - t
		}
		i = j
	}
	u1 := rankA - float64(n1*(n1+1))/2
	u := math.Min(u1, float64(n1*n2)-u1)

	if !ties && n1*n2 <= exactMannWhitneyMax {
		c.P = math.Min(1, 2*exactUCDF(n1, n2, int(u)))
		return c, nil
	}
	n := float64(n1 + n2)
	mean := float64(n1*n2) / 2
	variance := float64(n1*n2) / 12 * ((n + 1) - tieTerm/(n*(n-1)))
	if variance <= 0 {
		c.P = 1 // every value tied
		return c, nil
	}
	z := (math.Abs(u1-mean) - 0.5) / math.Sqrt(variance)
	if z < 0 {
		z = 0
	}
	c.P = math.Min(1, 2*distuv.UnitNormal.Survival(z))
	return c, nil
}

// exactUCDF is P(U <= u) under the null hypothesis for samples of n1 and n2
// without ties: the share of the C(n1+n2, n1) rank arrangements whose U is
// at most u, counted with the recurrence f(m, n, u) = f(m-1, n, u-n) +
// f(m, n-1, u).
func exactUCDF(n1, n2, u int) float64 {
	maxU := n1 * n2
	// f[m][n] is the count of arrangements by U value.
	f := make([][][]float64, n1+1)
	for m := 0; m <= n1; m++ {
		f[m] = make([][]float64, n2+1)
		for n := 0; n <= n2; n++ {
			f[m][n] = make([]float64, maxU+1)
			if m == 0 || n == 0 {
				f[m][n][0] = 1
				continue
			}
			for k := 0; k <= m*n; k++ {
				v := f[m][n-1][k]
				if k >= n {
					v += f[m-1][n][k-n]
				}
				f[m][n][k] = v
			}
		}
	}
	var below, total float64
	for k, cnt := range f[n1][n2] {
		total += cnt
		if k <= u {
			below += cnt
		}
	}
	return below / total
}

// Median is the sample median of xs (the mean of the middle two when
// their number is even); xs is not modified.
func Median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
