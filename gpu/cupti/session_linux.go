package cupti

import (
	_ "embed"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/rprof/rprof/gpu/metrics"
	"github.com/rprof/rprof/internal/rundir"
)

// The injection library (inject/build.sh).
//
//go:embed inject/librprof-cupti.so
var injection []byte

// The environment the injection library is loaded by and reads.
const (
	// InjectionEnv is CUDA's: the driver loads the library it names at
	// cuInit and calls its InitializeInjection.
	InjectionEnv = "CUDA_INJECTION64_PATH"
	// dirEnv names the directory the library writes a file per process to.
	dirEnv = "RPROF_CUPTI_DIR"
	// metricsEnv names the metrics the range profiler counts, joined by
	// commas (none: it stays off).
	metricsEnv = "RPROF_CUPTI_METRICS"
)

const libName = "librprof-cupti.so"

// sessions numbers the sessions of this process, for their directories'
// names.
var sessions atomic.Int64

// Session is one prepared run: a private directory under rprof's runtime
// directory (internal/rundir) holding the injection library and, in out,
// the files the target's processes write. Close removes it.
type Session struct {
	root *rundir.Dir
	name string
	dir  *rundir.Dir
	out  *rundir.Dir
	// Library is the libcupti the target opens ("": the loader's
	// libcupti.so); NVPerf the NVPW host library for the range profiler
	// (FindNVPerf; "": the loader's libnvperf_host.so).
	Library, NVPerf string
}

// NewSession writes the injection library into a new directory under
// the runtime directory runtime (rundir.Default() in rprof). library is
// the libcupti to open (Find), "" for the loader's; the NVPW host
// library beside it is the range profiler's.
func NewSession(runtime, library string) (*Session, error) {
	root, err := rundir.Open(runtime)
	if err != nil {
		return nil, fmt.Errorf("cupti: %w", err)
	}
	s := &Session{root: root, name: fmt.Sprintf("cupti-%d-%d", os.Getpid(), sessions.Add(1)), Library: library}
	if library != "" {
		s.NVPerf = FindNVPerf(library)
	}
	if err := s.prepare(); err != nil {
		s.Close()
		return nil, fmt.Errorf("cupti: %w", err)
	}
	return s, nil
}

func (s *Session) prepare() error {
	// A directory left by a killed rprof of the same PID goes first.
	if err := s.remove(); err != nil {
		return err
	}
	var err error
	if s.dir, err = s.root.Sub(s.name); err != nil {
		return err
	}
	f, err := s.dir.Create(libName)
	if err != nil {
		return err
	}
	_, err = f.Write(injection)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	s.out, err = s.dir.Sub("out")
	return err
}

// Env is base with the variables that load the injection library into
// every process of the target that initialises CUDA, with the range
// profiler counting every metric W and Q are made of (metrics.All),
// replacing any of the same names.
func (s *Session) Env(base []string) []string {
	set := map[string]string{
		InjectionEnv: s.dir.Path() + "/" + libName,
		dirEnv:       s.out.Path(),
		LibraryEnv:   s.Library,
		NVPerfEnv:    s.NVPerf,
		metricsEnv:   strings.Join(metrics.All(), ","),
	}
	var out []string
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := set[k]; !ok {
			out = append(out, kv)
		}
	}
	for _, k := range []string{InjectionEnv, dirEnv, LibraryEnv, NVPerfEnv, metricsEnv} {
		if set[k] != "" {
			out = append(out, k+"="+set[k])
		}
	}
	return out
}

// Read decodes the files the target's processes wrote, in the order of
// their PIDs.
func (s *Session) Read() (Recording, error) {
	names, err := s.out.Names()
	if err != nil {
		return Recording{}, fmt.Errorf("cupti: %w", err)
	}
	var r Recording
	for _, n := range names {
		if _, err := strconv.Atoi(n); err != nil {
			continue
		}
		b, err := s.out.ReadFile(n)
		if err != nil {
			return r, fmt.Errorf("cupti: %w", err)
		}
		p, err := Parse(strings.NewReader(string(b)))
		if err != nil {
			return r, fmt.Errorf("cupti: process %s: %w", n, err)
		}
		r.Processes = append(r.Processes, p)
	}
	sortProcesses(r.Processes)
	return r, nil
}

// Close removes the session's directory.
func (s *Session) Close() error {
	for _, d := range []*rundir.Dir{s.out, s.dir} {
		if d != nil {
			d.Close()
		}
	}
	err := s.remove()
	s.root.Close()
	return err
}

// remove removes the session's directory, its out directory first.
func (s *Session) remove() error {
	d, err := s.root.Sub(s.name)
	if err != nil {
		return err
	}
	err = d.RemoveSub("out")
	d.Close()
	if err != nil {
		return err
	}
	return s.root.RemoveSub(s.name)
}
