// Package unit formats rprof's numbers with their units, one way for every
// command and report, as golang.org/x/perf's benchunit does for benchstat.
// Each function names what it is for; none prints.
package unit

import (
	"math"
	"strconv"
	"strings"
)

// Value writes v with three significant digits and no exponent (116, 45.2,
// 0.261, 1230), the way roofline figures (GFLOP/s, GB/s, FLOP/byte,
// seconds) are read.
func Value(v float64) string {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	digits := max(0, 2-int(math.Floor(math.Log10(math.Abs(v)))))
	return strconv.FormatFloat(v, 'f', digits, 64)
}

// Sig writes v with at most four significant digits ("1.342e+10", "0.25"),
// for figures quoted inside messages.
func Sig(v float64) string {
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// Count writes a count with thousands separators, as perf stat does
// ("2,000,000,005"); a fraction below 1000 keeps six significant digits.
func Count(v float64) string {
	if math.Abs(v) >= 1e18 || v != math.Trunc(v) && math.Abs(v) < 1000 {
		return strconv.FormatFloat(v, 'g', 6, 64)
	}
	s := strconv.FormatFloat(math.Abs(math.Round(v)), 'f', 0, 64)
	var b strings.Builder
	if v < 0 {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// Whole writes a scaled counter value next to its raw count: whole numbers
// (and anything from 1000 up) in full digits, smaller fractions with four
// significant digits.
func Whole(v float64) string {
	if math.Abs(v) >= 1000 || v == math.Trunc(v) {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return Sig(v)
}

// Bytes writes a size with a binary prefix: "48 KiB", "1.5 MiB", "512 B".
func Bytes(n int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	v, u := float64(n), 0
	for math.Abs(v) >= 1024 && u < len(units)-1 {
		v /= 1024
		u++
	}
	// From 100 up, three significant digits are whole units: 'g' would
	// write 1020 as "1.02e+03".
	if v == math.Trunc(v) || math.Abs(v) >= 100 {
		return strconv.FormatFloat(v, 'f', 0, 64) + " " + units[u]
	}
	return strconv.FormatFloat(v, 'g', 3, 64) + " " + units[u]
}

// HalfWidthPercent returns the larger half-width of the interval [lo, hi]
// around v as a percentage of v ("0.8%", "12%"), and false when the interval
// is absent (both 0) or does not hold v.
func HalfWidthPercent(v, lo, hi float64) (string, bool) {
	if !(v > 0) || lo == 0 && hi == 0 || lo > v || hi < v {
		return "", false
	}
	half := math.Max(hi-v, v-lo) / v * 100
	prec := 1
	if half >= 10 {
		prec = 0
	}
	return strconv.FormatFloat(half, 'f', prec, 64) + "%", true
}

// Percent writes a fraction as a percentage with one decimal: 0.6213 →
// "62.1%".
func Percent(x float64) string {
	return strconv.FormatFloat(x*100, 'f', 1, 64) + "%"
}

// RoundPercent writes a fraction as a whole percentage: 0.974 → "97%".
func RoundPercent(x float64) string {
	return strconv.FormatFloat(x*100, 'f', 0, 64) + "%"
}

// Relative writes a relative magnitude with three significant digits:
// 0.05 → "5%", 0.0312 → "3.12%"; +Inf (a limit turned off) → "off".
func Relative(x float64) string {
	if math.IsInf(x, 1) {
		return "off"
	}
	return strconv.FormatFloat(x*100, 'g', 3, 64) + "%"
}

// Change writes a relative change with its sign: "+3.12%", "-4%"; past
// +1000% as a factor ("×12.5"). Changes below a millionth are rounding of
// equal figures and show as +0%; NaN shows as "?".
func Change(x float64) string {
	if math.IsNaN(x) {
		return "?"
	}
	if math.Abs(x) < 1e-6 {
		x = 0
	}
	if x >= 10 {
		if 1+x >= 1000 {
			return "×" + strconv.FormatFloat(1+x, 'f', 0, 64)
		}
		return "×" + strconv.FormatFloat(1+x, 'g', 3, 64)
	}
	if x >= 0 {
		return "+" + Relative(x)
	}
	return "-" + Relative(-x)
}

// PValue writes a p-value as "p=0.031" or "p<0.001".
func PValue(p float64) string {
	if p < 0.001 {
		return "p<0.001"
	}
	return "p=" + strconv.FormatFloat(p, 'f', 3, 64)
}

var siPrefixes = []struct {
	scale  float64
	prefix string
}{
	{1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}, {1, ""}, {1e-3, "m"}, {1e-6, "µ"}, {1e-9, "n"},
}

// SI writes v in unit with an SI prefix and four significant digits
// ("40.00 MFLOP", "320.0 MB", "1.250 s").
func SI(v float64, unit string) string {
	a := math.Abs(v)
	for _, p := range siPrefixes {
		if a >= p.scale || p.prefix == "n" {
			return strconv.FormatFloat(v/p.scale, 'f', digitsAfter(v/p.scale), 64) + " " + p.prefix + unit
		}
	}
	return Sig(v) + " " + unit
}

// digitsAfter keeps four significant digits for a value in [1, 1000).
func digitsAfter(v float64) int {
	a := math.Abs(v)
	switch {
	case a >= 100:
		return 1
	case a >= 10:
		return 2
	}
	return 3
}
