package roofs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/rprof/rprof/dnnbench"
	"github.com/rprof/rprof/internal/affinity"
	"github.com/rprof/rprof/internal/stats"
	"github.com/rprof/rprof/roofline"
	"github.com/rprof/rprof/roofs/kernels"
)

// WorkerArg is the hidden first argument with which rprof re-executes
// itself as a worker: one invocation of seed 000's outer loop, in a fresh
// process, reading a Job on stdin and writing a Reply on stdout.
const WorkerArg = "__roofs-worker"

// Job is one invocation: an inner iteration loop over one configuration.
type Job struct {
	// Kind is "compute" (an FMA or mul+add kernel), "dgemm" or "dnn" (a
	// oneDNN primitive).
	Kind string `json:"kind"`
	// CPUs are the CPUs the invocation runs on, one pinned thread each.
	CPUs []int `json:"cpus"`
	// Kernel and Iters (per thread and sample) for compute jobs.
	Kernel string `json:"kernel,omitempty"`
	Iters  int64  `json:"iters,omitempty"`
	// BLAS and the DGEMM shape for dgemm jobs.
	BLAS string `json:"blas,omitempty"`
	N    int    `json:"n,omitempty"`
	M    int    `json:"m,omitempty"`
	K    int    `json:"k,omitempty"`
	// DNN is the oneDNN problem of a dnn job.
	DNN *dnnbench.Problem `json:"dnn,omitempty"`

	Inner stats.StopRule `json:"inner"`
	Best  float64        `json:"best"`

	// Env is added to a worker process's environment after Subprocess's
	// own: variables a library reads when it loads (OpenMP's places).
	// An in-process invocation cannot apply it.
	Env []string `json:"-"`
}

// Reply is what an invocation sends back.
type Reply struct {
	Inner stats.Inner `json:"inner"`
	// MHz is the clock of the job's first CPU seen after the loop, 0 when
	// the kernel does not expose it.
	MHz float64 `json:"mhz,omitempty"`
	// BLAS identifies the library a dgemm job used.
	BLAS *BLAS `json:"blas,omitempty"`
	// Library says what a dnn job ran.
	Library *roofline.LibraryCall `json:"library,omitempty"`
	Err     string                `json:"error,omitempty"`
}

// Invoker runs invocations, in this process or in worker processes.
type Invoker interface {
	Invoke(ctx context.Context, job Job) (Reply, error)
}

// InProcess runs invocations in this process. Process state (page
// placement, the BLAS's thread pool, the heap) then carries over between
// invocations; it is for tests and for work where that does not matter.
type InProcess struct{}

// Invoke runs job here.
func (InProcess) Invoke(ctx context.Context, job Job) (Reply, error) {
	r := runJob(ctx, job)
	if r.Err != "" {
		return r, errors.New(r.Err)
	}
	return r, nil
}

// Subprocess runs each invocation in a new process started with Argv (for
// rprof: its own executable and WorkerArg) and Env added to the
// environment, so every invocation starts from fresh process state.
type Subprocess struct {
	Argv []string
	Env  []string
}

// Workers is a Subprocess of this executable, serving invocations as
// WorkerArg asks; blasArch, when set, is the kernel set the BLAS libraries
// load in the workers (OPENBLAS_CORETYPE, BLIS_ARCH_TYPE: read when the
// library loads, so only a fresh process can take it).
func Workers(blasArch string) (Subprocess, error) {
	exe, err := os.Executable()
	if err != nil {
		return Subprocess{}, fmt.Errorf("find rprof's executable for worker processes: %w", err)
	}
	w := Subprocess{Argv: []string{exe, WorkerArg}}
	if blasArch != "" {
		w.Env = []string{"OPENBLAS_CORETYPE=" + blasArch, "BLIS_ARCH_TYPE=" + blasArch}
	}
	return w, nil
}

// workerEnv looks a variable up in the environment the workers of inv
// run with: a Subprocess's Env over this process's.
func workerEnv(inv Invoker) func(string) (string, bool) {
	return func(k string) (string, bool) {
		if s, ok := inv.(Subprocess); ok {
			for i := len(s.Env) - 1; i >= 0; i-- {
				if v, ok := strings.CutPrefix(s.Env[i], k+"="); ok {
					return v, true
				}
			}
		}
		return os.LookupEnv(k)
	}
}

// Invoke starts a worker process for job and waits for its reply.
func (s Subprocess) Invoke(ctx context.Context, job Job) (Reply, error) {
	in, err := json.Marshal(job)
	if err != nil {
		return Reply{}, fmt.Errorf("encode job: %w", err)
	}
	cmd := exec.CommandContext(ctx, s.Argv[0], s.Argv[1:]...)
	cmd.Env = append(append(os.Environ(), s.Env...), job.Env...)
	cmd.Stdin = bytes.NewReader(in)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	runErr := cmd.Run()
	if ctx.Err() != nil {
		return Reply{}, ctx.Err()
	}
	var r Reply
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		msg := strings.TrimSpace(errOut.String())
		if runErr != nil {
			return Reply{}, fmt.Errorf("worker for %s: %w: %s", job.describe(), runErr, msg)
		}
		return Reply{}, fmt.Errorf("worker for %s: bad reply: %w", job.describe(), err)
	}
	if r.Err != "" {
		return r, errors.New(r.Err)
	}
	return r, nil
}

func (j Job) describe() string {
	switch {
	case j.Kind == "dgemm":
		return fmt.Sprintf("dgemm %dx%dx%d on %s", j.N, j.M, j.K, threadsWord(len(j.CPUs)))
	case j.Kind == "dnn" && j.DNN != nil:
		return fmt.Sprintf("oneDNN %s on %s", j.DNN, threadsWord(len(j.CPUs)))
	}
	return fmt.Sprintf("%s on %s", j.Kernel, threadsWord(len(j.CPUs)))
}

// Worker serves one job: it reads a Job from r, runs it and writes the
// Reply to w. rprof's main calls it when started with WorkerArg; it returns
// the process's exit status.
func Worker(ctx context.Context, r io.Reader, w io.Writer) int {
	var job Job
	var reply Reply
	if err := json.NewDecoder(r).Decode(&job); err != nil {
		reply.Err = fmt.Sprintf("worker: read job: %v", err)
	} else {
		reply = runJob(ctx, job)
	}
	if err := json.NewEncoder(w).Encode(reply); err != nil || reply.Err != "" {
		return 1
	}
	return 0
}

func runJob(ctx context.Context, job Job) Reply {
	var (
		r   Reply
		err error
	)
	run, err := jobRunner(job.Kind)
	if err == nil {
		r, err = run(ctx, job)
	}
	if err != nil {
		r.Err = err.Error()
	}
	return r
}

// computeByName finds a compute kernel this CPU can run.
func computeByName(name string) (kernels.Compute, error) {
	ok, skipped := kernels.ComputeKernels()
	for _, k := range ok {
		if k.Name == name {
			return k, nil
		}
	}
	for _, s := range skipped {
		if s.Name == name {
			return kernels.Compute{}, fmt.Errorf("kernel %s: %s", name, s.Reason)
		}
	}
	return kernels.Compute{}, fmt.Errorf("no kernel %q", name)
}

func runCompute(ctx context.Context, job Job) (Reply, error) {
	k, err := computeByName(job.Kernel)
	if err != nil {
		return Reply{}, err
	}
	if job.Iters <= 0 || len(job.CPUs) == 0 {
		return Reply{}, fmt.Errorf("compute job for %s: no iterations or CPUs", k.Name)
	}
	work := float64(job.Iters) * k.FlopsPerIter * float64(len(job.CPUs))
	body := func(int) { k.Run(job.Iters) }
	var in stats.Inner
	err = affinity.RunGang(job.CPUs, func(g *affinity.Gang) error {
		g.Run(body) // one untimed sample warms up the clock and the vector units
		var err error
		in, err = stats.Iterate(ctx, job.Inner, job.Best, func() (float64, time.Duration, error) {
			d := g.Run(body)
			return roofline.Rate(work, d.Seconds()), d, nil
		})
		return err
	})
	if err != nil {
		return Reply{}, err
	}
	return Reply{Inner: in, MHz: cpuMHz(job.CPUs[0])}, nil
}

// loadedBLAS keeps the libraries this process has opened: a library cannot
// be unloaded, so in-process invocations reuse it.
var loadedBLAS sync.Map // path → *BLAS

func blasFor(path string) (*BLAS, error) {
	if b, ok := loadedBLAS.Load(path); ok {
		return b.(*BLAS), nil
	}
	b, err := LoadBLAS(path)
	if err != nil {
		return nil, err
	}
	loadedBLAS.Store(path, b)
	return b, nil
}

// placeLibraryThreads locks the calling goroutine to its thread, and
// pins it to the CPU of a one-CPU scope before a library is loaded, so the
// library's thread pool inherits the mask too; wider scopes use the
// process's mask (see docs/roofs.md). restore undoes both.
func placeLibraryThreads(cpus []int) (restore func(), err error) {
	runtime.LockOSThread()
	if len(cpus) != 1 {
		return runtime.UnlockOSThread, nil
	}
	if restore, err = affinity.Pin(cpus[0]); err != nil {
		runtime.UnlockOSThread()
		return nil, err
	}
	runtime.UnlockOSThread() // Pin holds its own lock
	return restore, nil
}

func runDgemm(ctx context.Context, job Job) (Reply, error) {
	if job.N <= 0 || job.M <= 0 || job.K <= 0 || len(job.CPUs) == 0 {
		return Reply{}, fmt.Errorf("dgemm job: bad shape %dx%dx%d or no CPUs", job.N, job.M, job.K)
	}
	// The matrices are first-touched from this thread.
	restore, err := placeLibraryThreads(job.CPUs)
	if err != nil {
		return Reply{}, err
	}
	defer restore()
	lib, err := blasFor(job.BLAS)
	if err != nil {
		return Reply{}, err
	}
	lib.SetThreads(len(job.CPUs))
	a, b, c := kernels.Alloc(job.N*job.K), kernels.Alloc(job.K*job.M), kernels.Alloc(job.N*job.M)
	for i := range a {
		a[i] = 1 + float64(i%7)/8
	}
	for i := range b {
		b[i] = 1 - float64(i%5)/8
	}
	fill(c, 0)
	// Pre-heat with a full call, as seed 000 and the C loop it is
	// compared with do: it starts the library's threads and faults in
	// its packing buffers. After a small call instead, the first full
	// call ran a quarter slower than the later ones (docs/roofs.md);
	// where the time budget holds one call, that first call was the
	// figure, and the search favoured shapes small enough for several.
	lib.Dgemm(job.N, job.M, job.K, a, b, c)
	work := dgemmFlops(job.N, job.M, job.K)
	in, err := stats.Iterate(ctx, job.Inner, job.Best, func() (float64, time.Duration, error) {
		t0 := time.Now()
		lib.Dgemm(job.N, job.M, job.K, a, b, c)
		d := time.Since(t0)
		return roofline.Rate(work, d.Seconds()), d, nil
	})
	if err != nil {
		return Reply{}, err
	}
	return Reply{Inner: in, MHz: cpuMHz(job.CPUs[0]), BLAS: lib}, nil
}
