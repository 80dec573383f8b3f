package roofs

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rprof/rprof/internal/stats"
	"github.com/rprof/rprof/roofline"
)

// The recheck measures each roof's point for real; the sweep's figures are
// set far from anything the kernel can do, so that the outcome is certain.
func TestRecheckKeepsTheHigherFigureAndFlagsAMove(t *testing.T) {
	ks := bandwidthKernelsOrSkip(t)
	const ws = 32 << 10
	ops, err := allocOperands(context.Background(), ks, []int{0}, ws)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		sweep     float64 // GB/s
		wantSweep bool    // the sweep's figure stays the roof
	}{
		{"a sweep held far down is replaced by the recheck", 0.001, false},
		{"a sweep far above the recheck stays the roof", 1e9, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := &Report{}
			rep.Roofs.Tuning.StopReasons = map[string]int{}
			ci := roofline.Interval{Lo: tt.sweep * 0.99, Hi: tt.sweep * 1.01}
			rep.Roofs.Bandwidth = []roofline.BandwidthRoof{{Level: "L1", Threads: 1, GBytesPerS: tt.sweep, CI: ci, WorkingSetBytes: ws}}
			rep.Details = []Detail{{Kind: "bandwidth", Name: "L1", Threads: 1, Invocations: 1, Iterations: 48, Value: tt.sweep, CI: ci,
				Reasons: map[stats.StopReason]int{stats.StopConverged: 1}}}
			r := &run{rep: rep, tally: &tally{tuning: &rep.Roofs.Tuning},
				swept: []sweptRoof{{kernel: ks[0], cpus: []int{0}, ops: ops, at: time.Now()}}}
			if err := recheckBandwidthRoofs(context.Background(), r); err != nil {
				t.Fatal(err)
			}
			roof, d := rep.Roofs.Bandwidth[0], rep.Details[0]
			if kept := roof.GBytesPerS == tt.sweep; kept != tt.wantSweep {
				t.Errorf("roof %v GB/s after a sweep of %v: kept the sweep's %v, want %v", roof.GBytesPerS, tt.sweep, kept, tt.wantSweep)
			}
			if roof.CI.Lo > roof.GBytesPerS || roof.CI.Hi < roof.GBytesPerS || d.Value != roof.GBytesPerS || d.CI != roof.CI {
				t.Errorf("roof %v %v, detail %v %v: the figure and its interval do not go together", roof.GBytesPerS, roof.CI, d.Value, d.CI)
			}
			if d.Invocations != 2 || d.Iterations <= 48 {
				t.Errorf("detail: %d invocations, %d iterations; want the recheck's added to the sweep's", d.Invocations, d.Iterations)
			}
			var moved []string
			for _, f := range rep.Roofs.Flags {
				if f.Code == roofline.FlagBandwidthMoved {
					moved = append(moved, f.Message)
				}
			}
			if len(moved) != 1 || !strings.Contains(moved[0], "L1 (1 thread)") {
				t.Errorf("flags %q: want one %s naming L1 (1 thread)", moved, roofline.FlagBandwidthMoved)
			}
			if r.swept != nil {
				t.Error("the recheck kept the operands")
			}
		})
	}
}
