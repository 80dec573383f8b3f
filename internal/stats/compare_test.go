package stats

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

func TestWelchTMatchesReferenceValues(t *testing.T) {
	tests := []struct {
		name      string
		a, b      []float64
		wantDelta float64
		wantP     float64 // reference: numerical integration of the t density
		tol       float64
	}{
		{"unequal variances", []float64{1, 2, 3, 4, 5}, []float64{2, 4, 6, 8, 10}, 3, 0.10753, 1e-4},
		{"order does not matter", []float64{2, 4, 6, 8, 10}, []float64{1, 2, 3, 4, 5}, -3, 0.10753, 1e-4},
		{"identical constant samples", []float64{7, 7, 7}, []float64{7, 7}, 0, 1, 0},
		{"distinct constant samples", []float64{7, 7, 7}, []float64{8, 8}, 1, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := WelchT(tt.a, tt.b, 0.95)
			if err != nil {
				t.Fatal(err)
			}
			if c.Test != TestWelch || c.N1 != len(tt.a) || c.N2 != len(tt.b) {
				t.Errorf("got test %q n=%d+%d", c.Test, c.N1, c.N2)
			}
			if math.Abs(c.Delta-tt.wantDelta) > 1e-12 {
				t.Errorf("delta = %v, want %v", c.Delta, tt.wantDelta)
			}
			if math.Abs(c.P-tt.wantP) > tt.tol {
				t.Errorf("p = %.5f, want %.5f", c.P, tt.wantP)
			}
			if !(c.Lo <= c.Delta && c.Delta <= c.Hi) {
				t.Errorf("interval [%v, %v] does not hold delta %v", c.Lo, c.Hi, c.Delta)
			}
		})
	}
}

func TestWelchIntervalExcludesZeroExactlyWhenSignificant(t *testing.T) {
	a := []float64{1.00, 1.01, 0.99, 1.02, 0.98, 1.00}
	for _, shift := range []float64{0.005, 0.01, 0.02, 0.05} {
		b := make([]float64, len(a))
		for i, x := range a {
			b[i] = x + shift + 0.003*float64(i%3)
		}
		c, err := WelchT(a, b, 0.95)
		if err != nil {
			t.Fatal(err)
		}
		// The interval uses df rounded down, so it may only be wider.
		if c.Significant(0.05) && c.Lo <= 0 {
			t.Errorf("shift %v: p=%.4f but interval [%v, %v] holds 0", shift, c.P, c.Lo, c.Hi)
		}
		if !c.Significant(0.05) && c.Lo > 0 {
			t.Errorf("shift %v: p=%.4f but interval [%v, %v] excludes 0", shift, c.P, c.Lo, c.Hi)
		}
	}
}

func TestWelchTSummaryFromIntervalMatchesSamples(t *testing.T) {
	a := []float64{10, 11, 9, 10.5, 9.5}
	b := []float64{10.8, 11.5, 10.2, 11.1, 10.9, 11.4}
	want, err := WelchT(a, b, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	summary := func(xs []float64) Summary {
		var w Welford
		for _, x := range xs {
			w.Add(x)
		}
		lo, hi := w.MeanCI(0.95)
		s, err := SummaryFromCI(w.Mean(), lo, hi, w.N(), 0.95)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	got, err := WelchTSummary(summary(a), summary(b), 0.95)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(got.P-want.P) > 1e-9 || math.Abs(got.Lo-want.Lo) > 1e-9 {
		t.Errorf("from intervals p=%v lo=%v, from samples p=%v lo=%v", got.P, got.Lo, want.P, want.Lo)
	}
}

func TestTestsRefuseTooFewSamples(t *testing.T) {
	if _, err := WelchT([]float64{1}, []float64{1, 2}, 0.95); !errors.Is(err, ErrTooFewSamples) {
		t.Errorf("welch with n=1: err = %v, want ErrTooFewSamples", err)
	}
	if _, err := MannWhitneyU(nil, []float64{1}); !errors.Is(err, ErrTooFewSamples) {
		t.Errorf("mann-whitney with n=0: err = %v, want ErrTooFewSamples", err)
	}
	if _, err := SummaryFromCI(1, 0, 2, 1, 0.95); !errors.Is(err, ErrTooFewSamples) {
		t.Errorf("summary from interval with n=1: err = %v, want ErrTooFewSamples", err)
	}
}

func TestMannWhitneyUExactValues(t *testing.T) {
	tests := []struct {
		name  string
		a, b  []float64
		wantP float64 // by counting arrangements: 2*k/C(n1+n2, n1)
	}{
		{"3+3 fully separated", []float64{1, 2, 3}, []float64{4, 5, 6}, 2.0 / 20},
		{"5+5 fully separated", []float64{1, 2, 3, 4, 5}, []float64{6, 7, 8, 9, 10}, 2.0 / 252},
		// One inversion: U=1, P(U<=1) = 2/252.
		{"5+5 one swap", []float64{1, 2, 3, 4, 6}, []float64{5, 7, 8, 9, 10}, 4.0 / 252},
		{"interleaved", []float64{1, 4, 5, 8}, []float64{2, 3, 6, 7}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := MannWhitneyU(tt.a, tt.b)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(c.P-tt.wantP) > 1e-12 {
				t.Errorf("p = %v, want %v", c.P, tt.wantP)
			}
		})
	}
}

func TestMannWhitneyUNormalApproximationAgreesWithExact(t *testing.T) {
	// 21+21 is above the exact limit; compare with the exact tail directly.
	var a, b []float64
	for i := 0; i < 21; i++ {
		a = append(a, float64(2*i))
		b = append(b, float64(2*i)+1+float64(i%4)*4) // b mostly larger
	}
	c, err := MannWhitneyU(a, b)
	if err != nil {
		t.Fatal(err)
	}
	// Recompute U for the exact tail.
	u := 0
	for _, x := range a {
		for _, y := range b {
			if x > y {
				u++
			}
		}
	}
	exact := 2 * exactUCDF(21, 21, u)
	if math.Abs(c.P-exact) > 0.01 {
		t.Errorf("normal approximation p = %.4f, exact p = %.4f", c.P, exact)
	}
}

func TestMannWhitneyUAllTiedIsNotSignificant(t *testing.T) {
	c, err := MannWhitneyU([]float64{3, 3, 3}, []float64{3, 3, 3, 3})
	if err != nil {
		t.Fatal(err)
	}
	if c.P != 1 || c.Delta != 0 {
		t.Errorf("all tied: p=%v delta=%v, want 1 and 0", c.P, c.Delta)
	}
}

// TestTestsHoldTheirSignificanceLevel draws both samples from one
// distribution many times: a test at level 0.05 must call about 5% of the
// pairs significant. Normal samples suit Welch's t; Mann-Whitney U, being
// discrete at these sizes, may only be below its level.
func TestTestsHoldTheirSignificanceLevel(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const trials, n = 2000, 8
	draw := func() []float64 {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = 1 + 0.05*rng.NormFloat64()
		}
		return xs
	}
	var welch, mw int
	for range trials {
		a, b := draw(), draw()
		if c, err := WelchT(a, b, 0.95); err == nil && c.Significant(0.05) {
			welch++
		}
		if c, err := MannWhitneyU(a, b); err == nil && c.Significant(0.05) {
			mw++
		}
	}
	// 2000 trials at p=0.05: mean 100, standard deviation about 9.7.
	if welch < 70 || welch > 130 {
		t.Errorf("welch t called %d of %d same-distribution pairs significant, want about 100", welch, trials)
	}
	if mw > 130 {
		t.Errorf("mann-whitney u called %d of %d same-distribution pairs significant, want at most about 100", mw, trials)
	}
}
