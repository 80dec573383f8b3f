package roofs

import (
	"testing"
	"time"
)

func TestBandwidthSampleLastsAboutABaseSample(t *testing.T) {
	const block = 64 // the kernels' loop block, in elements
	tests := []struct {
		name   string
		n      int           // elements per thread
		passes int           // warm-up passes
		d      time.Duration // that the warm-up took
		want   samplePlan
	}{
		{"an L1 pass of 57 ns is repeated for 0.2 ms", 1344, 17544, time.Millisecond, samplePlan{elems: 1344, passes: 3571, chunks: 1}},
		{"a pass of about a sample is one sample", 1 << 20, 1, 250 * time.Microsecond, samplePlan{elems: 1 << 20, passes: 1, chunks: 1}},
		{"a pass under two samples is not cut", 1 << 20, 1, 390 * time.Microsecond, samplePlan{elems: 1 << 20, passes: 1, chunks: 1}},
		{"a DRAM pass of 10 ms is cut into 50 chunks of whole blocks", 22369621, 1, 10 * time.Millisecond, samplePlan{elems: 447360, passes: 1, chunks: 50}},
		{"a pass too short to cut into blocks stays whole", 3 * block, 1, time.Millisecond, samplePlan{elems: 3 * block, passes: 1, chunks: 1}},
		{"a warm-up timed at zero still gives a finite plan", 1344, 1, 0, samplePlan{elems: 1344, passes: 200000, chunks: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := planSample(tt.n, tt.passes, tt.d)
			if got != tt.want {
				t.Fatalf("planSample(%d, %d, %v) = %+v, want %+v", tt.n, tt.passes, tt.d, got, tt.want)
			}
			if got.chunks > 1 && (got.elems%block != 0 || got.elems*got.chunks > tt.n || tt.n-got.elems*got.chunks >= got.chunks*block) {
				t.Errorf("chunks of %d elements: not whole blocks inside the %d elements, or a tail of a block or more per chunk", got.elems, tt.n)
			}
		})
	}
}
