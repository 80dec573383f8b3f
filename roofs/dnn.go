package roofs

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/rprof/rprof/dnnbench"
	"github.com/rprof/rprof/internal/affinity"
	"github.com/rprof/rprof/internal/stats"
	"github.com/rprof/rprof/roofline"
)

// dnnBudget bounds one invocation's iteration loop of a oneDNN primitive.
// Samples are batched to at least a millisecond each (dnnbench), so a few
// hundred milliseconds hold enough of them for the interval to converge.
const dnnBudget = 300 * time.Millisecond

// measureDNNRoofs measures, for each problem of o.DNN on each thread
// scope, the rate oneDNN reaches on it: a library roof, named after the
// problem and the implementation the library chose.
func measureDNNRoofs(ctx context.Context, r *run) error {
	type named struct {
		p    dnnbench.Problem
		name string
	}
	var problems []named
	for _, arg := range r.o.DNN {
		p, name, err := dnnbench.Resolve(arg, "", "", "")
		if err != nil {
			return fmt.Errorf("oneDNN ceiling %s: %w", arg, err)
		}
		problems = append(problems, named{p, name})
	}
	// Probe here, once, so a missing library is a skip rather than every
	// invocation failing; the workers load their own.
	if err := dnnLoads(); err != nil {
		return &skipError{why: err.Error()}
	}
	ev := r.o.evaluator(dnnBudget)
	for _, pr := range problems {
		first := len(r.rep.Roofs.Compute)
		for _, cpus := range r.scopes {
			start := time.Now()
			r.o.progress("oneDNN %s, %s", pr.name, threadsWord(len(cpus)))
			var call *roofline.LibraryCall
			res, err := ev.Evaluate(ctx, 0, func(ctx context.Context, inner stats.StopRule, best float64) (stats.Inner, error) {
				reply, err := r.o.Invoker.Invoke(ctx, Job{Kind: "dnn", CPUs: cpus, DNN: &pr.p, Inner: inner, Best: best, Env: affinity.OpenMPEnv(cpus)})
				if reply.Library != nil {
					call = reply.Library
				}
				return reply.Inner, err
			})
			if err != nil {
				return fmt.Errorf("measure oneDNN %s on %s: %w", pr.name, threadsWord(len(cpus)), err)
			}
			if call == nil {
				return fmt.Errorf("measure oneDNN %s on %s: the worker did not say what ran", pr.name, threadsWord(len(cpus)))
			}
			if call.Runtime != "OpenMP" && len(cpus) > 1 {
				call.Flags = append(call.Flags, roofline.Flag{Code: roofline.FlagThreadsUnset, Message: fmt.Sprintf("oneDNN's %s runtime: rprof cannot set its thread count; it used %d", orUnknown(call.Runtime), call.LibraryThreads)})
			}
			roof := roofline.ComputeRoof{Kind: roofline.ComputeKindLibrary, Library: call,
				Name:      dnnRoofName(pr.name, call.Implementation),
				ISA:       implementationISA(call.Implementation),
				Precision: roofline.Single, Threads: len(cpus),
				GFlops: res.Estimate.Value, CI: interval(res.Estimate), IntervalUnknown: !res.Estimate.Bounded()}
			r.rep.addCompute(roof, Detail{Config: pr.p.Descriptor, Invocations: res.Invocations, Iterations: res.Iterations, Reasons: r.tally.add(res)})
			noteInterval(r.rep, roof.Name, len(cpus), res.Estimate)
			r.rep.step("dnn", fmt.Sprintf("%s, %s", pr.name, threadsWord(len(cpus))), time.Since(start))
		}
		flagBelowNarrower(r.rep.Roofs.Compute[first:])
	}
	return nil
}

// flagBelowNarrower flags each of one problem's library roofs that is below
// the same problem's on fewer threads: its threads waited for each other.
// Unbound OpenMP threads gave that picture, with tight intervals
// (docs/dnn.md); bound (affinity.OpenMPEnv), a CPU taken by other work or a
// problem too small to split still can.
func flagBelowNarrower(roofs []roofline.ComputeRoof) {
	for i := range roofs {
		for _, n := range roofs {
			if n.Threads < roofs[i].Threads && roofs[i].GFlops < n.GFlops {
				l := roofs[i].Library
				l.Flags = append(l.Flags, roofline.Flag{Code: roofline.FlagLibraryBelowNarrower, Message: fmt.Sprintf(
					"%.4g GFLOP/s on %s, below its %.4g on %s: the threads waited for each other (a busy machine, where OpenMP's barriers wait for a descheduled thread, or a problem too small to split)",
					roofs[i].GFlops, threadsWord(roofs[i].Threads), n.GFlops, threadsWord(n.Threads))})
				break
			}
		}
	}
}

// dnnLoads says whether oneDNN loads here (tests replace it).
var dnnLoads = func() error {
	lib, err := dnnbench.Open()
	if err == nil {
		lib.Close()
	}
	return err
}

// dnnRoofName is "onednn-" and the problem's name, the implementation and
// the precision: "onednn-conv3x3-nChw16c jit:avx512_core fp32".
func dnnRoofName(problem, implementation string) string {
	return "onednn-" + problem + " " + implementation + " " + roofline.Single
}

// implementationISA is the ISA a oneDNN implementation name says
// ("jit:avx512_core" → avx512), "" when it says none ("gemm:jit",
// "ref:any").
func implementationISA(impl string) string {
	for _, x := range []struct{ in, isa string }{{"avx512", "avx512"}, {"avx2", "avx2"}, {"avx", "avx2"}, {"sse41", "sse"}} {
		if strings.Contains(impl, x.in) {
			return x.isa
		}
	}
	return ""
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// openedDNN is the worker's oneDNN, loaded once: a library cannot be
// unloaded.
var openedDNN = sync.OnceValues(dnnbench.Open)

// runDNN serves one invocation of a oneDNN primitive: its samples are
// GFLOP/s of the problem's analytic work. It must run on the process's
// main thread (dnnbench.NeedsMainThread): the worker role keeps it there.
func runDNN(ctx context.Context, job Job) (Reply, error) {
	if job.DNN == nil || len(job.CPUs) == 0 {
		return Reply{}, errors.New("dnn job: no problem or CPUs")
	}
	restore, err := placeLibraryThreads(job.CPUs)
	if err != nil {
		return Reply{}, err
	}
	defer restore()
	lib, err := openedDNN()
	if err != nil {
		return Reply{}, err
	}
	res, err := lib.Run(ctx, *job.DNN, dnnbench.Options{Threads: len(job.CPUs), WarmUp: 3, Rule: job.Inner})
	if err != nil {
		return Reply{}, err
	}
	if res.Model.WorkFlops == nil || *res.Model.WorkFlops <= 0 {
		return Reply{}, fmt.Errorf("dnn job %s: no analytic work to make a rate of", job.DNN)
	}
	w := *res.Model.WorkFlops
	in := *res.Seconds
	in.Samples = make([]float64, len(res.Seconds.Samples))
	for i, s := range res.Seconds.Samples {
		in.Samples[i] = roofline.Rate(w, s)
	}
	in.Estimate = job.Inner.Method.Estimate(in.Samples, job.Inner.Confidence)
	v := lib.Version()
	return Reply{Inner: in, MHz: cpuMHz(job.CPUs[0]), Library: &roofline.LibraryCall{
		Name: "oneDNN", Version: v.String(), Runtime: v.CPURuntime, Primitive: job.DNN.Kind, Implementation: res.Implementation,
		Problem: job.DNN.Descriptor, Layout: job.DNN.Layout, WorkFlops: w, LibraryThreads: res.Threads,
	}}, nil
}
