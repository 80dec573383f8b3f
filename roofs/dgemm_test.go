package roofs

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/rprof/rprof/internal/stats"
)

// fakeDGEMM models a BLAS on a fake clock: its rate grows with k up to
// 2048 and with n up to 4000 (as Debian's OpenBLAS does on the Zen 4 and 5
// guests), and an invocation takes a process start, a fill of its matrices
// at 1 GB/s, a pre-heat call and its timed calls (the iteration budget, or
// one call if longer), all of which it adds to the clock.
type fakeDGEMM struct {
	t       time.Time
	invoked []Shape
}

func (f *fakeDGEMM) now() time.Time { return f.t }

func fakeRate(s Shape) float64 {
	return 100 - float64(abs(s.K-2048))/100 - float64(abs(s.N-4000))/1000
}

func (f *fakeDGEMM) invoke(_ context.Context, s Shape, inner stats.StopRule, _ float64) (stats.Inner, error) {
	f.invoked = append(f.invoked, s)
	call := dgemmFlops(s.N, s.M, s.K) / (fakeRate(s) * 1e9)
	calls := max(1, int(math.Ceil(inner.MaxTime.Seconds()/call)))
	in := stats.Inner{Elapsed: time.Duration(float64(calls) * call * 1e9), Reason: stats.StopMaxTime}
	for range calls {
		in.Samples = append(in.Samples, fakeRate(s))
	}
	f.t = f.t.Add(50*time.Millisecond + time.Duration(matrixBytes(s)) + time.Duration(call*1e9) + in.Elapsed)
	return in, nil
}

func searchFake(t *testing.T, budget time.Duration) (dgemmFound, time.Duration, *Report) {
	t.Helper()
	space, err := DGEMMSpace("default")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeDGEMM{t: time.Unix(0, 0)}
	rep := &Report{}
	found, err := searchDGEMM(context.Background(), Options{DGEMMBudget: &budget, now: f.now}, rep, "default", space, f.invoke)
	if err != nil {
		t.Fatal(err)
	}
	return found, f.t.Sub(time.Unix(0, 0)), rep
}

func TestDGEMMSearchBudget(t *testing.T) {
	_, whole, rep := searchFake(t, 0)
	grid := time.Duration(rep.Roofs.Tuning.Steps[0].Seconds * 1e9)
	tests := []struct {
		name   string
		budget time.Duration
		shape  Shape
		cut    []string // what the budget flag must say
	}{
		{"no budget: the climb reaches seed 000's limits", 0, Shape{4000, 4000, 2048}, nil},
		// Duels are predicted at the evaluator's 3 invocations a side;
		// the fake's agree after 2.
		{"a budget the search fits in with room changes nothing", 2 * whole, Shape{4000, 4000, 2048}, nil},
		{"a budget spent inside the grid skips its smallest shapes and the climb", grid / 2, Shape{2000, 4000, 1024},
			[]string{"shapes were not measured", "the climb stopped before n=2000 m=4000 k=2048"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			found, _, _ := searchFake(t, tt.budget)
			if found.shape != tt.shape || found.result.Estimate.Value != fakeRate(tt.shape) {
				t.Errorf("found %v at %.2f, want %v at %.2f", found.shape, found.result.Estimate.Value, tt.shape, fakeRate(tt.shape))
			}
			said := strings.Join(found.cut, "; ")
			if len(tt.cut) == 0 && said != "" {
				t.Errorf("the budget was said to cut the search: %s", said)
			}
			for _, want := range tt.cut {
				if !strings.Contains(said, want) {
					t.Errorf("what the budget cut: %q, want it to say %q", said, want)
				}
			}
		})
	}
}

// TestDGEMMSearchKeepsItsBudget: over budgets from a second to twice the
// whole search, a search never overruns its budget but by the grid shape
// it started with time left, finds no worse a shape with more time, and
// says it was cut exactly when it measured less than the whole search.
func TestDGEMMSearchKeepsItsBudget(t *testing.T) {
	_, whole, _ := searchFake(t, 0)
	all, _, _ := searchFake(t, 0)
	// The largest grid shape's evaluation: the most a started shape adds.
	f := &fakeDGEMM{}
	for range 3 {
		f.invoke(context.Background(), Shape{2000, 4000, 1024}, Options{}.innerRule(dgemmBudget), 0)
	}
	overrun := f.t.Sub(time.Time{})
	last := 0.0
	for budget := time.Second; budget <= 2*whole; budget += whole / 40 {
		found, took, _ := searchFake(t, budget)
		if took > budget+overrun {
			t.Errorf("budget %v: the search took %v", budget, took)
		}
		if v := found.result.Estimate.Value; v < last {
			t.Errorf("budget %v: found %v at %.2f, below %.2f with less time", budget, found.shape, v, last)
		}
		last = found.result.Estimate.Value
		if cut := len(found.cut) > 0; cut != (len(found.results) < len(all.results)) {
			t.Errorf("budget %v: said cut %v, with %d of the whole search's %d evaluations", budget, cut, len(found.results), len(all.results))
		}
	}
}

func TestDGEMMBudgetDefaults(t *testing.T) {
	minute, none := time.Minute, time.Duration(0)
	tests := []struct {
		o    Options
		want time.Duration
	}{
		{Options{}, dgemmSearchBudget},
		{Options{Quick: true}, dgemmSearchBudget},
		{Options{Fixed: 200}, 0},
		{Options{DGEMMSpace: "seed"}, 0},
		{Options{DGEMMSpace: "seed", DGEMMBudget: &minute}, time.Minute},
		{Options{Fixed: 200, DGEMMBudget: &minute}, time.Minute},
		{Options{DGEMMBudget: &none}, 0},
	}
	for _, tt := range tests {
		if got := tt.o.dgemmBudget(); got != tt.want {
			t.Errorf("%+v: budget %v, want %v", tt.o, got, tt.want)
		}
	}
}

func TestInvocationCostPrediction(t *testing.T) {
	from := Shape{2000, 4000, 1024} // 16.4 GFLOP: 0.164 s a call at 100 GFLOP/s
	costs := invocationCosts{from: {
		// 0.1 s beside the calls (start, fill), one pre-heat call, one timed call.
		{wall: 100*time.Millisecond + 2*164*time.Millisecond, measured: 164 * time.Millisecond, calls: 1},
		{wall: 120*time.Millisecond + 2*164*time.Millisecond, measured: 164 * time.Millisecond, calls: 1},
		{wall: 110*time.Millisecond + 2*164*time.Millisecond, measured: 164 * time.Millisecond, calls: 1},
	}}
	tests := []struct {
		s    Shape
		want float64 // seconds
	}{
		// the same shape: 0.11 s, a pre-heat call, and two calls to pass
		// the 0.2 s iteration budget
		{from, 0.11 + 3*0.16384},
		// k doubled: one pre-heat and one timed call of 0.328 s, the rest
		// scaled by the bytes (20.4 against 14.1 M doubles)
		{Shape{2000, 4000, 2048}, 0.11*(2000*2048+2048*4000+2000*4000)/(2000*1024+1024*4000+2000*4000) + 2*0.32768},
	}
	for _, tt := range tests {
		got, ok := costs.predict(from, tt.s, 100, 200*time.Millisecond)
		if !ok || math.Abs(got.Seconds()-tt.want) > 0.002 {
			t.Errorf("predict(%v) = %.3f s (%v), want %.3f", tt.s, got.Seconds(), ok, tt.want)
		}
	}
	if _, ok := costs.predict(Shape{1, 1, 1}, from, 100, time.Second); ok {
		t.Error("predicted from a shape with no invocations")
	}
}

func TestClimbStartsFromTheLargestShapeTiedWithTheBest(t *testing.T) {
	space := []Shape{{1000, 1000, 512}, {1000, 2000, 512}, {2000, 2000, 512}, {2000, 4000, 1024}}
	// measured is a result over invocations whose range is [lo, hi].
	measured := func(v, lo, hi float64) stats.Result {
		return stats.Result{Invocations: 3, Estimate: stats.Estimate{Value: v, Lo: math.Inf(-1), Hi: math.Inf(1), Min: lo, Max: hi}}
	}
	tests := []struct {
		name    string
		results []stats.Result
		best    int
		want    int
	}{
		{"the best is the largest shape", []stats.Result{measured(80, 78, 82), measured(81, 79, 83), measured(82, 80, 84), measured(90, 88, 92)}, 3, 3},
		{"a larger shape whose range overlaps the best's wins", []stats.Result{measured(89, 86, 90), measured(84, 80, 85), measured(87, 85, 88), measured(86, 84, 87)}, 0, 3},
		{"the largest of the tied shapes wins, past one that is not tied", []stats.Result{measured(89, 86, 90), measured(84, 80, 85), measured(87, 85, 88), measured(80, 78, 82)}, 0, 2},
		{"a shape clearly below the best is not tied", []stats.Result{measured(95, 93, 96), measured(84, 80, 85), measured(87, 85, 88), measured(86, 84, 87)}, 0, 0},
		{"a shape left unmeasured by the budget is not tied", []stats.Result{measured(89, 86, 90), measured(88, 87, 89), {}, {}}, 0, 1},
		{"a bounded interval is used where there is one", []stats.Result{
			{Invocations: 9, Estimate: stats.Estimate{Value: 90, Lo: 89, Hi: 91, Min: 80, Max: 99}}, measured(84, 80, 85), measured(87, 85, 88),
			{Invocations: 9, Estimate: stats.Estimate{Value: 87, Lo: 86, Hi: 88, Min: 80, Max: 95}}}, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := climbStart(space, tt.results, tt.best); got != tt.want {
				t.Errorf("climb starts from %v, want %v", space[got], space[tt.want])
			}
		})
	}
}
