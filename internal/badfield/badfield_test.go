package badfield

import (
	"errors"
	"io/fs"
	"testing"
)

func TestErrorMatchesItsKindAndWrapsItsCause(t *testing.T) {
	kind, other := errors.New("invalid options"), errors.New("invalid configuration")
	err := error(New(kind, fs.ErrNotExist, "BLAS"))
	if !errors.Is(err, kind) || errors.Is(err, other) {
		t.Errorf("%v: matches its own kind %v, not %v", err, errors.Is(err, kind), errors.Is(err, other))
	}
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%v: does not wrap its cause", err)
	}
	var e *Error
	if !errors.As(err, &e) || len(e.Fields) != 1 || e.Fields[0] != "BLAS" {
		t.Errorf("errors.As: %+v", e)
	}
	if got, want := New(kind, errors.New("do not go together"), "Fixed", "Quick").Error(), "invalid options: Fixed and Quick: do not go together"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}
