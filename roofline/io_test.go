package roofline

import (
	"bytes"
	"math"
	"os"
	"testing"
)

// readRoofs and readPoints read a document file, as rprof's commands do.
func readRoofs(path string) (*Roofs, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return DecodeRoofs(f, path)
}

func readPoints(path string) ([]Point, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return DecodePoints(f, path)
}

// writeDoc writes v to path as Encode does.
func writeDoc(path string, v any) error {
	var doc bytes.Buffer
	if err := Encode(&doc, v); err != nil {
		return err
	}
	return os.WriteFile(path, doc.Bytes(), 0o644)
}

func TestEncodeWritesNothingOfAValueItCannotEncode(t *testing.T) {
	var w bytes.Buffer
	if err := Encode(&w, map[string]float64{"x": math.NaN()}); err == nil {
		t.Fatal("Encode of NaN succeeded")
	}
	if w.Len() != 0 {
		t.Errorf("Encode of NaN wrote %q", w.String())
	}
}

func TestEncodeWritesIndentedJSONAndANewline(t *testing.T) {
	var w bytes.Buffer
	if err := Encode(&w, Roofs{Schema: RoofsSchema}); err != nil {
		t.Fatal(err)
	}
	if s := w.String(); !bytes.HasPrefix(w.Bytes(), []byte("{\n  \"schema\": \""+RoofsSchema+"\"")) || s[len(s)-2:] != "}\n" {
		t.Errorf("Encode wrote %q", s)
	}
}
func ptrTo(v float64) *float64 { return &v }
