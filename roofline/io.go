package roofline

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
)

// ErrSchema is returned when a document is of another schema or version.
var ErrSchema = errors.New("unsupported schema")

// SchemaError says which schema a document had and which was expected.
type SchemaError struct {
	Path string
	Got  string
	Want []string
}

func (e *SchemaError) Error() string {
	got := e.Got
	if got == "" {
		got = "none"
	}
	return fmt.Sprintf("%s: schema %q, want %q", e.Path, got, e.Want)
}

func (e *SchemaError) Is(target error) bool { return target == ErrSchema }

// DecodeRoofs reads a roofs document from r, of the current version or an
// older one it upgrades (upgradeRoofsV1; version 2 lacks only GPUs). path
// names the document in errors, as go/parser's filename does: where the
// document comes from is the caller's business.
func DecodeRoofs(r io.Reader, path string) (*Roofs, error) {
	data, err := readCapped(r, path)
	if err != nil {
		return nil, err
	}
	schema, err := peekSchema(path, data)
	if err != nil {
		return nil, err
	}
	var doc Roofs
	switch schema {
	case RoofsSchema, RoofsSchemaV2, RoofsSchemaV1:
		if err := decode(path, data, &doc); err != nil {
			return nil, err
		}
	default:
		return nil, &SchemaError{Path: path, Got: schema, Want: []string{RoofsSchema, RoofsSchemaV2, RoofsSchemaV1}}
	}
	if schema == RoofsSchemaV1 {
		upgradeRoofsV1(&doc)
	}
	// Version 2 differs only by having no GPU roofs: nothing to change.
	doc.Schema = RoofsSchema
	cleanText(reflect.ValueOf(&doc))
	if err := ValidateRoofs(path, &doc); err != nil {
		return nil, err
	}
	return &doc, nil
}

// DecodePoints reads a document holding either one point or a point set
// from r, and checks every point's figures (ValidatePoint). path names the
// document in errors.
func DecodePoints(r io.Reader, path string) ([]Point, error) {
	ps, err := decodePoints(r, path)
	if err != nil {
		return nil, err
	}
	for i := range ps {
		cleanText(reflect.ValueOf(&ps[i]))
		where := path
		if len(ps) > 1 {
			where = fmt.Sprintf("%s: point %d (%q)", path, i, ps[i].Label)
		}
		if err := ValidatePoint(where, &ps[i]); err != nil {
			return nil, err
		}
	}
	return ps, nil
}

func decodePoints(r io.Reader, path string) ([]Point, error) {
	data, err := readCapped(r, path)
	if err != nil {
		return nil, err
	}
	schema, err := peekSchema(path, data)
	if err != nil {
		return nil, err
	}
	switch schema {
	case PointSchema:
		var p Point
		if err := decode(path, data, &p); err != nil {
			return nil, err
		}
		return []Point{p}, nil
	case PointSetSchema:
		var s PointSet
		if err := decode(path, data, &s); err != nil {
			return nil, err
		}
		for i := range s.Points {
			if s.Points[i].Schema != PointSchema {
				return nil, &SchemaError{Path: fmt.Sprintf("%s: point %d", path, i), Got: s.Points[i].Schema, Want: []string{PointSchema}}
			}
		}
		return s.Points, nil
	case PointSchemaV1:
		var p pointV1
		if err := decode(path, data, &p); err != nil {
			return nil, err
		}
		return []Point{p.upgrade()}, nil
	case PointSetSchemaV1:
		var s struct {
			Points []pointV1 `json:"points"`
		}
		if err := decode(path, data, &s); err != nil {
			return nil, err
		}
		out := make([]Point, len(s.Points))
		for i, p := range s.Points {
			if p.Schema != PointSchemaV1 {
				return nil, &SchemaError{Path: fmt.Sprintf("%s: point %d", path, i), Got: p.Schema, Want: []string{PointSchemaV1}}
			}
			out[i] = p.upgrade()
		}
		return out, nil
	}
	return nil, &SchemaError{Path: path, Got: schema, Want: []string{PointSchema, PointSetSchema, PointSchemaV1, PointSetSchemaV1}}
}

// pointV1 is a version 1 point: the binding roof was prose, "memory
// (<level>)" or "compute (<roof name>)", and flags had no subject.
type pointV1 struct {
	Point
	Bound string `json:"bound,omitempty"`
}

// upgrade turns a version 1 point into the current version. The bound's
// roof value was not recorded in version 1: it is the attainable GFLOP/s
// for a compute roof, and attainable over intensity for a memory roof.
// Flags keep an empty subject: version 1 did not say which figure they
// qualify.
func (p pointV1) upgrade() Point {
	out := p.Point
	out.Schema = PointSchema
	out.Bound = nil
	kind, roof, ok := strings.Cut(strings.TrimSuffix(p.Bound, ")"), " (")
	if !ok || p.AttainableGFlops == nil {
		return out
	}
	switch kind {
	case BoundCompute:
		out.Bound = &Bound{Kind: BoundCompute, Roof: roof, GFlops: *p.AttainableGFlops}
	case BoundMemory:
		b := &Bound{Kind: BoundMemory, Roof: roof}
		if p.Intensity != nil && *p.Intensity > 0 {
			b.GBytesPerS = *p.AttainableGFlops / *p.Intensity
		}
		out.Bound = b
	}
	return out
}

// upgradeRoofsV1 turns a version 1 roofs document into the current
// version. Version 1 kept each cache level's size on its bandwidth roofs
// only, with no edge and no declared size beside a measured one: those
// sizes become the effective ones, a declared source's size is its own
// declared size, and a measured one has no declaration. Version 1 did not
// say when an interval was unknown: a roof's CI stands as written.
func upgradeRoofsV1(r *Roofs) {
	r.Schema = RoofsSchema
	for _, b := range r.Bandwidth {
		if b.LevelBytes <= 0 || slices.ContainsFunc(r.Caches, func(c CacheLevel) bool { return c.Level == b.Level && c.Threads == b.Threads }) {
			continue
		}
		c := CacheLevel{Level: b.Level, Threads: b.Threads, Bytes: b.LevelBytes, Source: b.LevelSource}
		if b.LevelSource != CacheSourceMeasured {
			c.DeclaredBytes, c.DeclaredSource = b.LevelBytes, b.LevelSource
		}
		r.Caches = append(r.Caches, c)
	}
}

// readCapped reads a document of at most MaxDocBytes.
func readCapped(r io.Reader, path string) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxDocBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxDocBytes {
		return nil, &InvalidError{Path: path, Msg: fmt.Sprintf("larger than the %d MiB a document may hold: not a document rprof wrote (split a point set into several files)", MaxDocBytes>>20)}
	}
	return data, nil
}

func peekSchema(path string, data []byte) (string, error) {
	var head struct {
		Schema string `json:"schema"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return "", jsonError(path, err)
	}
	return head.Schema, nil
}

func decode(path string, data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(v); err != nil {
		return jsonError(path, err)
	}
	return nil
}

// Encode writes v to w as a document: indented JSON and a final newline.
// A value that cannot be encoded (a NaN) fails before anything is
// written.
func Encode(w io.Writer, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(data, '\n'))
	return err
}
