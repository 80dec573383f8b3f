package unit

import (
	"math"
	"testing"
)

func TestFormatters(t *testing.T) {
	tests := []struct {
		name string
		got  string
		want string
	}{
		{"Value keeps three significant digits", Value(116.4), "116"},
		{"Value of a tenth", Value(0.2614), "0.261"},
		{"Value of thousands has no exponent", Value(1234.5), "1234"},
		{"Value of zero", Value(0), "0"},
		{"Value of NaN", Value(math.NaN()), "NaN"},
		{"Value rounds to three digits", Value(117.8), "118"},
		{"Value of a small ratio", Value(0.0833), "0.0833"},
		{"Sig in messages", Sig(1.3421772e10), "1.342e+10"},
		{"Sig of a small figure", Sig(0.25), "0.25"},
		{"Count with separators", Count(2000000005), "2,000,000,005"},
		{"Count negative", Count(-1234), "-1,234"},
		{"Count fraction", Count(12.5), "12.5"},
		{"Whole in full digits", Whole(123456.7), "123457"},
		{"Whole small fraction", Whole(0.125), "0.125"},
		{"Bytes exact", Bytes(48 << 10), "48 KiB"},
		{"Bytes fraction", Bytes(3 << 19), "1.5 MiB"},
		{"Bytes small", Bytes(512), "512 B"},
		{"Bytes just under the next prefix", Bytes(1020<<20 + 1<<19), "1020 MiB"},
		{"Bytes hundreds with a fraction", Bytes(181<<10 + 1<<9), "182 KiB"},
		{"Percent one decimal", Percent(0.6213), "62.1%"},
		{"RoundPercent", RoundPercent(0.974), "97%"},
		{"Relative", Relative(0.0312), "3.12%"},
		{"Relative off", Relative(math.Inf(1)), "off"},
		{"Change up", Change(0.0312), "+3.12%"},
		{"Change down", Change(-0.04), "-4%"},
		{"Change rounding is zero", Change(1e-9), "+0%"},
		{"Change as a factor", Change(11.5), "×12.5"},
		{"Change unknown", Change(math.NaN()), "?"},
		{"PValue", PValue(0.0312), "p=0.031"},
		{"PValue tiny", PValue(1e-6), "p<0.001"},
		{"SI mega", SI(4e7, "FLOP"), "40.00 MFLOP"},
		{"SI unit", SI(1.25, "s"), "1.250 s"},
		{"SI micro", SI(2.5e-6, "s"), "2.500 µs"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, tt.got, tt.want)
		}
	}
}

func TestHalfWidthPercentNeedsAnIntervalHoldingTheValue(t *testing.T) {
	tests := []struct {
		v, lo, hi float64
		want      string
		ok        bool
	}{
		{100, 99, 100.8, "1.0%", true},
		{100, 80, 112, "20%", true},
		{100, 0, 0, "", false},
		{100, 101, 102, "", false},
		{0, -1, 1, "", false},
	}
	for _, tt := range tests {
		got, ok := HalfWidthPercent(tt.v, tt.lo, tt.hi)
		if got != tt.want || ok != tt.ok {
			t.Errorf("HalfWidthPercent(%g, [%g, %g]) = %q, %v; want %q, %v", tt.v, tt.lo, tt.hi, got, ok, tt.want, tt.ok)
		}
	}
}
