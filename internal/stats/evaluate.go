package stats

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
)

// Inner is the outcome of one invocation's iteration loop.
type Inner struct {
	// Samples are the measured values (rates), in order.
	Samples  []float64     `json:"samples"`
	Elapsed  time.Duration `json:"elapsed_ns"`
	Reason   StopReason    `json:"reason"`
	Estimate Estimate      `json:"-"`
}

// SampleFunc measures once: the value (a rate) and the time it took.
type SampleFunc func() (value float64, took time.Duration, err error)

// Iterate is the inner iteration loop of seed 000: it calls sample until
// rule stops it, and summarises the samples with rule's method.
func Iterate(ctx context.Context, rule StopRule, best float64, sample SampleFunc) (Inner, error) {
	if rule.MaxCount <= 0 && rule.MaxTime <= 0 && rule.RelError <= 0 {
		return Inner{}, errors.New("iterate: stop rule has no condition that ends the loop")
	}
	var in Inner
	for {
		if err := ctx.Err(); err != nil {
			return in, err
		}
		v, took, err := sample()
		if err != nil {
			return in, err
		}
		in.Samples = append(in.Samples, v)
		in.Elapsed += took
		in.Estimate = rule.method().Estimate(in.Samples, rule.confidence())
		if reason, stop := rule.Check(in.Estimate, in.Elapsed, best); stop {
			in.Reason = reason
			return in, nil
		}
	}
}

// Evaluator runs one configuration: an outer invocation loop whose every
// invocation runs an inner iteration loop (seed 000, Fig. 2).
type Evaluator struct {
	Inner StopRule
	// Outer is applied to the invocations' estimates; MaxCount is the
	// number of invocations. A zero Outer means one invocation.
	Outer StopRule
}

// Result is the outcome of evaluating one configuration.
type Result struct {
	Estimate    Estimate
	Method      Method
	Invocations int
	Iterations  int
	Elapsed     time.Duration
	// Reason is why the configuration's evaluation ended: the outer loop's
	// reason, or the inner one's with a single invocation or when the inner
	// loop found the configuration below the best.
	Reason StopReason
	// InnerReasons counts why each invocation's iteration loop ended.
	InnerReasons map[StopReason]int
}

// InvokeFunc runs one invocation with the given inner rule; it may run in
// another process.
type InvokeFunc func(ctx context.Context, inner StopRule, best float64) (Inner, error)

// Evaluate runs the outer loop. The estimate is over all samples of all
// invocations, with the interval of the inner method widened to the range
// of the invocations' own estimates, so that variation between processes
// shows even with too few invocations for an interval of their own. An
// invocation that finds the configuration below the best ends it: more
// invocations could not make it win.
func (e Evaluator) Evaluate(ctx context.Context, best float64, invoke InvokeFunc) (Result, error) {
	outer := e.Outer
	if outer.MaxCount <= 0 {
		outer.MaxCount = 1
	}
	var ins []Inner
	var res Result
	for {
		in, err := invoke(ctx, e.Inner, best)
		if err != nil {
			return res, err
		}
		if len(in.Samples) == 0 {
			return res, fmt.Errorf("invocation %d returned no samples", len(ins)+1)
		}
		ins = append(ins, in)
		res = e.Pool(ins)
		if outer.MaxCount == 1 || in.Reason == StopBelowBest {
			res.Reason = in.Reason
			return res, nil
		}
		// The outer rule counts invocations, not samples.
		counted := res.Estimate
		counted.N = res.Invocations
		if reason, stop := outer.Check(counted, res.Elapsed, best); stop {
			res.Reason = reason
			return res, nil
		}
	}
}

// Pool summarises invocations as Evaluate does: the estimate is over all
// their samples, with its interval widened to the range of the
// invocations' own estimates. Reason is left to the caller.
func (e Evaluator) Pool(ins []Inner) Result {
	m, conf := e.Inner.method(), e.Inner.confidence()
	res := Result{Method: m, InnerReasons: map[StopReason]int{}}
	var all, estimates []float64
	for _, in := range ins {
		res.Invocations++
		res.Iterations += len(in.Samples)
		res.Elapsed += in.Elapsed
		res.InnerReasons[in.Reason]++
		all = append(all, in.Samples...)
		estimates = append(estimates, m.Estimate(in.Samples, conf).Value)
	}
	res.Estimate = m.Estimate(all, conf)
	if len(estimates) > 1 {
		res.Estimate.Lo = min(res.Estimate.Lo, slices.Min(estimates))
		res.Estimate.Hi = max(res.Estimate.Hi, slices.Max(estimates))
	}
	return res
}

// Order is the order in which a search visits its configurations.
type Order int

const (
	// DefaultOrder leaves the order to the caller's default; Search
	// treats it as Forward.
	DefaultOrder Order = iota
	Forward
	Reverse
)

// Or is o, or def when o is DefaultOrder.
func (o Order) Or(def Order) Order {
	if o == DefaultOrder {
		return def
	}
	return o
}

// ParseOrder turns "forward" or "reverse" into an Order, and "" into
// DefaultOrder.
func ParseOrder(s string) (Order, error) {
	switch s {
	case "":
		return DefaultOrder, nil
	case "forward":
		return Forward, nil
	case "reverse":
		return Reverse, nil
	}
	return 0, fmt.Errorf("unknown search order %q (want forward or reverse)", s)
}

// Tuned is the outcome of an exhaustive search.
type Tuned struct {
	// Best is the index of the configuration with the highest estimate.
	Best    int
	Results []Result
	// Skipped counts the configurations left unevaluated because eval
	// ended the search (ErrStopSearch); their Results are zero.
	Skipped int
}

// ErrStopSearch, returned by Search's eval before it measures anything,
// ends the search there: a caller's time budget is spent. The search keeps
// what it has, which must be at least one configuration.
var ErrStopSearch = errors.New("search stopped")

// Search evaluates configurations 0..n-1 in order, passing each the best
// estimate so far, and returns the one with the highest estimate (rates
// are maximised). Seed 000 found exhaustive search right for spaces this
// small.
func Search(ctx context.Context, n int, order Order, eval func(ctx context.Context, i int, best float64) (Result, error)) (Tuned, error) {
	t := Tuned{Best: -1, Results: make([]Result, n)}
	if n == 0 {
		return t, errors.New("search: no configurations")
	}
	best := 0.0
	for step := range n {
		i := step
		if order == Reverse {
			i = n - 1 - step
		}
		r, err := eval(ctx, i, best)
		if errors.Is(err, ErrStopSearch) && t.Best >= 0 {
			t.Skipped = n - step
			return t, nil
		}
		if err != nil {
			return t, err
		}
		t.Results[i] = r
		if t.Best < 0 || r.Estimate.Value > best {
			t.Best, best = i, r.Estimate.Value
		}
	}
	return t, nil
}
