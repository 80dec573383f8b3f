package dnnbench

import (
	"errors"
	"slices"
	"testing"
)

func TestBenchBindingBindsTheAllowedCPUsUnlessTheUserDid(t *testing.T) {
	tests := []struct {
		name       string
		allowed    []int
		allowedErr error
		threads    int
		env        map[string]string
		wantEnv    []string
		wantHow    string
	}{
		{"two threads on the guest's two CPUs", []int{0, 1}, nil, 2, nil,
			[]string{"OMP_PROC_BIND=close", "OMP_PLACES={0},{1}"},
			"bound one to each of CPUs 0,1 (OMP_PROC_BIND=close, OMP_PLACES={0},{1})"},
		{"the library's own count: every allowed CPU", []int{0, 1}, nil, 0, nil,
			[]string{"OMP_PROC_BIND=close", "OMP_PLACES={0},{1}"},
			"bound one to each of CPUs 0,1 (OMP_PROC_BIND=close, OMP_PLACES={0},{1})"},
		{"one thread takes the first allowed CPU", []int{0, 1}, nil, 1, nil,
			[]string{"OMP_PROC_BIND=close", "OMP_PLACES={0}"},
			"bound to CPU 0 (OMP_PROC_BIND=close, OMP_PLACES={0})"},
		{"a cpuset without CPU 0", []int{1, 3}, nil, 2, nil,
			[]string{"OMP_PROC_BIND=close", "OMP_PLACES={1},{3}"},
			"bound one to each of CPUs 1,3 (OMP_PROC_BIND=close, OMP_PLACES={1},{3})"},
		{"more threads than allowed CPUs share them", []int{1}, nil, 2, nil,
			[]string{"OMP_PROC_BIND=close", "OMP_PLACES={1}"},
			"bound to and sharing the allowed CPU 1 (OMP_PROC_BIND=close, OMP_PLACES={1})"},
		{"the user's OMP_PROC_BIND is kept", []int{0, 1}, nil, 2, map[string]string{"OMP_PROC_BIND": "false"},
			nil, "placed as the environment says (OMP_PROC_BIND=false)"},
		{"the user's places are kept", []int{0, 1}, nil, 2, map[string]string{"OMP_PLACES": "{1},{0}"},
			nil, "placed as the environment says (OMP_PLACES={1},{0})"},
		{"libgomp's GOMP_CPU_AFFINITY is kept", []int{0, 1}, nil, 2, map[string]string{"GOMP_CPU_AFFINITY": "1 0"},
			nil, "placed as the environment says (GOMP_CPU_AFFINITY=1 0)"},
		{"unknown affinity leaves the threads unbound", nil, errors.New("read cpu affinity: not supported"), 2, nil,
			nil, "unbound (allowed CPUs unknown: read cpu affinity: not supported)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := BindingFor(tt.allowed, tt.allowedErr, tt.threads, func(k string) string { return tt.env[k] })
			if !slices.Equal(b.Env, tt.wantEnv) || b.How != tt.wantHow {
				t.Errorf("BindingFor = %q, %q; want %q, %q", b.Env, b.How, tt.wantEnv, tt.wantHow)
			}
		})
	}
}
