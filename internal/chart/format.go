package chart

import (
	"math"
	"strconv"

	"github.com/rprof/rprof/roofline"
)

// FormatValue writes v with three significant digits and no exponent
// (116, 45.2, 0.261, 1230), the way roofline figures are read.
func FormatValue(v float64) string {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	digits := max(0, 2-int(math.Floor(math.Log10(math.Abs(v)))))
	return strconv.FormatFloat(v, 'f', digits, 64)
}

// FormatCI returns the larger half-width of ci around v as a percentage of
// v ("0.8%"), and false when the interval is absent or does not hold v.
func FormatCI(v float64, ci roofline.Interval) (string, bool) {
	if !(v > 0) || ci.Lo == 0 && ci.Hi == 0 || ci.Lo > v || ci.Hi < v {
		return "", false
	}
	half := math.Max(ci.Hi-v, v-ci.Lo) / v * 100
	prec := 1
	if half >= 10 {
		prec = 0
	}
	return strconv.FormatFloat(half, 'f', prec, 64) + "%", true
}
