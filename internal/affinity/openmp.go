package affinity

import (
	"strconv"
	"strings"
)

// OpenMPEnv is the environment that binds an OpenMP runtime's threads one
// to each of cpus, in order: OMP_PROC_BIND=close and OMP_PLACES with one
// place per CPU ("{1},{3}"). The runtime reads it when it loads, so it
// must be in the environment before the library is. Unbound threads on
// a busy machine wait at OpenMP's barriers for a descheduled one, which
// cost a oneDNN convolution most of its rate (docs/dnn.md).
func OpenMPEnv(cpus []int) []string {
	places := make([]string, len(cpus))
	for i, c := range cpus {
		places[i] = "{" + strconv.Itoa(c) + "}"
	}
	return []string{"OMP_PROC_BIND=close", "OMP_PLACES=" + strings.Join(places, ",")}
}

// OpenMPUserBinding lists the variables of getenv's environment that
// already bind an OpenMP runtime's threads ("OMP_PROC_BIND=spread"):
// OMP_PROC_BIND, OMP_PLACES and libgomp's GOMP_CPU_AFFINITY.
func OpenMPUserBinding(getenv func(string) string) []string {
	var set []string
	for _, k := range []string{"OMP_PROC_BIND", "OMP_PLACES", "GOMP_CPU_AFFINITY"} {
		if v := getenv(k); v != "" {
			set = append(set, k+"="+v)
		}
	}
	return set
}
