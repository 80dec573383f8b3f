package ptx

import (
	"regexp"
	"strings"
	"testing"

	"github.com/rprof/rprof/internal/testutil"
)

// TestGeneratedCodeIsUpToDate reruns the generator and compares its output
// with the committed files.
func TestGeneratedCodeIsUpToDate(t *testing.T) {
	testutil.CheckGenerated(t, "./internal/gen", "./gpu/ptx", "kernels.ptx", "zkernels.go")
}

var entry = regexp.MustCompile(`\.visible \.entry (\w+)\(([^)]*)\)`)

// The table and the module agree: one entry per kernel, in order, each
// with the parameters its kind takes.
func TestTableMatchesTheModule(t *testing.T) {
	params := map[Kind]string{
		FMA:       ".param .u64 out, .param .u64 iters",
		Bandwidth: ".param .u64 a, .param .u64 b, .param .u64 c, .param .u64 n, .param .u64 passes",
		Ladder:    ".param .u64 a, .param .u64 n, .param .u64 passes",
	}
	ms := entry.FindAllStringSubmatch(string(Module), -1)
	if len(ms) != len(Kernels) {
		t.Fatalf("module has %d entries, table %d", len(ms), len(Kernels))
	}
	for i, k := range Kernels {
		if ms[i][1] != k.Name || ms[i][2] != params[k.Kind] {
			t.Errorf("entry %d: %s(%s), table %s of kind %d", i, ms[i][1], ms[i][2], k.Name, k.Kind)
		}
		if k.Kind == FMA && (k.SASSPerIter != k.ILP*k.Unroll || k.Flops%(2*k.SASSPerIter) != 0) {
			t.Errorf("%s: %d FMAs per iteration, %d FLOPs", k.Name, k.SASSPerIter, k.Flops)
		}
	}
	if k, ok := Find("fma_fp16_ilp4_u8"); !ok || k.Flops != 2*2*4*8 || k.SASS != "HFMA2" {
		t.Errorf("fma_fp16_ilp4_u8 = %+v, %v", k, ok)
	}
	if _, ok := Find("nope"); ok {
		t.Error("found nope")
	}
	if !strings.HasPrefix(string(Module), "// Code generated") {
		t.Error("module lacks its generated mark")
	}
}

func TestClockRecordsSMClock(t *testing.T) {
	for _, tc := range []struct {
		rec  ClockRecord
		want float64
	}{
		{ClockRecord{StartNs: 1000, StartCycles: 5000, EndNs: 2_001_000, EndCycles: 5000 + 3_960_000}, 1980},
		{ClockRecord{StartNs: 1000, StartCycles: 5000, EndNs: 1000, EndCycles: 9000}, 0}, // the timer did not move
		{}, // never written
	} {
		if got := tc.rec.SMClockMHz(); got != tc.want {
			t.Errorf("%+v: %g MHz, want %g", tc.rec, got, tc.want)
		}
	}
}
