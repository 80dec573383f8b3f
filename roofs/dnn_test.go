package roofs

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/rprof/rprof/dnnbench"
	"github.com/rprof/rprof/internal/stats"
	"github.com/rprof/rprof/roofline"
)

func harnessNamed(t *testing.T, o Options, name string) harness {
	t.Helper()
	hs, release := plan(dnnRun(o, nil), host{})
	t.Cleanup(release)
	i := slices.IndexFunc(hs, func(h harness) bool { return h.name == name })
	if i < 0 {
		t.Fatalf("no %q harness in the plan", name)
	}
	return hs[i]
}

func TestDNNHarnessIsOptInAndServesItsJobs(t *testing.T) {
	if !harnessNamed(t, Options{}, "dnn").notAsked || !harnessNamed(t, Options{Quick: true}, "dnn").notAsked {
		t.Error("the oneDNN harness runs without --dnn: the default run's time budget would grow")
	}
	h := harnessNamed(t, Options{DNN: []string{"ip"}}, "dnn")
	if h.notAsked {
		t.Error("the oneDNN harness does not run with --dnn ip")
	}
	if h.skipFlag != roofline.FlagLibrarySkipped {
		t.Errorf("skip flag %q, want %q", h.skipFlag, roofline.FlagLibrarySkipped)
	}
	if run, err := jobRunner("dnn"); err != nil || run == nil {
		t.Errorf("no runner for dnn jobs: %v", err)
	}
	hs, release := plan(dnnRun(Options{}, nil), host{})
	defer release()
	for _, other := range hs {
		if other.name != "dnn" && other.notAsked {
			t.Errorf("harness %s is opt-in too; only library ceilings are", other.name)
		}
	}
}

// recordedInvoker answers dnn jobs with recorded samples (GFLOP/s of
// oneDNN 2.6.3's inner product on the Zen 5 guest, 1 and 2 threads) and
// keeps the jobs it was given.
type recordedInvoker struct {
	runtime string
	jobs    []Job
}

func (f *recordedInvoker) Invoke(_ context.Context, job Job) (Reply, error) {
	f.jobs = append(f.jobs, job)
	if job.Kind != "dnn" || job.DNN == nil {
		return Reply{}, fmt.Errorf("unexpected job %+v", job)
	}
	base := 208.8 * float64(len(job.CPUs))
	var samples []float64
	for i := range 10 {
		samples = append(samples, base*(1+float64(i%5-2)/100))
	}
	return Reply{Inner: stats.Inner{Samples: samples, Reason: stats.StopConverged},
		Library: &roofline.LibraryCall{Name: "oneDNN", Version: "v2.6.3", Runtime: f.runtime, Primitive: job.DNN.Kind,
			Implementation: "brgemm:avx512_core", Problem: job.DNN.Descriptor, WorkFlops: 268566528, LibraryThreads: len(job.CPUs)}}, nil
}

func dnnRun(o Options, scopes [][]int) *run {
	rep := &Report{Roofs: roofline.Roofs{Tuning: roofline.Tuning{StopReasons: map[string]int{}}}}
	return &run{o: o, rep: rep, tally: &tally{tuning: &rep.Roofs.Tuning}, scopes: scopes}
}

func loadingDNN(t *testing.T, err error) {
	saved := dnnLoads
	dnnLoads = func() error { return err }
	t.Cleanup(func() { dnnLoads = saved })
}

func TestDNNCeilingsAreLibraryRoofsOnEveryScope(t *testing.T) {
	loadingDNN(t, nil)
	inv := &recordedInvoker{runtime: "OpenMP"}
	r := dnnRun(Options{DNN: []string{"ip"}, Quick: true, Invoker: inv}, [][]int{{0}, {0, 1}})
	if err := measureDNNRoofs(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	ip, _ := dnnbench.Lookup("ip")
	for i, j := range inv.jobs {
		if j.Kind != "dnn" || *j.DNN != ip.Problem || len(j.CPUs) != i+1 {
			t.Errorf("job %d = %+v, want the ip experiment on %d CPUs", i, j, i+1)
		}
	}
	if len(inv.jobs) == 2 && !slices.Contains(inv.jobs[1].Env, "OMP_PLACES={0},{1}") {
		t.Errorf("2-thread job's environment %q: want OpenMP's threads bound to CPUs 0 and 1", inv.jobs[1].Env)
	}
	got := r.rep.Roofs.Compute
	if len(got) != 2 {
		t.Fatalf("%d roofs, want one per scope: %+v", len(got), got)
	}
	for i, c := range got {
		checkRecordedIPRoof(t, i, c, ip.Problem.Descriptor)
	}
	if d := r.rep.Details.Compute; len(d) != 2 || d[0].Config != ip.Problem.Descriptor {
		t.Errorf("details %+v", d)
	}
	if r.rep.Roofs.Tuning.Configurations != 2 || len(r.rep.Roofs.Tuning.Steps) != 2 || r.rep.Roofs.Tuning.Steps[0].Part != "dnn" {
		t.Errorf("tuning %+v: want each ceiling counted and timed as a dnn step", r.rep.Roofs.Tuning)
	}
}

func TestDNNCeilingOfAnUnsettableRuntimeIsFlaggedBeyondOneThread(t *testing.T) {
	loadingDNN(t, nil)
	r := dnnRun(Options{DNN: []string{"ip"}, Quick: true, Invoker: &recordedInvoker{runtime: "TBB"}}, [][]int{{0}, {0, 1}})
	if err := measureDNNRoofs(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	for i, c := range r.rep.Roofs.Compute {
		flagged := slices.ContainsFunc(c.Library.Flags, func(f roofline.Flag) bool { return f.Code == roofline.FlagThreadsUnset })
		if flagged != (c.Threads > 1) {
			t.Errorf("roof %d on %d threads: threads-unset flagged %v", i, c.Threads, flagged)
		}
	}
}

func TestMissingOneDNNSkipsTheCeilingsWithTheReason(t *testing.T) {
	loadingDNN(t, fmt.Errorf("%w: libdnnl.so.2: cannot open shared object file", dnnbench.ErrNoLibrary))
	inv := &recordedInvoker{}
	r := dnnRun(Options{DNN: []string{"ip"}, Invoker: inv}, [][]int{{0}})
	err := measureDNNRoofs(context.Background(), r)
	var skip *skipError
	if !errors.As(err, &skip) || !strings.Contains(skip.why, "libdnnl.so.2") {
		t.Errorf("err = %v, want a skip that says why", err)
	}
	if len(inv.jobs) != 0 || len(r.rep.Roofs.Compute) != 0 {
		t.Errorf("%d jobs ran and %d roofs were made without the library", len(inv.jobs), len(r.rep.Roofs.Compute))
	}
}

func TestBadDNNProblemFailsBeforeAnythingRuns(t *testing.T) {
	loadingDNN(t, nil)
	inv := &recordedInvoker{}
	r := dnnRun(Options{DNN: []string{"ip", "conv9x9"}, Invoker: inv}, [][]int{{0}})
	if err := measureDNNRoofs(context.Background(), r); err == nil || !strings.Contains(err.Error(), "conv9x9") || len(inv.jobs) != 0 {
		t.Errorf("err = %v after %d jobs; want the bad problem named before any job", err, len(inv.jobs))
	}
}

func TestImplementationISA(t *testing.T) {
	for impl, want := range map[string]string{
		"jit:avx512_core": "avx512", "brgemm:avx512_core": "avx512", "brg:avx512_core_amx": "avx512",
		"jit:avx2": "avx2", "jit:sse41": "sse", "gemm:jit": "", "ref:any": "", "simple:any": "",
	} {
		if got := implementationISA(impl); got != want {
			t.Errorf("implementationISA(%q) = %q, want %q", impl, got, want)
		}
	}
}

func TestDNNCeilingBelowFewerThreadsIsFlagged(t *testing.T) {
	roof := func(threads int, gflops float64) roofline.ComputeRoof {
		return roofline.ComputeRoof{Kind: roofline.ComputeKindLibrary, Threads: threads, GFlops: gflops, Library: &roofline.LibraryCall{}}
	}
	// Recorded on the 2-CPU guest at load 5: conv3x3-nChw16c.
	tests := []struct {
		name  string
		roofs []roofline.ComputeRoof
		want  []bool
	}{
		{"scales", []roofline.ComputeRoof{roof(1, 186.7), roof(2, 377.3)}, []bool{false, false}},
		{"waited", []roofline.ComputeRoof{roof(1, 186.7), roof(2, 28.94)}, []bool{false, true}},
		{"one scope", []roofline.ComputeRoof{roof(2, 28.94)}, []bool{false}},
	}
	for _, tt := range tests {
		flagBelowNarrower(tt.roofs)
		for i, r := range tt.roofs {
			got := slices.ContainsFunc(r.Library.Flags, func(f roofline.Flag) bool { return f.Code == roofline.FlagLibraryBelowNarrower })
			if got != tt.want[i] {
				t.Errorf("%s: roof %d on %d threads flagged %v, want %v (%v)", tt.name, i, r.Threads, got, tt.want[i], r.Library.Flags)
			}
		}
	}
}

// checkRecordedIPRoof checks the library roof made on scope i from the
// recorded invoker's samples of the ip experiment.
func checkRecordedIPRoof(t *testing.T, i int, c roofline.ComputeRoof, descriptor string) {
	t.Helper()
	want := 208.8 * float64(i+1)
	if c.Kind != roofline.ComputeKindLibrary || c.Name != "onednn-ip brgemm:avx512_core fp32" || c.ISA != "avx512" ||
		c.Precision != roofline.Single || c.Threads != i+1 || c.TheoreticalGFlops != 0 {
		t.Errorf("roof %d = %+v", i, c)
	}
	if c.GFlops != want || !(c.CI.Lo < want && want < c.CI.Hi) {
		t.Errorf("roof %d: %g GFLOP/s in [%g, %g]; want the samples' median %g inside its interval", i, c.GFlops, c.CI.Lo, c.CI.Hi, want)
	}
	if c.Library == nil || c.Library.Version != "v2.6.3" || c.Library.Problem != descriptor || len(c.Library.Flags) != 0 {
		t.Errorf("roof %d says %+v of what ran", i, c.Library)
	}
}
