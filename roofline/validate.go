package roofline

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
)

// ErrInvalid is matched by the errors of documents whose figures no
// measurement gives: negative, beyond any machine, or none at all.
var ErrInvalid = errors.New("invalid document")

// MaxDocBytes caps what a reader reads: a point set of a hundred thousand
// points is a few tens of megabytes; anything larger is not a document
// rprof wrote, and reading it whole would take its size several times
// over in memory.
const MaxDocBytes = 64 << 20

// maxFigure is beyond any measured figure (FLOPs, bytes, seconds, rates):
// a larger value is a corrupt or made-up document, and would overflow the
// chart's log axes.
const maxFigure = 1e30

// InvalidError names the document and the field whose figure is invalid.
type InvalidError struct {
	Path  string // the file, and "point N" within a set
	Field string // the JSON field
	Msg   string
}

func (e *InvalidError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("%s: %s", e.Path, e.Msg)
	}
	return fmt.Sprintf("%s: %s %s", e.Path, e.Field, e.Msg)
}

func (e *InvalidError) Is(target error) bool { return target == ErrInvalid }

// figure checks one headline figure: finite, not negative, within reason.
func figure(path, field string, v float64) error {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return &InvalidError{Path: path, Field: field, Msg: "is not a finite number"}
	case v < 0:
		return &InvalidError{Path: path, Field: field, Msg: fmt.Sprintf("%g is negative: no measurement gives that", v)}
	case v > maxFigure:
		return &InvalidError{Path: path, Field: field, Msg: fmt.Sprintf("%g is beyond any measurement", v)}
	}
	return nil
}

func optFigure(path, field string, v *float64) error {
	if v == nil {
		return nil
	}
	return figure(path, field, *v)
}

// ValidatePoint checks a point's headline figures; path names it in the
// error.
func ValidatePoint(path string, p *Point) error {
	if p.Seconds == 0 && p.WorkFlops == nil && p.GFlops == nil && p.TrafficBytes == nil &&
		len(p.Events) == 0 && len(p.Regions) == 0 && p.Job == nil {
		return &InvalidError{Path: path, Msg: "the point holds no figures (no time, work, traffic or events)"}
	}
	checks := []struct {
		field string
		v     *float64
	}{
		{"work_flops", p.WorkFlops}, {"traffic_bytes", p.TrafficBytes}, {"read_bytes", p.ReadBytes},
		{"write_bytes", p.WriteBytes}, {"seconds", &p.Seconds}, {"intensity", p.Intensity},
		{"gflops", p.GFlops}, {"gbytes_per_s", p.GBytesPerS}, {"attainable_gflops", p.AttainableGFlops},
		{"fraction_of_attainable", p.FractionOfAttainable},
	}
	for _, c := range checks {
		if err := optFigure(path, c.field, c.v); err != nil {
			return err
		}
	}
	for k, v := range p.WorkByPrecision {
		if err := figure(path, "work_by_precision."+k, v); err != nil {
			return err
		}
	}
	return validateUncertainty(path, p)
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// validateUncertainty checks that a point's intervals and samples agree
// with each other: a count of repetitions, a level of confidence, ordered
// bounds, and as many time samples as repetitions. Readers then never
// print "± -149%", and every command takes the same statistic from a
// point (gate and compare use the samples where there are two or more,
// else the interval).
func validateUncertainty(path string, p *Point) error {
	ci := p.CI
	switch {
	case ci.N < 0:
		return &InvalidError{Path: path, Field: "ci.n", Msg: fmt.Sprintf("%d is not a number of repetitions", ci.N)}
	case math.IsNaN(ci.Confidence) || ci.Confidence < 0 || ci.Confidence >= 1:
		return &InvalidError{Path: path, Field: "ci.confidence", Msg: fmt.Sprintf("%g is not a confidence level in (0, 1)", ci.Confidence)}
	case len(p.Samples.Seconds) > 0 && ci.N > 0 && len(p.Samples.Seconds) != ci.N:
		return &InvalidError{Path: path, Field: "samples.seconds", Msg: fmt.Sprintf("holds %d samples where ci.n says %d repetitions", len(p.Samples.Seconds), ci.N)}
	}
	for _, iv := range []struct {
		field string
		v     *Interval
	}{{"ci.seconds", &ci.Seconds}, {"ci.gflops", ci.GFlops}, {"ci.gbytes_per_s", ci.GBytesPerS}} {
		if iv.v == nil {
			continue
		}
		// A net figure's bound may be negative (a subtraction); it must
		// be a number, and the bounds in order.
		if !finite(iv.v.Lo) || !finite(iv.v.Hi) {
			return &InvalidError{Path: path, Field: iv.field, Msg: "has a bound that is not a finite number"}
		}
		if iv.v.Lo > iv.v.Hi {
			return &InvalidError{Path: path, Field: iv.field, Msg: fmt.Sprintf("[%g, %g] has its low bound above its high one", iv.v.Lo, iv.v.Hi)}
		}
	}
	for name, xs := range map[string][]float64{"samples.seconds": p.Samples.Seconds, "samples.work_flops": p.Samples.WorkFlops, "samples.traffic_bytes": p.Samples.TrafficBytes} {
		for i, x := range xs {
			if !finite(x) {
				return &InvalidError{Path: path, Field: fmt.Sprintf("%s[%d]", name, i), Msg: "is not a finite number"}
			}
		}
	}
	return nil
}

// field is a named figure of a document, for figures.
type field struct {
	name string
	v    float64
}

// figures checks each of fs, named prefix + its name.
func figures(path, prefix string, fs ...field) error {
	for _, f := range fs {
		if err := figure(path, prefix+f.name, f.v); err != nil {
			return err
		}
	}
	return nil
}

// ValidateRoofs checks every roof's figure and interval.
func ValidateRoofs(path string, r *Roofs) error {
	for i, c := range r.Compute {
		f := fmt.Sprintf("compute[%d] (%s, %d threads)", i, c.Name, c.Threads)
		if err := figures(path, f, field{".gflops", c.GFlops}, field{".ci.lo", c.CI.Lo}, field{".ci.hi", c.CI.Hi}, field{".theoretical_gflops", c.TheoreticalGFlops}); err != nil {
			return err
		}
	}
	for i, b := range r.Bandwidth {
		f := fmt.Sprintf("bandwidth[%d] (%s, %d threads)", i, b.Level, b.Threads)
		if err := figures(path, f, field{".gbytes_per_s", b.GBytesPerS}, field{".ci.lo", b.CI.Lo}, field{".ci.hi", b.CI.Hi}); err != nil {
			return err
		}
	}
	if r.DGEMM != nil {
		if err := figure(path, "dgemm.gflops", r.DGEMM.GFlops); err != nil {
			return err
		}
	}
	for i, c := range r.Caches {
		f := fmt.Sprintf("caches[%d] (%s, %d threads)", i, c.Level, c.Threads)
		switch {
		case c.Bytes <= 0:
			return &InvalidError{Path: path, Field: f + ".bytes", Msg: fmt.Sprintf("%d is not a size", c.Bytes)}
		case c.DeclaredBytes < 0:
			return &InvalidError{Path: path, Field: f + ".declared_bytes", Msg: fmt.Sprintf("%d is not a size", c.DeclaredBytes)}
		case c.Edge != nil && (c.Edge.Lo <= 0 || c.Edge.Hi < c.Edge.Lo):
			return &InvalidError{Path: path, Field: f + ".edge", Msg: fmt.Sprintf("[%d, %d] is not a range of sizes", c.Edge.Lo, c.Edge.Hi)}
		}
	}
	return validateGPUs(path, r.GPUs)
}

// jsonError rewords the JSON decoder's errors without Go's type names:
// "cannot unmarshal array into Go value of type struct { Schema string
// ... }" becomes "is an array, where an object belongs".
func jsonError(path string, err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		where := "the document"
		if te.Field != "" {
			where = "field " + te.Field
		}
		return fmt.Errorf("%s: %s is %s %s, where %s belongs", path, where, article(te.Value), te.Value, jsonKind(te.Type))
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Errorf("%s: not JSON: %s (at byte %d)", path, strings.TrimPrefix(se.Error(), "json: "), se.Offset)
	}
	return fmt.Errorf("%s: %s", path, strings.TrimPrefix(err.Error(), "json: "))
}

func article(v string) string {
	if v != "" && strings.ContainsRune("aeiou", rune(v[0])) {
		return "an"
	}
	return "a"
}

// jsonKind names a Go type the way a JSON document's reader knows it.
func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		if t.String() == "time.Time" {
			return "a time string"
		}
		return "an object"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Float32, reflect.Float64, reflect.Int, reflect.Int64, reflect.Int32, reflect.Uint64, reflect.Uint32, reflect.Uint:
		return "a number"
	}
	return "another kind of value"
}
