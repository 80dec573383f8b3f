package roofs

import (
	"context"
	"testing"
	"unsafe"

	"github.com/rprof/rprof/internal/affinity"
)

func TestOperandPool(t *testing.T) {
	ks := bandwidthKernelsOrSkip(t)
	allowed, err := affinity.Allowed()
	if err != nil || len(allowed) < 2 {
		t.Skipf("want 2 CPUs to place on, have %v (%v)", allowed, err)
	}
	one, two := allowed[:1], allowed[:2]
	const ws = 8 << 20
	start := func(x []float64) uintptr { return uintptr(unsafe.Pointer(&x[0])) }
	// check says whether ops hold every thread's operands for ws, as
	// first-touched (b = 1, a = 0, c = 2), in disjoint slices.
	check := func(t *testing.T, ops []arrays, threads int) {
		t.Helper()
		nb, nac, _ := operandLens(ks, threads, ws)
		for w, op := range ops {
			if len(op.b) < nb || len(op.a) < nac || len(op.c) < nac {
				t.Fatalf("thread %d: %d, %d, %d elements, want %d of b and %d of a and c", w, len(op.b), len(op.a), len(op.c), nb, nac)
			}
			if op.b[len(op.b)-1] != 1 || op.a[0] != 0 || op.c[len(op.c)-1] != 2 {
				t.Errorf("thread %d: operands not as placed", w)
			}
			if w > 0 && start(op.b) < start(ops[w-1].b)+uintptr(8*len(ops[w-1].b)) && start(op.b) >= start(ops[w-1].b) {
				t.Errorf("threads %d and %d share elements of b", w-1, w)
			}
		}
	}
	tests := []struct {
		name   string
		shared bool
		first  []int
		same   bool // the second scope runs on the first's buffers
	}{
		{"one node: the wider scope reuses the narrower one's pages", true, one, true},
		{"one node: a narrower scope reuses a wider one's", true, two, true},
		{"several nodes: every scope places its own", false, one, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newOperandPool(tt.shared, two)
			a, err := p.operands(context.Background(), ks, tt.first, ws)
			if err != nil {
				t.Fatal(err)
			}
			check(t, a, len(tt.first))
			second := two
			if len(tt.first) == 2 {
				second = one
			}
			b, err := p.operands(context.Background(), ks, second, ws)
			if err != nil {
				t.Fatal(err)
			}
			check(t, b, len(second))
			if same := start(a[0].b) == start(b[0].b); same != tt.same {
				t.Errorf("second scope on the first's buffers: %v, want %v", same, tt.same)
			}
		})
	}
	t.Run("a larger working set places larger buffers", func(t *testing.T) {
		p := newOperandPool(true, two)
		a, _ := p.operands(context.Background(), ks, one, ws)
		b, err := p.operands(context.Background(), ks, one, 4*ws)
		if err != nil {
			t.Fatal(err)
		}
		check(t, b[:1], 1)
		if start(a[0].b) == start(b[0].b) && cap(b[0].b) <= cap(a[0].b) {
			t.Error("the pool kept buffers too small for the larger working set")
		}
	})
}
