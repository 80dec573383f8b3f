package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/rprof/rprof/dnnbench"
	"github.com/rprof/rprof/internal/docfile"
	"github.com/rprof/rprof/roofline"
)

// TestRoofsDNNDrawsAOneDNNCeiling measures the inner product's ceiling on
// one thread through worker processes (this test binary plays the worker,
// on its main thread: see TestMain), the smallest run that does.
func TestRoofsDNNDrawsAOneDNNCeiling(t *testing.T) {
	if testing.Short() {
		t.Skip("measures for several seconds")
	}
	lib, err := dnnbench.Open()
	if err != nil {
		t.Skipf("oneDNN does not load (%v); scripts/test.sh installs libdnnl2", err)
	}
	v := lib.Version()
	lib.Close()
	out := filepath.Join(t.TempDir(), "roofs.json")
	code, _, stderr := rprofCLI(t, "roofs", "--dnn", "ip", "--quick", "--threads", "1", "--no-dgemm", "--max-memory", "64M", "-o", out)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	r, err := docfile.ReadRoofs(out)
	if err != nil {
		t.Fatal(err)
	}
	var fma, ceiling *roofline.ComputeRoof
	for i, c := range r.Compute {
		switch {
		case c.Kind == roofline.ComputeKindLibrary:
			ceiling = &r.Compute[i]
		case c.Name == "avx512-fma-fp32" || c.Name == "avx2-fma-fp32" && fma == nil:
			fma = &r.Compute[i]
		}
	}
	if ceiling == nil {
		t.Fatalf("no library roof in the document; table:\n%s", stderr)
	}
	t.Logf("%s: %.4g GFLOP/s [%.4g, %.4g] (oneDNN %s)", ceiling.Name, ceiling.GFlops, ceiling.CI.Lo, ceiling.CI.Hi, v)
	checkIPCeiling(t, ceiling, v.String())
	checkCeilingBelowFMAPeak(t, ceiling, fma)
	if !strings.Contains(stderr, ceiling.Name) {
		t.Errorf("the table does not show the library roof:\n%s", stderr)
	}
}

// checkIPCeiling checks that roof is the ip experiment's, named after its
// implementation, with the library's version and the right W.
func checkIPCeiling(t *testing.T, ceiling *roofline.ComputeRoof, version string) {
	t.Helper()
	l := ceiling.Library
	// W is 2·MB·OC·IC plus the bias, MB·OC.
	if !strings.HasPrefix(ceiling.Name, "onednn-ip ") || !strings.HasSuffix(ceiling.Name, " fp32") || ceiling.Threads != 1 || ceiling.Precision != roofline.Single ||
		l == nil || l.Version != version || l.Primitive != "inner_product" || l.Implementation == "" || !strings.Contains(ceiling.Name, l.Implementation) || l.WorkFlops != 2*128*1024*1024+128*1024 {
		t.Errorf("library roof %+v of %+v: want the ip experiment's, named after its implementation, with the library's version", *ceiling, l)
	}
	if !(ceiling.GFlops > 0) || ceiling.CI.Lo > ceiling.GFlops || ceiling.CI.Hi < ceiling.GFlops {
		t.Errorf("library roof %.4g GFLOP/s outside its interval [%.4g, %.4g]", ceiling.GFlops, ceiling.CI.Lo, ceiling.CI.Hi)
	}
}

// checkCeilingBelowFMAPeak checks that a library ceiling does not exceed
// the fp32 FMA peak: the theoretical one where known, else the measured
// one with room for the clock to have differed between the two.
func checkCeilingBelowFMAPeak(t *testing.T, ceiling, fma *roofline.ComputeRoof) {
	t.Helper()
	switch {
	case fma == nil:
		t.Errorf("no fp32 FMA roof to bound the ceiling by")
	case fma.TheoreticalGFlops > 0:
		if ceiling.GFlops > fma.TheoreticalGFlops {
			t.Errorf("library roof %.4g GFLOP/s above the fp32 FMA peak's theoretical %.4g", ceiling.GFlops, fma.TheoreticalGFlops)
		}
	default:
		if ceiling.GFlops > 1.1*fma.GFlops {
			t.Errorf("library roof %.4g GFLOP/s over 110%% of the measured fp32 FMA peak %.4g (no theoretical peak here)", ceiling.GFlops, fma.GFlops)
		}
	}
}
