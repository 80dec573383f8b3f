package roofline

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadersRefuseInvalidDocumentsInOneLine(t *testing.T) {
	tests := []struct {
		name, doc string
		roofs     bool
		want      string
	}{
		{"schema line only", `{"schema": "rprof.point/v2"}`, false, "holds no figures"},
		{"negative work", `{"schema": "rprof.point/v2", "seconds": 1, "work_flops": -5}`, false, "work_flops -5 is negative"},
		{"absurd rate", `{"schema": "rprof.point/v2", "seconds": 1, "gflops": 1e308}`, false, "gflops 1e+308 is beyond any measurement"},
		{"a JSON array", `[{"schema": "rprof.point/v2"}]`, false, "the document is an array, where an object belongs"},
		{"a string where a number belongs", `{"schema": "rprof.point/v2", "seconds": "1"}`, false, "field seconds is a string, where a number belongs"},
		{"truncated", `{"schema": "rprof.point/v2", "seconds": 1`, false, "not JSON"},
		{"point in a set", `{"schema": "rprof.points/v2", "points": [{"schema": "rprof.point/v2", "label": "a", "seconds": 1}, {"schema": "rprof.point/v2", "label": "b", "seconds": -1}]}`, false, `point 1 ("b"): seconds -1 is negative`},
		{"negative repetitions", `{"schema": "rprof.point/v2", "seconds": 1, "ci": {"confidence": 0.95, "n": -3, "seconds": {"lo": 0.9, "hi": 1.1}}}`, false, "ci.n -3 is not a number of repetitions"},
		{"interval backwards", `{"schema": "rprof.point/v2", "seconds": 1, "ci": {"confidence": 0.95, "n": 3, "seconds": {"lo": 2.5, "hi": 0.5}}}`, false, "ci.seconds [2.5, 0.5] has its low bound above its high one"},
		{"rate interval backwards", `{"schema": "rprof.point/v2", "seconds": 1, "ci": {"confidence": 0.95, "n": 3, "seconds": {"lo": 0.9, "hi": 1.1}, "gflops": {"lo": 3, "hi": 2}}}`, false, "ci.gflops [3, 2] has its low bound"},
		{"confidence of 1", `{"schema": "rprof.point/v2", "seconds": 1, "ci": {"confidence": 1, "n": 3, "seconds": {"lo": 0.9, "hi": 1.1}}}`, false, "ci.confidence 1 is not a confidence level"},
		{"samples and n disagree", `{"schema": "rprof.point/v2", "seconds": 1, "ci": {"confidence": 0.95, "n": 3, "seconds": {"lo": 0.9, "hi": 1.1}}, "samples": {"seconds": [1, 1, 1, 1, 1]}}`, false, "samples.seconds holds 5 samples where ci.n says 3"},
		{"negative roof", `{"schema": "rprof.roofs/v1", "compute": [{"name": "fma", "threads": 1, "gflops": -3}]}`, true, "compute[0] (fma, 1 threads).gflops -3 is negative"},
		{"cache edge backwards", `{"schema": "rprof.roofs/v1", "caches": [{"level": "L3", "threads": 1, "bytes": 100, "source": "measured", "edge": {"lo": 90, "hi": 80}}]}`, true, "caches[0] (L3, 1 threads).edge [90, 80] is not a range"},
		{"cache of no size", `{"schema": "rprof.roofs/v1", "caches": [{"level": "L1", "threads": 1, "bytes": 0, "source": "sysfs"}]}`, true, "caches[0] (L1, 1 threads).bytes 0 is not a size"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "doc.json")
			doc := strings.ReplaceAll(strings.ReplaceAll(tt.doc, "rprof.point/v2", PointSchema), "rprof.points/v2", PointSetSchema)
			doc = strings.ReplaceAll(doc, "rprof.roofs/v1", RoofsSchema)
			os.WriteFile(path, []byte(doc), 0o644)
			var err error
			if tt.roofs {
				_, err = readRoofs(path)
			} else {
				_, err = readPoints(path)
			}
			if err == nil {
				t.Fatal("accepted")
			}
			msg := err.Error()
			if !strings.Contains(msg, tt.want) || !strings.HasPrefix(msg, path) || strings.Contains(msg, "\n") {
				t.Errorf("error %q: want one line starting with the file and naming %q", msg, tt.want)
			}
			if strings.Contains(msg, "Go value") || strings.Contains(msg, "struct {") || strings.Contains(msg, "float64") {
				t.Errorf("error %q leaks Go types", msg)
			}
		})
	}
}

func TestReadersCapTheDocumentSize(t *testing.T) {
	path := filepath.Join(t.TempDir(), "huge.json")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	f.Truncate(MaxDocBytes + 1) // sparse: costs no disk
	f.Close()
	_, err = readPoints(path)
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "MiB") {
		t.Fatalf("ReadPoints of %d bytes = %v, want the size cap", MaxDocBytes+1, err)
	}
}

// Text a document carries reaches terminals and Markdown through every
// command: the readers return it with control characters and escape
// sequences replaced.
func TestReadersCleanTheTextOfDocuments(t *testing.T) {
	dir := t.TempDir()
	point := filepath.Join(dir, "p.json")
	os.WriteFile(point, []byte(`{"schema": "`+PointSchema+`", "label": "a\u001b[31mred", "seconds": 1,
		"work_by_precision": {"fp64\u001b[0m": 1},
		"machine": {"cpu": {"model_name": "\u001b]0;owned\u0007\u001b[2J"}},
		"flags": [{"code": "vm", "message": "line\nbreak\u009b"}]}`), 0o644)
	ps, err := readPoints(point)
	if err != nil {
		t.Fatal(err)
	}
	p := ps[0]
	for _, s := range []string{p.Label, p.Machine.CPU.ModelName, p.Flags[0].Message} {
		if strings.ContainsAny(s, "\x1b\x07\n\u009b") {
			t.Errorf("%q keeps control characters", s)
		}
	}
	for k := range p.WorkByPrecision {
		if strings.ContainsRune(k, '\x1b') {
			t.Errorf("map key %q keeps an escape", k)
		}
	}
	if p.Label != "a?[31mred" {
		t.Errorf("label %q, want a?[31mred", p.Label)
	}
}
