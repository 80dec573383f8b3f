package dnn

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Markers that start a verbose line: oneDNN 2.x and later print
// "onednn_verbose", 1.x and 2.x with DNNL_VERBOSE "dnnl_verbose".
var markers = []string{"onednn_verbose,", "dnnl_verbose,"}

// IsVerbose reports whether line (without its newline) is a oneDNN verbose
// line of a grammar the package reads.
func IsVerbose(line string) bool {
	for _, m := range markers {
		if strings.HasPrefix(line, m) {
			return true
		}
	}
	return false
}

// ErrMalformed is wrapped by the errors of lines that start like a verbose
// line but do not parse.
var ErrMalformed = errors.New("malformed verbose line")

// Record is one primitive line: an execution ("exec") or a creation
// ("create:cache_miss", ...), which carry the same fields.
type Record struct {
	// Syntax names the grammar: "2.x" (also 1.x and 3.0 to 3.2), "3.x"
	// (3.3 to 3.5: a component field) or the version field of 3.6 and
	// later ("v1"; the documentation also shows "v0").
	Syntax string `json:"syntax"`
	// TimestampMs is the start of the call in ms since the epoch, when
	// ONEDNN_VERBOSE_TIMESTAMP=1; 0 otherwise.
	TimestampMs float64 `json:"timestamp_ms,omitempty"`
	// Operation is "exec" or "create:<how>".
	Operation      string   `json:"operation"`
	Engine         string   `json:"engine"`
	Kind           string   `json:"kind"` // normalised: pooling_v2 is pooling
	Implementation string   `json:"implementation"`
	PropKind       string   `json:"prop_kind"`
	Tensors        []Tensor `json:"tensors"`
	Attributes     string   `json:"attributes,omitempty"`
	Auxiliary      string   `json:"auxiliary,omitempty"`
	Problem        string   `json:"problem"`
	// Millis is the wall time of the call in ms; -1 when the line has none
	// (create:start lines of 3.13).
	Millis float64 `json:"ms"`
	// Version is the library's version ("v3.7.2") from the trace's header,
	// which oneDNN prints before its first primitive line; "" when the
	// header is missing. The model's kernel constants depend on it.
	Version string `json:"version,omitempty"`
}

// Resolution is the finest time (s) the trace gives of an execution of ms
// milliseconds: oneDNN's clock is gettimeofday (1 µs, read at both ends),
// and the milliseconds are printed with 6 significant digits.
func Resolution(ms float64) float64 { return 2e-6 + ms*1e-3*5e-6 }

// Exec reports whether the record is a primitive execution.
func (r *Record) Exec() bool { return r.Operation == "exec" }

// Tensor is one memory descriptor of a record.
type Tensor struct {
	Arg      string `json:"arg"`       // src, wei, bia, dst, data, diff, ws, ...
	DataType string `json:"data_type"` // f32, bf16, s8, undef, ...
	// Properties are the letters oneDNN prints after the data type: a
	// (created from format any), p (padded dims), o (padded offsets), 0
	// (offset0 non-zero).
	Properties string `json:"properties,omitempty"`
	FormatKind string `json:"format_kind"` // blocked, undef, any, wino, opaque, ...
	Tag        string `json:"tag,omitempty"`
	Strides    string `json:"strides,omitempty"`
	Extra      string `json:"extra,omitempty"`
}

// Present reports whether the tensor exists (oneDNN prints absent optional
// tensors as undef).
func (t Tensor) Present() bool { return t.DataType != "undef" && t.FormatKind != "undef" }

// kindAliases maps the names of versioned primitive kinds to one name.
var kindAliases = map[string]string{
	"pooling_v2":             "pooling",
	"softmax_v2":             "softmax",
	"layer_normalization_v2": "layer_normalization",
}

// ParseLine parses a verbose line (without its newline). ok is false for
// verbose lines that are not primitive records (info, graph, check and
// dispatch messages, external kernels); err wraps ErrMalformed for a
// primitive line that does not parse.
func ParseLine(line string) (rec Record, ok bool, err error) {
	rest, found := cutMarker(line)
	if !found {
		return Record{}, false, nil
	}
	f := strings.Split(strings.TrimRight(rest, "\r"), ",")
	i, ok, err := rec.parseHeader(f)
	if !ok || err != nil {
		return Record{}, false, err
	}
	if i >= len(f) || f[i] == "" {
		return Record{}, false, fmt.Errorf("%w: no operation field", ErrMalformed)
	}
	op := f[i]
	if !isPrimitiveOp(op) {
		return Record{}, false, nil
	}
	rec.Operation = op
	if err := rec.parseFields(f[i+1:]); err != nil {
		return Record{}, false, err
	}
	return rec, true, nil
}

// cutMarker returns the line after its verbose marker.
func cutMarker(line string) (rest string, found bool) {
	for _, m := range markers {
		if r, ok := strings.CutPrefix(line, m); ok {
			rest, found = r, true
		}
	}
	return rest, found
}

// parseHeader reads the optional fields before the operation (version,
// timestamp, component) into rec and returns the index of the operation
// field; ok is false for components other than primitives.
func (rec *Record) parseHeader(f []string) (i int, ok bool, err error) {
	rec.Syntax = "2.x"
	if i < len(f) && isVersionField(f[i]) {
		rec.Syntax = f[i]
		i++
	}
	if i < len(f) && strings.Contains(f[i], ".") {
		ts, perr := strconv.ParseFloat(f[i], 64)
		if perr != nil {
			return 0, false, fmt.Errorf("%w: timestamp %q", ErrMalformed, f[i])
		}
		rec.TimestampMs = ts
		i++
	}
	if i < len(f) {
		switch f[i] {
		case "primitive":
			if rec.Syntax == "2.x" {
				rec.Syntax = "3.x"
			}
			i++
		case "graph", "common":
			return 0, false, nil
		}
	}
	return i, true, nil
}

// isPrimitiveOp reports whether an operation field starts a primitive
// record: not info, exec:check, exec:external, create:dispatch/check/error
// or messages of the library's back ends.
func isPrimitiveOp(op string) bool {
	switch {
	case op == "exec", strings.HasPrefix(op, "create_nested:"):
		return true
	case strings.HasPrefix(op, "create:"):
		return isCacheOp(op)
	}
	return false
}

// parseFields reads the fields after the operation into rec: engine, kind,
// impl, prop, mds, attrs, aux, problem[, time].
func (rec *Record) parseFields(f []string) error {
	switch {
	case len(f) == 9:
		ms, perr := strconv.ParseFloat(f[8], 64)
		if perr != nil || ms < 0 {
			return fmt.Errorf("%w: time %q", ErrMalformed, f[8])
		}
		rec.Millis = ms
	case len(f) == 8 && rec.Operation != "exec":
		rec.Millis = -1
	default:
		return fmt.Errorf("%w: %d fields after %q, want 9", ErrMalformed, len(f), rec.Operation)
	}
	rec.Engine = f[0]
	rec.Kind = f[1]
	if k, ok := kindAliases[rec.Kind]; ok {
		rec.Kind = k
	}
	rec.Implementation, rec.PropKind = f[2], f[3]
	rec.Attributes = strings.TrimSpace(f[5])
	rec.Auxiliary = strings.TrimSpace(f[6])
	rec.Problem = f[7]
	if rec.Engine == "" || rec.Kind == "" || rec.Problem == "" {
		return fmt.Errorf("%w: empty engine, kind or problem", ErrMalformed)
	}
	for _, s := range strings.Fields(f[4]) {
		t, terr := ParseTensor(s)
		if terr != nil {
			return terr
		}
		rec.Tensors = append(rec.Tensors, t)
	}
	return nil
}

// isCacheOp reports whether a create operation reports a created primitive
// (create:cache_miss, create:cache_hit, create:start, ...) rather than a
// dispatch or check message.
func isCacheOp(op string) bool {
	how := strings.TrimPrefix(op, "create:")
	return strings.Contains(how, "cache") || how == "start"
}

func isVersionField(s string) bool {
	if len(s) < 2 || s[0] != 'v' {
		return false
	}
	_, err := strconv.Atoi(s[1:])
	return err == nil
}

// dataTypes are oneDNN's data type names. Some contain '_', so a 2.x
// "arg_dt" field is split at the longest data type suffix.
var dataTypes = []string{
	"f8_e5m2", "f8_e4m3", "f4_e2m1", "f4_e3m0", "e8m0",
	"f64", "f32", "bf16", "f16", "s32", "s8", "u8", "s4", "u4", "undef",
}

// ParseTensor parses one memory descriptor of any grammar:
// "src_f32:p:blocked:aBcd16b:f0", "src_f32::blocked:aBcd16b::f0" or
// "src:f32::blocked:aBcd16b::f0".
func ParseTensor(s string) (Tensor, error) {
	parts := strings.Split(s, ":")
	var t Tensor
	head, rest := parts[0], parts[1:]
	if arg, dt, ok := splitArgType(head); ok {
		t.Arg, t.DataType = arg, dt
	} else if len(rest) > 0 && isDataType(rest[0]) {
		t.Arg, t.DataType = head, rest[0]
		rest = rest[1:]
	} else {
		return Tensor{}, fmt.Errorf("%w: memory descriptor %q: no data type", ErrMalformed, s)
	}
	// properties:format_kind:tag[:strides]:extra
	switch len(rest) {
	case 4:
		t.Properties, t.FormatKind, t.Tag, t.Extra = rest[0], rest[1], rest[2], rest[3]
	case 5:
		t.Properties, t.FormatKind, t.Tag, t.Strides, t.Extra = rest[0], rest[1], rest[2], rest[3], rest[4]
	default:
		return Tensor{}, fmt.Errorf("%w: memory descriptor %q: %d fields", ErrMalformed, s, len(rest)+1)
	}
	if t.FormatKind == "" {
		return Tensor{}, fmt.Errorf("%w: memory descriptor %q: no format kind", ErrMalformed, s)
	}
	return t, nil
}

func splitArgType(head string) (arg, dt string, ok bool) {
	for _, d := range dataTypes {
		if strings.HasSuffix(head, "_"+d) && len(head) > len(d)+1 {
			return head[:len(head)-len(d)-1], d, true
		}
	}
	return "", "", false
}

func isDataType(s string) bool {
	for _, d := range dataTypes {
		if s == d {
			return true
		}
	}
	return false
}

// DataTypeBytes is the size of one element of a data type; 0 for unknown.
func DataTypeBytes(dt string) float64 {
	switch dt {
	case "f64":
		return 8
	case "f32", "s32":
		return 4
	case "bf16", "f16":
		return 2
	case "s8", "u8", "f8_e5m2", "f8_e4m3", "e8m0":
		return 1
	case "s4", "u4", "f4_e2m1", "f4_e3m0":
		return 0.5
	}
	return 0
}

// Info is what the header lines say about the library.
type Info struct {
	// Version is e.g. "v2.6.3", from "oneDNN v2.6.3 (commit ...)".
	Version string `json:"version,omitempty"`
	Runtime string `json:"runtime,omitempty"` // "OpenMP,nthr:2"
	ISA     string `json:"isa,omitempty"`
}

// Trace accumulates the verbose lines of a run. Executions are grouped as
// they arrive, so that a long run's trace holds its groups and each
// execution's time and index, not its line (a record keeps its whole line
// alive: about 2 KB).
type Trace struct {
	Info Info
	// Records holds every primitive record, creations included, when
	// KeepRecords is set; a run's trace leaves it unset.
	KeepRecords bool
	Records     []Record
	// Ordered keeps each execution's index in its group (Group.Execs),
	// which Join needs: 8 bytes more per execution.
	Ordered bool
	// Verbose counts every verbose line, Primitives the primitive records
	// among them, Skipped the primitive lines that did not parse;
	// Examples keeps the first few of those, cut to exampleBytes.
	Verbose    int
	Primitives int
	Skipped    int
	Examples   []string

	grouper
}

// exampleBytes is how much of a line that did not parse is kept to quote:
// enough to recognise it, bounded whatever the line's length.
const exampleBytes = 240

// Add reads one line (without its newline); lines that are not verbose are
// ignored.
func (t *Trace) Add(line string) {
	if !IsVerbose(line) {
		return
	}
	t.Verbose++
	rec, ok, err := ParseLine(line)
	if err != nil {
		t.skip(line, len(line))
		return
	}
	if ok {
		rec.Version = t.Info.Version
		t.Primitives++
		if rec.Exec() {
			t.add(&rec, t.Ordered)
		}
		if t.KeepRecords {
			t.Records = append(t.Records, rec)
		}
		return
	}
	t.addInfo(line)
}

// addLong counts a verbose line longer than a Splitter holds, of which
// head is the start, as skipped.
func (t *Trace) addLong(head string, size int) {
	t.Verbose++
	t.skip(head, size)
}

// skip counts a primitive line that did not parse, keeping the start of
// the first few; size is the whole line's length.
func (t *Trace) skip(line string, size int) {
	t.Skipped++
	if len(t.Examples) < 3 {
		t.Examples = append(t.Examples, cut(line, size))
	}
}

// cut is line, or its first exampleBytes and how long the whole was.
func cut(line string, size int) string {
	if size <= exampleBytes {
		return line
	}
	return strings.ToValidUTF8(line[:min(len(line), exampleBytes)], "") + fmt.Sprintf("... (%d bytes in all)", size)
}

// Groups are the trace's executions grouped (see GroupExecs), sorted by
// total time, longest first; ties keep trace order.
func (t *Trace) Groups() []*Group { return t.sorted() }

// Execs is the number of executions in the trace.
func (t *Trace) Execs() int { return t.execs }

func (t *Trace) addInfo(line string) {
	_, after, ok := strings.Cut(line, ",info,")
	if !ok {
		return
	}
	switch {
	case strings.HasPrefix(after, "oneDNN "):
		v, _, _ := strings.Cut(strings.TrimPrefix(after, "oneDNN "), " ")
		t.Info.Version = v
	case strings.HasPrefix(after, "cpu,runtime:"):
		t.Info.Runtime = strings.TrimPrefix(after, "cpu,runtime:")
	case strings.HasPrefix(after, "cpu,isa:"):
		t.Info.ISA = strings.TrimPrefix(after, "cpu,isa:")
	}
}
