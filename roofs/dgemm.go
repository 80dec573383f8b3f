package roofs

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/rprof/rprof/internal/stats"
	"github.com/rprof/rprof/roofline"
)

// Shape is one DGEMM configuration: A is n×k, B k×m, C n×m (seed 000).
type Shape struct{ N, M, K int }

func (s Shape) String() string { return fmt.Sprintf("n=%d m=%d k=%d", s.N, s.M, s.K) }

// DGEMMSpace returns a DGEMM search space by name, smallest work first:
// "seed" is seed 000's reduced space (n, m in 500..4000 as multiples of 2
// per Intel's advice, k in 64..2048: 96 shapes); "default" is the part of
// it whose calls take at most about 0.3 s on one core (n in 1000..2000, m
// in 1000..4000, k in 128..1024: 18 shapes; seed 000's optima had k = 128
// with MKL, Debian's OpenBLAS prefers larger k and a wide m: docs/roofs.md,
// DGEMM), so a run fits a minute, and the search goes on past its edge from
// its best shape (climb); "quick" is two shapes.
func DGEMMSpace(name string) ([]Shape, error) {
	var ns, ms, ks []int
	switch name {
	case "seed":
		ns, ks = []int{500, 1000, 2000, 4000}, []int{64, 128, 256, 512, 1024, 2048}
		ms = ns
	case "", "default":
		ns, ms, ks = []int{1000, 2000}, []int{1000, 2000, 4000}, []int{128, 512, 1024}
	case "quick":
		return []Shape{{2000, 2000, 256}, {2000, 2000, 1024}}, nil
	default:
		return nil, fmt.Errorf("unknown DGEMM search space %q (want quick, default or seed)", name)
	}
	var space []Shape
	for _, k := range ks {
		for _, n := range ns {
			for _, m := range ms {
				space = append(space, Shape{n, m, k})
			}
		}
	}
	slices.SortStableFunc(space, func(a, b Shape) int { return cmp.Compare(dgemmFlops(a.N, a.M, a.K), dgemmFlops(b.N, b.M, b.K)) })
	return space, nil
}

// dgemmBudget bounds one configuration's iteration loop; large shapes take
// a tenth of a second per call, so they stop at max-time after a few.
const dgemmBudget = 200 * time.Millisecond

// dgemmSearchBudget bounds the DGEMM search as a whole (Options.DGEMMBudget
// overrides it). Without it the search took over half of a default run,
// every invocation being a fresh process that first fills its matrices; the
// budget is the least that held the climb's last duel when the search was
// replayed on a fake clock at a guest's rates (docs/roofs.md).
const dgemmSearchBudget = 25 * time.Second

// searchBudget is what is left of a search's time budget.
type searchBudget struct {
	limit time.Duration // <= 0: no limit
	start time.Time
	now   func() time.Time
}

func newSearchBudget(limit time.Duration, now func() time.Time) searchBudget {
	return searchBudget{limit: limit, start: now(), now: now}
}

// left is the time left, or the largest duration without a limit.
func (b searchBudget) left() time.Duration {
	if b.limit <= 0 {
		return math.MaxInt64
	}
	return b.limit - b.now().Sub(b.start)
}

// invocationCosts keeps the wall time of each DGEMM invocation, to predict
// what a duel would take.
type invocationCosts map[Shape][]invocationCost

type invocationCost struct {
	wall, measured time.Duration // the whole invocation; its timed calls
	calls          int
}

// predict is the wall time of one invocation of s, from the invocations of
// from (measured) and the rate rate (GFLOP/s) s is assumed to reach: its
// pre-heat call, its timed calls (as many as the iteration budget needs,
// at least one), and the rest of from's invocations (process start,
// filling the matrices) scaled by the matrices' bytes. ok is false when
// from has none.
func (c invocationCosts) predict(from, s Shape, rate float64, budget time.Duration) (d time.Duration, ok bool) {
	var rest []float64
	for _, x := range c[from] {
		call := x.measured / time.Duration(max(1, x.calls))
		rest = append(rest, max(0, (x.wall-x.measured-call).Seconds()))
	}
	if len(rest) == 0 || rate <= 0 {
		return 0, false
	}
	call := dgemmFlops(s.N, s.M, s.K) / (rate * 1e9)
	other := stats.MedianCI(rest, 0.5).Value * max(1, matrixBytes(s)/matrixBytes(from))
	calls := max(1, math.Ceil(budget.Seconds()/call))
	return time.Duration(((1+calls)*call + other) * 1e9), true
}

// matrixBytes is what one invocation of s allocates and fills.
func matrixBytes(s Shape) float64 { return 8 * float64(s.N*s.K+s.K*s.M+s.N*s.M) }

// slowDGEMM is the fraction of the FMA peak below which DGEMM is flagged.
const slowDGEMM = 0.75

// measureDGEMM measures the DGEMM roof on cpus, and flags it when under
// slowDGEMM of fma, the fastest fp64 FMA roof on as many threads (nil:
// none measured). The document holds one DGEMM roof, so Measure asks for
// it on the widest scope only: a search over a narrower one took about ten
// seconds of the minute a run may take, for a figure no document kept.
func measureDGEMM(ctx context.Context, o Options, rep *Report, t *tally, cpus []int, fma *roofline.ComputeRoof) error {
	name := o.DGEMMSpace
	if name == "" {
		name = "default"
		if o.Quick {
			name = "quick"
		}
	}
	space, err := DGEMMSpace(name)
	if err != nil {
		return err
	}
	// Probe here, once, so a missing library is reported as a skip
	// rather than as every invocation failing.
	lib, err := blasFor(o.BLAS)
	if errors.Is(err, errNoBLAS) {
		return &skipError{why: "no BLAS library found; install one: " + BLASHint, code: SkipNoBLAS}
	}
	if err != nil {
		return &skipError{why: err.Error()}
	}
	o.progress("dgemm (%s), %s", lib.Library, threadsWord(len(cpus)))
	var used *BLAS
	found, err := searchDGEMM(ctx, o, rep, name, space, func(ctx context.Context, s Shape, inner stats.StopRule, b float64) (stats.Inner, error) {
		job := Job{Kind: "dgemm", CPUs: cpus, BLAS: lib.Path, N: s.N, M: s.M, K: s.K, Inner: inner, Best: b}
		r, err := o.Invoker.Invoke(ctx, job)
		if r.BLAS != nil {
			used = r.BLAS
		}
		return r.Inner, err
	})
	if err != nil {
		return fmt.Errorf("measure dgemm on %s: %w", threadsWord(len(cpus)), err)
	}
	if used == nil {
		used = lib
	}
	s, r := found.shape, found.result
	d := &roofline.DGEMM{Library: used.Library, Version: used.Version, CoreName: used.CoreName,
		N: s.N, M: s.M, K: s.K, Threads: len(cpus), GFlops: r.Estimate.Value, CI: interval(r.Estimate), IntervalUnknown: !r.Estimate.Bounded()}
	if len(found.cut) > 0 {
		d.Flags = append(d.Flags, roofline.Flag{Code: roofline.FlagDGEMMBudget, Message: fmt.Sprintf(
			"the search's %s budget, not the stop rules, ended it: %s. The roof is the best shape measured, with its own evaluation's interval and stop reasons",
			o.dgemmBudget(), strings.Join(found.cut, "; "))})
	}
	if !used.Threaded && len(cpus) > 1 {
		d.Flags = append(d.Flags, roofline.Flag{Code: roofline.FlagThreadsUnset, Message: "rprof cannot set this library's thread count; it used its default"})
	}
	if fma != nil && d.GFlops < slowDGEMM*fma.GFlops {
		msg, wider := slowReason(used, d.GFlops, fma, workerEnv(o.Invoker))
		d.Flags = append(d.Flags, roofline.Flag{Code: roofline.FlagDGEMMSlow, Message: msg})
		rep.DGEMMKernels = wider
	}
	noteInterval(rep, "dgemm", len(cpus), r.Estimate)
	rep.Details.DGEMM = &Detail{Config: s.String(), Invocations: r.Invocations, Iterations: r.Iterations, Reasons: t.add(found.results...)}
	rep.DGEMMPath = used.Path
	rep.Roofs.DGEMM = d
	return nil
}

// dgemmFound is what a DGEMM search found: the best shape with its latest
// result, every evaluation, and what the time budget left unmeasured.
type dgemmFound struct {
	shape   Shape
	result  stats.Result
	results []stats.Result
	cut     []string
}

// searchDGEMM searches space (named name) with invoke running one
// invocation of a shape: all of it, largest shape first by default, then,
// for the default space, a climb past its edge. Once the budget is spent no
// shape starts, and no duel of the climb starts that the time left cannot
// hold (predicted from the invocations so far), so every figure still comes
// from its own stop rules; found.cut says what was left out.
func searchDGEMM(ctx context.Context, o Options, rep *Report, name string, space []Shape, invoke func(context.Context, Shape, stats.StopRule, float64) (stats.Inner, error)) (dgemmFound, error) {
	ev := o.evaluator(dgemmBudget)
	now := o.clock()
	costs := invocationCosts{}
	timed := func(ctx context.Context, s Shape, inner stats.StopRule, b float64) (stats.Inner, error) {
		t0 := now()
		in, err := invoke(ctx, s, inner, b)
		costs[s] = append(costs[s], invocationCost{wall: now().Sub(t0), measured: in.Elapsed, calls: len(in.Samples)})
		return in, err
	}
	budget := newSearchBudget(o.dgemmBudget(), now)
	var f dgemmFound
	gridStart := now()
	tuned, err := stats.Search(ctx, len(space), o.Order.Or(stats.Reverse), func(ctx context.Context, i int, bestSoFar float64) (stats.Result, error) {
		if budget.left() <= 0 {
			return stats.Result{}, stats.ErrStopSearch
		}
		return ev.Evaluate(ctx, bestSoFar, func(ctx context.Context, inner stats.StopRule, b float64) (stats.Inner, error) {
			return timed(ctx, space[i], inner, b)
		})
	})
	if err != nil {
		return f, err
	}
	rep.step("dgemm", fmt.Sprintf("%d of %d shapes", len(space)-tuned.Skipped, len(space)), now().Sub(gridStart))
	f.results, f.shape, f.result = tuned.Results, space[tuned.Best], tuned.Results[tuned.Best]
	if tuned.Skipped > 0 {
		f.cut = append(f.cut, fmt.Sprintf("%d of the %s space's %d shapes were not measured", tuned.Skipped, name, len(space)))
	}
	if name != "default" {
		return f, nil
	}
	// The default space is cut short for time and its best shape often
	// lies on its edge, so the search climbs out of it from there, or from
	// a larger shape tied with it.
	if start := climbStart(space, tuned.Results, tuned.Best); start != tuned.Best {
		f.shape, f.result = space[start], tuned.Results[start]
	}
	climbBegan := now()
	afford := func(inc stats.Result, incumbent, challenger Shape) bool {
		if budget.left() == math.MaxInt64 {
			return true
		}
		a, okA := costs.predict(incumbent, incumbent, inc.Estimate.Value, ev.Inner.MaxTime)
		b, okB := costs.predict(incumbent, challenger, inc.Estimate.Value, ev.Inner.MaxTime)
		need := time.Duration(max(1, ev.Outer.MaxCount)) * (a + b)
		if okA && okB && need <= budget.left() {
			return true
		}
		f.cut = append(f.cut, fmt.Sprintf("the climb stopped before %s (a duel there: up to %.1f s; %.1f s left)", challenger, need.Seconds(), max(0, budget.left().Seconds())))
		return false
	}
	more, s, r, err := climb(ctx, space, f.shape, f.result, afford, func(ctx context.Context, inc, ch Shape) (stats.Result, stats.Result, error) {
		return duel(ctx, ev, inc, ch, timed)
	})
	if err != nil {
		return f, err
	}
	f.results, f.shape, f.result = append(f.results, more...), s, r
	rep.step("dgemm", fmt.Sprintf("climb of %d duel(s)", len(more)/2), now().Sub(climbBegan))
	return f, nil
}

// climbStart is the grid shape the climb starts from: the one with the most
// work among the measured shapes whose interval overlaps the best's. A
// BLAS's rate grows with the shape up to a plateau, and on a shared host
// one invocation moves by more than the grid's shapes differ: a small
// shape's lucky invocation can win the grid, leave the climb nothing to do
// and the roof low (docs/roofs.md). The duels of the climb, interleaved,
// settle what the grid's noise cannot.
func climbStart(space []Shape, results []stats.Result, best int) int {
	start := best
	work := func(s Shape) float64 { return dgemmFlops(s.N, s.M, s.K) }
	b := interval(results[best].Estimate)
	for i, r := range results {
		if r.Invocations > 0 && !apart(interval(r.Estimate), b) && work(space[i]) > work(space[start]) {
			start = i
		}
	}
	return start
}

// seedLimit holds the largest n, m and k of seed 000's space.
var seedLimit = Shape{N: 4000, M: 4000, K: 2048}

// climb searches on from best, the best shape of space: the shapes with one
// dimension of the current one doubled (up to seed 000's limits) that were
// not measured yet duel the current one in turn, and the search moves to
// the first that wins and goes on from there, until none does. Inside the space every such shape was measured,
// so the climb only leaves it, from its edge. It returns the results of
// the duels and the best shape with its latest result. It stops at the
// first duel afford says the time left cannot hold.
func climb(ctx context.Context, space []Shape, best Shape, r stats.Result, afford func(inc stats.Result, incumbent, challenger Shape) bool, duel func(ctx context.Context, incumbent, challenger Shape) (stats.Result, stats.Result, error)) ([]stats.Result, Shape, stats.Result, error) {
	seen := map[Shape]bool{}
	for _, s := range space {
		seen[s] = true
	}
	var results []stats.Result
	for {
		// k first: on both guests measured (Zen 4 and 5, Debian's
		// OpenBLAS) the C loop's best shapes had k = 2048, so under a time
		// budget the duel most likely to win runs first.
		next := []Shape{{best.N, best.M, 2 * best.K}, {2 * best.N, best.M, best.K}, {best.N, 2 * best.M, best.K}}
		moved := false
		for _, s := range next {
			if seen[s] || s.N > seedLimit.N || s.M > seedLimit.M || s.K > seedLimit.K {
				continue
			}
			if !afford(r, best, s) {
				return results, best, r, nil
			}
			seen[s] = true
			inc, ch, err := duel(ctx, best, s)
			if err != nil {
				return results, best, r, err
			}
			results = append(results, inc, ch)
			r = inc
			if ch.Estimate.Value > inc.Estimate.Value {
				// The winner's own neighbours come next, not the rest of
				// the old best's.
				best, r, moved = s, ch, true
				break
			}
		}
		if !moved {
			return results, best, r, nil
		}
	}
}

// duel evaluates a challenger shape against the incumbent in alternating
// invocations, ordered ABBA (incumbent first in even rounds, challenger
// first in odd ones), so that the machine's drift (several percent over
// seconds on a shared VM, more than the shapes differ by) moves both
// alike. The outer rule is the challenger's; the incumbent gets as many
// invocations. It returns the incumbent's result and the challenger's.
func duel(ctx context.Context, ev stats.Evaluator, incumbent, challenger Shape, invoke func(context.Context, Shape, stats.StopRule, float64) (stats.Inner, error)) (stats.Result, stats.Result, error) {
	var incIns []stats.Inner
	ch, err := ev.Evaluate(ctx, 0, func(ctx context.Context, inner stats.StopRule, b float64) (stats.Inner, error) {
		order := []Shape{incumbent, challenger}
		if len(incIns)%2 == 1 {
			order = []Shape{challenger, incumbent}
		}
		var chIn stats.Inner
		for _, s := range order {
			in, err := invoke(ctx, s, inner, b)
			if err != nil {
				return in, err
			}
			if s == incumbent {
				incIns = append(incIns, in)
			} else {
				chIn = in
			}
		}
		return chIn, nil
	})
	if err != nil {
		return stats.Result{}, ch, err
	}
	inc := ev.Pool(incIns)
	inc.Reason = ch.Reason
	return inc, ch, nil
}

// bestFMA64 is the fastest fp64 FMA roof measured on threads threads.
func bestFMA64(roofs []roofline.ComputeRoof, threads int) *roofline.ComputeRoof {
	var best *roofline.ComputeRoof
	for i, r := range roofs {
		if r.Precision == roofline.Double && strings.Contains(r.Name, "-fma-") && r.Threads == threads && (best == nil || r.GFlops > best.GFlops) {
			best = &roofs[i]
		}
	}
	return best
}

// slowReason says how far DGEMM is below the FMA kernels and why, where
// that is known: the library chose kernels narrower than the CPU's widest
// (Debian's OpenBLAS and BLIS predate Zen 4 and 5 and fall back to AVX2 or
// generic code there), or a variable in the workers' environment forced
// them (an OPENBLAS_CORETYPE=Haswell left there halved DGEMM
// (docs/roofs.md)). wider are the kernel sets, as that variable names them,
// that may do better, best first; none where the library already uses
// its widest. lookup reads the workers' environment.
func slowReason(b *BLAS, gflops float64, fma *roofline.ComputeRoof, lookup func(string) (string, bool)) (msg string, wider []string) {
	msg = fmt.Sprintf("DGEMM reached %.4g GFLOP/s, %.0f%% of the %s kernel's %.4g (%s)", gflops, 100*gflops/fma.GFlops, fma.Name, fma.GFlops, threadsWord(fma.Threads))
	narrow := func(variable string) string {
		if v, ok := lookup(variable); ok {
			return fmt.Sprintf("; %s used its %s kernels because the workers' environment sets %s=%s", b.Library, b.CoreName, variable, v)
		}
		return fmt.Sprintf("; %s chose its %s kernels, narrower than the CPU's", b.Library, b.CoreName)
	}
	wide := fma.ISA == "avx512"
	switch {
	case b.Library == "OpenBLAS" && wide && !avx512Cores[b.CoreName]:
		msg += narrow("OPENBLAS_CORETYPE") + " (its SkylakeX kernels nearly double DGEMM on Zen 5)"
		if v, ok := lookup("OPENBLAS_L2_SIZE"); ok {
			msg += fmt.Sprintf("; OPENBLAS_L2_SIZE=%s in the environment also sets its blocking", v)
		}
		return msg, []string{"SkylakeX"}
	case b.Library == "BLIS" && !avx512Cores[b.CoreName]:
		return msg + narrow("BLIS_ARCH_TYPE"), []string{"skx", "zen4", "zen3"}
	case b.Library == "unknown":
		return msg + "; the library may not have kernels for this CPU", nil
	}
	return msg + fmt.Sprintf("; %s already uses its %s kernels: the machine may have been busy, or a larger shape may do better (the seed search space has them)", b.Library, b.CoreName), nil
}

// avx512Cores are the OpenBLAS corenames and BLIS architectures with
// AVX-512 kernels.
var avx512Cores = map[string]bool{"SkylakeX": true, "Cooperlake": true, "SapphireRapids": true, "skx": true, "zen4": true, "knl": true}
