package validate

import (
	"errors"
	"testing"

	"github.com/rprof/rprof/measure"
)

func TestRunKernelRefusesMalformedArguments(t *testing.T) {
	for _, args := range [][]string{
		nil,
		{"compute", "no-such-kernel", "10"},
		{"compute", "x", "ten"},
		{"bandwidth", "avx2", "triad", "64"},
		{"bandwidth", "avx2", "triad", "n", "1"},
		{"other", "a", "b"},
	} {
		if err := RunKernel(args); !errors.Is(err, ErrBadArguments) {
			t.Errorf("RunKernel(%q) = %v, want ErrBadArguments", args, err)
		}
	}
}

func TestChecksRunWhatTheyCheck(t *testing.T) {
	model, err := measure.ParseCacheModel("32K/8,256K/8") // small arrays for the overhead runs
	if err != nil {
		t.Fatal(err)
	}
	for _, backend := range []string{measure.DefaultBackend, measure.BackendEmulate} {
		checks, _ := Checks(backend, model)
		if len(checks) == 0 {
			t.Fatalf("%s: no checks", backend)
		}
		for _, c := range checks {
			if c.Work < 0 && c.Bytes < 0 {
				t.Errorf("%s %s checks neither W nor Q", backend, c.Name)
			}
			if backend == measure.BackendEmulate && len(c.Args) > 1 && c.Args[1] == "avx512" {
				t.Errorf("emulate runs %s, which QEMU does not emulate", c.Name)
			}
			// The overhead run is the same kernel with no work: it must
			// name a kernel RunKernel knows (zero iterations or passes).
			if err := RunKernel(c.Empty); err != nil {
				t.Errorf("%s: overhead run %q: %v", c.Name, c.Empty, err)
			}
		}
	}
}

func TestFailedOnlyOnAFailingRow(t *testing.T) {
	if Failed([]Row{{Verdict: OK}, {Verdict: Skipped}}) {
		t.Error("ok and skipped rows failed")
	}
	if !Failed([]Row{{Verdict: OK}, {Verdict: Fail}}) {
		t.Error("a FAIL row did not fail")
	}
}
