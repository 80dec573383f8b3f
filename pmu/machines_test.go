package pmu

import (
	"io/fs"
	"testing"

	"github.com/rprof/rprof/internal/testutil"
)

// machines are the fake trees of real machines (testutil.Machines).
var machines = testutil.Machines

// machineFS returns the sysfs and procfs roots of a fake machine tree.
func machineFS(t testing.TB, name string) (sysfs, procfs fs.FS) {
	t.Helper()
	return testutil.MachineFS(t, name)
}

// seq is lo, lo+1, ..., hi.

func seq(lo, hi int) []int {
	var s []int
	for i := lo; i <= hi; i++ {
		s = append(s, i)
	}
	return s
}
