package affinity

import (
	"slices"
	"testing"
)

func TestOpenMPEnvPlacesOneThreadOnEachCPU(t *testing.T) {
	tests := []struct {
		name   string
		cpus   []int
		places string
	}{
		{"one CPU", []int{0}, "OMP_PLACES={0}"},
		{"both CPUs of the guest", []int{0, 1}, "OMP_PLACES={0},{1}"},
		{"a cpuset without CPU 0", []int{1}, "OMP_PLACES={1}"},
		{"a sparse cpuset, in its order", []int{2, 5, 7}, "OMP_PLACES={2},{5},{7}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := []string{"OMP_PROC_BIND=close", tt.places}
			if got := OpenMPEnv(tt.cpus); !slices.Equal(got, want) {
				t.Errorf("OpenMPEnv(%v) = %q, want %q", tt.cpus, got, want)
			}
		})
	}
}

func TestOpenMPUserBindingListsTheVariablesSet(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want []string
	}{
		{"none", map[string]string{"OMP_NUM_THREADS": "2"}, nil},
		{"an explicit false", map[string]string{"OMP_PROC_BIND": "false"}, []string{"OMP_PROC_BIND=false"}},
		{"places only", map[string]string{"OMP_PLACES": "cores"}, []string{"OMP_PLACES=cores"}},
		{"libgomp's own", map[string]string{"GOMP_CPU_AFFINITY": "1"}, []string{"GOMP_CPU_AFFINITY=1"}},
		{"both", map[string]string{"OMP_PROC_BIND": "spread", "OMP_PLACES": "{1},{0}"}, []string{"OMP_PROC_BIND=spread", "OMP_PLACES={1},{0}"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := OpenMPUserBinding(func(k string) string { return tt.env[k] })
			if !slices.Equal(got, tt.want) {
				t.Errorf("OpenMPUserBinding = %q, want %q", got, tt.want)
			}
		})
	}
}
