package dnnbench

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rprof/rprof/dnn"
	"github.com/rprof/rprof/internal/stats"
)

// ErrNoLibrary is wrapped when libdnnl cannot be loaded.
var ErrNoLibrary = errors.New("cannot load the oneDNN library")

// Libraries are the names Open loads, the first that loads wins:
// upstream's 3.x soname, the one of Debian 13's libdnnl3.6 (oneDNN 3.7),
// then 2.x's (Debian 12's libdnnl2).
var Libraries = []string{"libdnnl.so.3", "libdnnl.so.3.6", "libdnnl.so.2"}

// Package names the Debian packages that provide the library.
const Package = "libdnnl2 (Debian 12, oneDNN 2.x) or libdnnl3.6 (Debian 13, oneDNN 3.7)"

// VersionError refuses a oneDNN whose C API the harness does not speak.
type VersionError struct{ Version Version }

func (e *VersionError) Error() string {
	return fmt.Sprintf("oneDNN %s: the harness speaks the 2.x and 3.x C APIs only", e.Version)
}

// Version is the library's dnnl_version().
type Version struct {
	Major, Minor, Patch int
	Hash                string
	// CPURuntime is the threading runtime: "OpenMP", "TBB", "sequential",
	// "threadpool".
	CPURuntime string
}

func (v Version) String() string { return fmt.Sprintf("v%d.%d.%d", v.Major, v.Minor, v.Patch) }

// Options say how problems are run.
type Options struct {
	// Threads sets the library's thread count (OpenMP runtime only); 0
	// leaves it.
	Threads int
	// Cold evicts the caches before every timed execution by writing
	// FlushBytes; warm runs execute WarmUp times before timing.
	Cold       bool
	FlushBytes int64
	WarmUp     int
	// Rule stops the repetitions (samples are seconds per execution).
	Rule stats.StopRule
	// NoExec is the overhead run: everything but the executions (library
	// load, primitive creation, memory allocation and filling).
	NoExec bool
}

// Result is one problem's outcome.
type Result struct {
	Problem        Problem
	Implementation string
	Threads        int
	// Record is the primitive as oneDNN's verbose trace would print it:
	// the layouts the library chose, its version. Model is dnn's analytic
	// W and compulsory Q of one execution.
	Record dnn.Record
	Model  dnn.Analytic
	// Seconds summarises the time of one execution (nil for NoExec).
	Seconds *stats.Inner
	// Setup is the time to create the primitive and its memory.
	Setup time.Duration
	// Cold says whether the caches were evicted before each execution.
	Cold bool
}

// api is a loaded oneDNN (core_linux.go: the calls the 2.x and 3.x C
// APIs share; api2_linux.go and api3_linux.go: what each generation does
// its own way).
type api interface {
	version() Version
	setThreads(n int) error
	maxThreads() int
	// create makes the primitive of p and its memory, filled.
	create(p Problem) (primitive, error)
	close()
}

// primitive is a created primitive with its arguments.
type primitive interface {
	implementation() string
	// layout is the format tag the library chose for an argument ("src",
	// "wei", "bia", "dst"); "" when unknown.
	layout(arg string) string
	execute() error
	wait() error
	close()
}

// NeedsMainThread reports whether the command line args (without the
// program name) runs the harness, which must call oneDNN from the
// process's main thread: without cgo, Go gives its other threads 16 KiB
// system stacks, and oneDNN's kernels (the gemm-based convolution among
// them) need more than that on the calling thread; the main thread runs
// on the process stack. The caller keeps the main goroutine locked to the
// main thread for such a command.
func NeedsMainThread(args []string) bool {
	return len(args) > 1 && args[0] == "dnn" && args[1] == "bench"
}

// ErrThreadsUnset is wrapped when Options.Threads cannot be applied: the
// library's threading runtime offers rprof no way to set it.
var ErrThreadsUnset = errors.New("cannot set the thread count")

// Library is a loaded oneDNN. Its methods must be called from the main
// thread (NeedsMainThread).
type Library struct{ api api }

// Version is the loaded library's version.
func (l *Library) Version() Version { return l.api.version() }

// Close releases the engine and stream.
func (l *Library) Close() { l.api.close() }

// RunAll runs each problem in turn under o, up to the first that fails
// or an interruption (ctx's error).
func (l *Library) RunAll(ctx context.Context, problems []Problem, o Options) ([]Result, error) {
	var results []Result
	for _, p := range problems {
		r, err := l.Run(ctx, p, o)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if err != nil {
			return nil, err
		}
		results = append(results, r)
	}
	return results, nil
}

// Run runs p under o.
func (l *Library) Run(ctx context.Context, p Problem, o Options) (Result, error) {
	if o.Threads > 0 {
		if err := l.api.setThreads(o.Threads); err != nil {
			return Result{}, err
		}
	}
	res := Result{Problem: p, Threads: l.api.maxThreads(), Cold: o.Cold}
	start := time.Now()
	prim, err := l.api.create(p)
	if err != nil {
		return res, err
	}
	defer prim.close()
	res.Setup = time.Since(start)
	res.Implementation = prim.implementation()
	res.Record = p.record(res.Implementation, prim.layout)
	res.Record.Version = l.api.version().String()
	res.Model = dnn.Model(&res.Record)
	if o.NoExec {
		return res, nil
	}
	var flush []byte
	if o.Cold {
		flush = make([]byte, o.FlushBytes)
	}
	exec := func(n int) (time.Duration, error) {
		t0 := time.Now()
		for range n {
			if err := prim.execute(); err != nil {
				return 0, err
			}
		}
		if err := prim.wait(); err != nil {
			return 0, err
		}
		return time.Since(t0), nil
	}
	// batch is the executions per warm sample: enough for a millisecond,
	// so the clock's resolution does not count.
	batch := 1
	if !o.Cold {
		for range max(o.WarmUp, 1) {
			d, err := exec(1)
			if err != nil {
				return res, err
			}
			if d > 0 && d < time.Millisecond {
				batch = int(time.Millisecond/d) + 1
			}
		}
	}
	in, err := stats.Iterate(ctx, o.Rule, 0, func() (float64, time.Duration, error) {
		if o.Cold {
			evict(flush)
		}
		d, err := exec(batch)
		if err != nil {
			return 0, 0, err
		}
		return d.Seconds() / float64(batch), d, nil
	})
	if err != nil {
		return res, err
	}
	res.Seconds = &in
	return res, nil
}

// evict writes every cache line of buf, pushing the problem's data out of
// the caches.
func evict(buf []byte) {
	for i := 0; i < len(buf); i += 64 {
		buf[i]++
	}
}
