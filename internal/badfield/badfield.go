// Package badfield is the one shape of a library's refusal of its input
// before anything ran: which fields of its options are at fault and why.
// measure (ConfigError), dnnrun and roofs (OptionError) name it each
// under their own word; cmd/rprof turns it into the flags' words in one
// place. Plain data.
package badfield

import (
	"fmt"
	"strings"
)

// Error says which fields of a library's options are wrong and why.
type Error struct {
	// Kind is the sentinel every refusal of the library's input matches
	// (measure.ErrInvalidConfig, roofs.ErrInvalidOptions...): whose
	// fields these are.
	Kind error
	// Fields are the fields at fault, by their names (or paths, as
	// "Repetition.CI") in the options: one, or those that do not go
	// together.
	Fields []string
	// Err is why; it is kept for errors.As. It reads after the fields'
	// names, or, from another library (a region that does not resolve),
	// names its subject itself.
	Err error
}

// New is the refusal of the fields of kind's options at fault.
func New(kind, err error, fields ...string) *Error {
	return &Error{Kind: kind, Fields: fields, Err: err}
}

func (e *Error) Error() string {
	return fmt.Sprintf("%v: %s: %v", e.Kind, strings.Join(e.Fields, " and "), e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// Is makes every Error match its Kind.
func (e *Error) Is(target error) bool { return target == e.Kind }
