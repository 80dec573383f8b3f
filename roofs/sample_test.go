package roofs

import (
	"testing"
	"time"
)

func TestBandwidthSampleIsWholePassesOfAboutABaseSample(t *testing.T) {
	tests := []struct {
		name   string
		passes int           // warm-up passes
		d      time.Duration // that the warm-up took
		want   int
	}{
		{"an L1 pass of 57 ns is repeated for 0.2 ms", 17544, time.Millisecond, 3571},
		{"a pass of about a sample is one sample", 1, 250 * time.Microsecond, 1},
		{"a pass of 0.13 ms is rounded to two", 8, 1040 * time.Microsecond, 2},
		{"a DRAM pass of 10 ms is one sample, not cut", 1, 10 * time.Millisecond, 1},
		{"a warm-up timed at zero still gives a finite count", 1, 0, 200000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := samplePasses(tt.passes, tt.d); got != tt.want {
				t.Fatalf("samplePasses(%d, %v) = %d, want %d", tt.passes, tt.d, got, tt.want)
			}
		})
	}
}
