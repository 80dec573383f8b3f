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
	// check says whether bufs hold every thread's operands for ws, as
	// first-touched (ones), in disjoint buffers that start on huge-page
	// boundaries as buffers of their own would.
	check := func(t *testing.T, bufs [][]float64, threads int) {
		t.Helper()
		n, _ := operandLen(ks, threads, ws)
		for w, buf := range bufs {
			if len(buf) < n {
				t.Fatalf("thread %d: %d elements, want %d", w, len(buf), n)
			}
			if buf[0] != 1 || buf[len(buf)-1] != 1 {
				t.Errorf("thread %d: operands not as placed", w)
			}
			if start(buf)%(2<<20) != 0 {
				t.Errorf("thread %d: buffer not on a huge-page boundary", w)
			}
			if w > 0 && start(buf) < start(bufs[w-1])+uintptr(8*len(bufs[w-1])) && start(buf) >= start(bufs[w-1]) {
				t.Errorf("threads %d and %d share elements", w-1, w)
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
			if same := start(a[0]) == start(b[0]); same != tt.same {
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
		if start(a[0]) == start(b[0]) && cap(b[0]) <= cap(a[0]) {
			t.Error("the pool kept buffers too small for the larger working set")
		}
	})
}
