package stats

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"
)

func TestStopRuleCheck(t *testing.T) {
	tight := Estimate{Value: 100, Lo: 99.5, Hi: 100.5, N: 5}
	wide := Estimate{Value: 100, Lo: 80, Hi: 120, N: 5}
	rule := StopRule{MaxTime: time.Second, MaxCount: 10, RelError: 0.01, MinCount: 3, BestMinCount: 2}
	tests := []struct {
		name    string
		rule    StopRule
		est     Estimate
		elapsed time.Duration
		best    float64
		want    StopReason
	}{
		{"tight interval converges", rule, tight, 0, 0, StopConverged},
		{"converged needs MinCount samples", rule, Estimate{Value: 100, Lo: 99.9, Hi: 100.1, N: 2}, 0, 0, ""},
		{"wide interval keeps going", rule, wide, 0, 0, ""},
		{"upper bound below best stops", rule, wide, 0, 121, StopBelowBest},
		{"upper bound above best keeps going", rule, wide, 0, 119, ""},
		{"below best needs BestMinCount", StopRule{MaxCount: 10, BestMinCount: 6}, wide, 0, 200, ""},
		{"no best means no comparison", rule, Estimate{Value: 1, Lo: -1, Hi: 3, N: 5}, 0, 0, ""},
		{"count cap", rule, Estimate{Value: 100, Lo: 0, Hi: 200, N: 10}, 0, 0, StopMaxCount},
		{"time cap", rule, wide, time.Second, 0, StopMaxTime},
		{"unbounded interval never converges", rule, Estimate{Value: 1, Lo: math.Inf(-1), Hi: math.Inf(1), N: 5}, 0, 0, ""},
		{"fixed rule stops only at its count", Fixed(5, 0.99, MethodMedian), tight, time.Hour, 1000, StopMaxCount},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, stop := tt.rule.Check(tt.est, tt.elapsed, tt.best)
			if got != tt.want || stop != (tt.want != "") {
				t.Errorf("Check = %q, %v; want %q", got, stop, tt.want)
			}
		})
	}
}

// replay returns a SampleFunc that yields xs in order, each taking 1 ms.
func replay(xs []float64) SampleFunc {
	i := 0
	return func() (float64, time.Duration, error) {
		if i >= len(xs) {
			return 0, 0, errors.New("replay exhausted")
		}
		i++
		return xs[i-1], time.Millisecond, nil
	}
}

func TestIterateStopsAsSoonAsARuleAllows(t *testing.T) {
	steady := []float64{100, 100.2, 99.9, 100.1, 100, 99.8, 100.1, 100, 100.2, 99.9, 100, 100.1, 99.9, 100, 100.1, 100}
	noisy := []float64{100, 60, 120, 70, 110, 50, 130, 90, 100, 60, 120, 70, 110, 50, 130, 90}
	tests := []struct {
		name      string
		rule      StopRule
		xs        []float64
		best      float64
		wantN     int
		wantWhy   StopReason
		wantValue float64
	}{
		{"steady mean converges early", StopRule{MaxCount: 16, RelError: 0.01, Confidence: 0.99, MinCount: 3, Method: MethodMean}, steady, 0, 3, StopConverged, 100.03333333333333},
		{"noisy sample runs to the count cap", StopRule{MaxCount: 16, RelError: 0.01, Confidence: 0.99, MinCount: 3, Method: MethodMean}, noisy, 0, 16, StopMaxCount, 91.25},
		{"noisy sample below a far better best stops at BestMinCount", StopRule{MaxCount: 16, RelError: 0.01, Confidence: 0.95, BestMinCount: 3, Method: MethodMean}, noisy, 1000, 3, StopBelowBest, 93.33333333333333},
		{"time cap at 5 ms", StopRule{MaxTime: 5 * time.Millisecond, Method: MethodMedian}, noisy, 0, 5, StopMaxTime, 100},
		{"fixed sample", Fixed(8, 0.99, MethodMedian), steady, 1e9, 8, StopMaxCount, 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, err := Iterate(context.Background(), tt.rule, tt.best, replay(tt.xs))
			if err != nil {
				t.Fatal(err)
			}
			if len(in.Samples) != tt.wantN || in.Reason != tt.wantWhy {
				t.Errorf("stopped after %d samples (%s), want %d (%s)", len(in.Samples), in.Reason, tt.wantN, tt.wantWhy)
			}
			if math.Abs(in.Estimate.Value-tt.wantValue) > 1e-9 {
				t.Errorf("estimate = %v, want %v", in.Estimate.Value, tt.wantValue)
			}
			if want := time.Duration(tt.wantN) * time.Millisecond; in.Elapsed != want {
				t.Errorf("elapsed = %v, want %v", in.Elapsed, want)
			}
		})
	}
}

func TestIterateRejectsARuleThatNeverStops(t *testing.T) {
	if _, err := Iterate(context.Background(), StopRule{}, 0, replay([]float64{1})); err == nil {
		t.Error("Iterate with an empty rule succeeded")
	}
}

func TestIterateStopsOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Iterate(ctx, Fixed(3, 0.99, MethodMedian), 0, replay([]float64{1, 2, 3})); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

func TestEvaluateRunsTheOuterLoopOverInvocations(t *testing.T) {
	// Each invocation returns a constant sample at its own level, as
	// separate processes do when their state (placement, page colouring)
	// differs.
	levels := []float64{100, 104, 96, 100, 102, 98, 100, 101, 99, 100}
	tests := []struct {
		name      string
		ev        Evaluator
		best      float64
		wantInv   int
		wantWhy   StopReason
		wantValue float64
	}{
		{"one invocation keeps the inner estimate", Evaluator{Inner: Fixed(4, 0.99, MethodMedian)}, 0, 1, StopMaxCount, 100},
		{"outer count cap", Evaluator{Inner: Fixed(4, 0.99, MethodMedian), Outer: Fixed(5, 0.95, MethodMedian)}, 0, 5, StopMaxCount, 100},
		{"outer converges once invocations agree", Evaluator{Inner: Fixed(4, 0.99, MethodMedian), Outer: StopRule{MaxCount: 10, RelError: 0.05, Confidence: 0.95, MinCount: 2, Method: MethodMedian}}, 0, 2, StopConverged, 102},
		{"outer spread keeps a tight rule going", Evaluator{Inner: Fixed(4, 0.99, MethodMedian), Outer: StopRule{MaxCount: 10, RelError: 0.01, Confidence: 0.95, MinCount: 2, Method: MethodMedian}}, 0, 10, StopMaxCount, 100},
		{"outer stops below best", Evaluator{Inner: Fixed(4, 0.99, MethodMedian), Outer: StopRule{MaxCount: 10, Confidence: 0.95, BestMinCount: 2, Method: MethodMean}}, 1000, 2, StopBelowBest, 102},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inv := 0
			r, err := tt.ev.Evaluate(context.Background(), tt.best, func(ctx context.Context, inner StopRule, best float64) (Inner, error) {
				level := levels[inv]
				inv++
				return Iterate(ctx, inner, best, replay([]float64{level, level, level, level}))
			})
			if err != nil {
				t.Fatal(err)
			}
			if r.Invocations != tt.wantInv || r.Reason != tt.wantWhy {
				t.Errorf("%d invocations (%s), want %d (%s)", r.Invocations, r.Reason, tt.wantInv, tt.wantWhy)
			}
			if r.Iterations != 4*tt.wantInv {
				t.Errorf("iterations = %d, want %d", r.Iterations, 4*tt.wantInv)
			}
			if math.Abs(r.Estimate.Value-tt.wantValue) > 1e-9 {
				t.Errorf("estimate = %v, want %v", r.Estimate.Value, tt.wantValue)
			}
		})
	}
}

func TestEvaluateEndsTheConfigurationWhenAnInvocationIsBelowBest(t *testing.T) {
	ev := Evaluator{
		Inner: StopRule{MaxCount: 10, Confidence: 0.95, BestMinCount: 2, Method: MethodMean},
		Outer: Fixed(5, 0.95, MethodMedian),
	}
	calls := 0
	r, err := ev.Evaluate(context.Background(), 500, func(ctx context.Context, inner StopRule, best float64) (Inner, error) {
		calls++
		return Iterate(ctx, inner, best, replay([]float64{100, 101, 99, 100}))
	})
	if err != nil {
		t.Fatal(err)
	}
	if calls != 1 || r.Reason != StopBelowBest || r.InnerReasons[StopBelowBest] != 1 {
		t.Errorf("calls=%d reason=%s inner=%v, want one invocation stopped below best", calls, r.Reason, r.InnerReasons)
	}
}

func TestSearchFindsTheBestInEitherOrder(t *testing.T) {
	rates := []float64{50, 80, 120, 90, 119}
	for _, order := range []Order{Forward, Reverse} {
		var visited []int
		var bests []float64
		tuned, err := Search(context.Background(), len(rates), order, func(ctx context.Context, i int, best float64) (Result, error) {
			visited = append(visited, i)
			bests = append(bests, best)
			return Result{Estimate: Estimate{Value: rates[i], N: 1}}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if tuned.Best != 2 {
			t.Errorf("order %d: best = %d, want 2", order, tuned.Best)
		}
		if order == Reverse && (visited[0] != 4 || bests[1] != 119) {
			t.Errorf("reverse visited %v with bests %v, want to start at 4 and pass 119 on", visited, bests)
		}
		if order == Forward && (visited[0] != 0 || bests[3] != 120) {
			t.Errorf("forward visited %v with bests %v, want to start at 0 and pass 120 to the 4th", visited, bests)
		}
	}
}

func TestDefaultOrderIsTheCallersDefault(t *testing.T) {
	tests := []struct {
		flag     string
		def, got Order
	}{
		{"", Reverse, Reverse},
		{"", Forward, Forward},
		{"forward", Reverse, Forward},
		{"reverse", Forward, Reverse},
	}
	for _, tt := range tests {
		o, err := ParseOrder(tt.flag)
		if err != nil {
			t.Fatal(err)
		}
		if got := o.Or(tt.def); got != tt.got {
			t.Errorf("ParseOrder(%q).Or(%d) = %d, want %d", tt.flag, tt.def, got, tt.got)
		}
	}
	if _, err := ParseOrder("sideways"); err == nil {
		t.Error("ParseOrder(sideways) succeeded")
	}
}

func TestSearchStoppedKeepsWhatItMeasured(t *testing.T) {
	rates := []float64{50, 80, 120, 90, 119}
	tests := []struct {
		name        string
		stopAt      int // the eval call that returns ErrStopSearch
		wantErr     bool
		best, skips int
	}{
		{"stopped after two", 2, false, 1, 3},
		{"stopped at the last", 4, false, 2, 1},
		{"never stopped", -1, false, 2, 0},
		{"stopped before anything was measured", 0, true, -1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := 0
			tuned, err := Search(context.Background(), len(rates), Forward, func(ctx context.Context, i int, best float64) (Result, error) {
				defer func() { calls++ }()
				if calls == tt.stopAt {
					return Result{}, ErrStopSearch
				}
				return Result{Estimate: Estimate{Value: rates[i], N: 1}, Invocations: 1}, nil
			})
			if (err != nil) != tt.wantErr || !tt.wantErr && (tuned.Best != tt.best || tuned.Skipped != tt.skips) {
				t.Fatalf("best %d, skipped %d, err %v; want best %d, skipped %d, error %v", tuned.Best, tuned.Skipped, err, tt.best, tt.skips, tt.wantErr)
			}
			for i := len(rates) - tt.skips; i < len(rates) && !tt.wantErr; i++ {
				if tuned.Results[i].Invocations != 0 {
					t.Errorf("skipped configuration %d has a result: %+v", i, tuned.Results[i])
				}
			}
		})
	}
}

func TestSearchOfNothingIsAnError(t *testing.T) {
	_, err := Search(context.Background(), 0, Forward, func(context.Context, int, float64) (Result, error) { return Result{}, nil })
	if err == nil {
		t.Error("Search over no configurations succeeded")
	}
}
