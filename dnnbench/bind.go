package dnnbench

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/rprof/rprof/internal/affinity"
)

// Binding is how the library's OpenMP threads are bound.
type Binding struct {
	// Env is added to the environment before the library loads.
	Env []string
	// How says it, after "N threads": "bound one to each of CPUs 0,1
	// (OMP_PROC_BIND=close, OMP_PLACES={0},{1})".
	How string
}

// Bind puts the binding of threads (see BindingFor) in the environment;
// call it before the library loads. libgomp reads its variables once,
// when libdnnl loads it; os.Setenv reaches the C environment it reads
// (purego links cgo's or its own setenv hook), as the Linux test of
// cmd/rprof checks in a fresh process.
func Bind(threads int) Binding {
	allowed, err := affinity.Allowed()
	b := BindingFor(allowed, err, threads, os.Getenv)
	for _, kv := range b.Env {
		k, v, _ := strings.Cut(kv, "=")
		os.Setenv(k, v)
	}
	return b
}

// BindingFor binds the library's threads one to each of the first
// threads CPUs the process may run on (allowed: its affinity, which
// taskset and cgroup cpusets narrow), all of them when threads is 0, as
// the roofs' oneDNN ceilings are measured. A user's own OMP_PROC_BIND,
// OMP_PLACES or GOMP_CPU_AFFINITY (getenv) is kept: they are how one
// studies the binding.
func BindingFor(allowed []int, allowedErr error, threads int, getenv func(string) string) Binding {
	if user := affinity.OpenMPUserBinding(getenv); len(user) > 0 {
		return Binding{How: "placed as the environment says (" + strings.Join(user, ", ") + ")"}
	}
	if allowedErr != nil || len(allowed) == 0 {
		return Binding{How: fmt.Sprintf("unbound (allowed CPUs unknown: %v)", allowedErr)}
	}
	cpus := allowed
	if threads > 0 && threads < len(allowed) {
		cpus = allowed[:threads]
	}
	env := affinity.OpenMPEnv(cpus)
	how := "bound one to each of " + cpuList(cpus)
	switch {
	case threads > len(allowed):
		how = "bound to and sharing the allowed " + cpuList(cpus)
	case len(cpus) == 1:
		how = "bound to " + cpuList(cpus)
	}
	return Binding{Env: env, How: how + " (" + strings.Join(env, ", ") + ")"}
}

// Describe says the binding for a table's header; it is OpenMP's, and
// means nothing to another runtime.
func (b Binding) Describe(v Version) string {
	if v.CPURuntime != "OpenMP" {
		return "as the " + v.CPURuntime + " runtime places them"
	}
	return b.How
}

// cpuList is "CPU 1" or "CPUs 0,1".
func cpuList(cpus []int) string {
	s := make([]string, len(cpus))
	for i, c := range cpus {
		s[i] = strconv.Itoa(c)
	}
	if len(cpus) == 1 {
		return "CPU " + s[0]
	}
	return "CPUs " + strings.Join(s, ",")
}
