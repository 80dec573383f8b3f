package roofs

import (
	"math"
	"testing"

	"github.com/rprof/rprof/internal/testutil"
)

func loadTestBLAS(t *testing.T) *BLAS {
	t.Helper()
	b, err := LoadBLAS("")
	testutil.SkipUnlessHardware(t, err, errNoBLAS)
	return b
}

func TestDgemmComputesTheProductWithEachInstalledLibrary(t *testing.T) {
	loadTestBLAS(t)
	for _, path := range blasCandidates {
		b, err := LoadBLAS(path)
		if err != nil {
			continue
		}
		t.Run(path, func(t *testing.T) { checkDgemm(t, b) })
	}
}

func checkDgemm(t *testing.T, b *BLAS) {
	b.SetThreads(1)
	// A 2×3, B 3×2 in row major order.
	a := []float64{1, 2, 3, 4, 5, 6}
	bm := []float64{7, 8, 9, 10, 11, 12}
	c := make([]float64, 4)
	b.Dgemm(2, 2, 3, a, bm, c)
	want := []float64{58, 64, 139, 154}
	for i := range want {
		if math.Abs(c[i]-want[i]) > 1e-12 {
			t.Fatalf("%s: C = %v, want %v", b.Library, c, want)
		}
	}
	if b.Library == "unknown" || b.Version == "" {
		t.Errorf("library %q version %q: not identified", b.Library, b.Version)
	}
	t.Logf("%s %s core %s (%s)", b.Library, b.Version, b.CoreName, b.Path)
}

func TestLoadBLASNamesAMissingLibrary(t *testing.T) {
	_, err := LoadBLAS("/nonexistent/libnothing.so")
	if err == nil {
		t.Fatal("loading a missing library succeeded")
	}
}
