package gate

import (
	"math"
	"strings"
	"testing"

	"github.com/rprof/rprof/internal/stats"
	"github.com/rprof/rprof/internal/unit"
)

// TestIntervalWording: a single repetition has no spread to print, equal
// bounds print once (issue 14, "Wording").
func TestIntervalWording(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name string
		v    Value
		want string
	}{
		{"single repetition", Value{Known: true, Center: 5e-3, Lo: 5e-3, Hi: 5e-3 * (1 + 2e-16), N: 1}, "(n=1, no interval)"},
		{"no interval", Value{Known: true, Center: 5e-3, Lo: nan, Hi: nan, N: 3}, ""},
		{"interval", Value{Known: true, Center: 1, Lo: 0.98, Hi: 1.02, N: 5}, "± 2%"},
	}
	for _, tt := range tests {
		if got := interval(tt.v); got != tt.want {
			t.Errorf("%s: interval = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestSpanCollapsesEqualBounds(t *testing.T) {
	tests := []struct {
		lo, hi float64
		want   string
	}{
		{1.03, 1.03, "103.0%"},
		{1.0300001, 1.0300002, "103.0%"},
		{1.01, 1.05, "101.0% to 105.0%"},
	}
	for _, tt := range tests {
		if got := span(tt.lo, tt.hi, unit.Percent); got != tt.want {
			t.Errorf("span(%v, %v) = %q, want %q", tt.lo, tt.hi, got, tt.want)
		}
	}
}

func TestMinFractionWording(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name    string
		v       Value
		want    string
		notWant string
	}{
		{"equal bounds", Value{Known: true, Center: 1.03, Lo: 1.03, Hi: 1.03, N: 5}, "fraction of attainable 103.0%, CI 103.0%, minimum", " to "},
		{"single repetition", Value{Known: true, Center: 1.03, Lo: 1.03, Hi: 1.03, N: 1}, "fraction of attainable 103.0% (n=1, no interval), minimum", "CI"},
		{"interval", Value{Known: true, Center: 1.03, Lo: 1.01, Hi: 1.05, N: 5}, "fraction of attainable 103.0%, CI 101.0% to 105.0%, minimum", ""},
		{"no interval", Value{Known: true, Center: 1.03, Lo: nan, Hi: nan, N: 5}, "fraction of attainable 103.0%, minimum", "CI"},
	}
	for _, tt := range tests {
		c := minFractionCheck(&Row{New: tt.v}, 0.5)
		if !strings.Contains(c.Detail, tt.want) || (tt.notWant != "" && strings.Contains(c.Detail, tt.notWant)) {
			t.Errorf("%s: %q, want %q without %q", tt.name, c.Detail, tt.want, tt.notWant)
		}
	}
}

func TestRelIntervalCollapsesEqualBounds(t *testing.T) {
	tests := []struct {
		lo, hi float64
		want   string
	}{
		{0.03, 0.03, ", 95% CI 3%"},
		{0.01, 0.05, ", 95% CI 1% to 5%"},
	}
	for _, tt := range tests {
		c := &stats.Comparison{Lo: tt.lo, Hi: tt.hi, Base: 1}
		if got := relInterval(c, 1, DefaultOptions); got != tt.want {
			t.Errorf("relInterval(%v, %v) = %q, want %q", tt.lo, tt.hi, got, tt.want)
		}
	}
}
