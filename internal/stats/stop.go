package stats

import (
	"time"
)

// StopReason says which of seed 000's four stop conditions ended an
// evaluation loop.
type StopReason string

const (
	// StopMaxTime: the loop used its time budget (condition 1).
	StopMaxTime StopReason = "max-time"
	// StopMaxCount: the loop took its maximum number of samples
	// (condition 2; the only reason in --fixed mode).
	StopMaxCount StopReason = "max-count"
	// StopConverged: the interval's half-width fell within the relative
	// error of the estimate (condition 3).
	StopConverged StopReason = "converged"
	// StopBelowBest: the interval's upper bound fell below the best
	// configuration so far, so this one cannot win (condition 4, mirrored
	// for maximising a rate).
	StopBelowBest StopReason = "below-best"
)

// StopRule holds the thresholds of the four stop conditions for one loop.
// Zero fields switch a condition off; a rule with only MaxCount set is a
// fixed-size sample.
type StopRule struct {
	// MaxTime bounds the loop's accumulated measured time (condition 1).
	MaxTime time.Duration
	// MaxCount bounds the number of samples (condition 2).
	MaxCount int
	// Confidence is the two-sided level of the intervals, e.g. 0.99.
	Confidence float64
	// RelError stops the loop once the interval's half-width is within
	// this fraction of the estimate (condition 3), e.g. 0.01.
	RelError float64
	// MinCount is the fewest samples before condition 3 may stop the loop
	// (at least 2).
	MinCount int
	// BestMinCount is the fewest samples before condition 4 may stop the
	// loop; 0 switches condition 4 off. Seed 000 uses 2 and raises it when
	// configurations speed up late.
	BestMinCount int
	// Method summarises the sample (default DefaultMethod).
	Method Method
}

// Fixed is the rule of a fixed-size sample of n observations.
func Fixed(n int, confidence float64, m Method) StopRule {
	return StopRule{MaxCount: n, Confidence: confidence, Method: m}
}

func (r StopRule) method() Method {
	if r.Method == "" {
		return DefaultMethod
	}
	return r.Method
}

func (r StopRule) confidence() float64 {
	if r.Confidence <= 0 || r.Confidence >= 1 {
		return 0.99
	}
	return r.Confidence
}

// Check decides whether a loop that has est (over its samples so far) after
// elapsed measured time should stop, given the best estimate of earlier
// configurations (0 when there is none). The conditions that use the
// statistics are checked first, so a loop that converges on its last
// allowed sample reports "converged".
func (r StopRule) Check(est Estimate, elapsed time.Duration, best float64) (StopReason, bool) {
	if r.RelError > 0 && est.N >= max(r.MinCount, 2) && est.RelHalfWidth() <= r.RelError {
		return StopConverged, true
	}
	if r.BestMinCount > 0 && best > 0 && est.N >= r.BestMinCount && est.Hi < best {
		return StopBelowBest, true
	}
	if r.MaxCount > 0 && est.N >= r.MaxCount {
		return StopMaxCount, true
	}
	if r.MaxTime > 0 && elapsed >= r.MaxTime {
		return StopMaxTime, true
	}
	return "", false
}
