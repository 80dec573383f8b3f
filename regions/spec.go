package regions

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrBadSpec is wrapped by every error about a region spec that cannot be
// parsed.
var ErrBadSpec = errors.New("bad region spec")

// Spec is one region as the user named it.
type Spec struct {
	// File is "" for the target executable, a library path or soname
	// (LIB:SYMBOL), or the file an address belongs to (FILE:0xADDR).
	File string
	// Symbol is the function's name; "" when Addr is used.
	Symbol string
	// Addr is the function's virtual address as nm and objdump print it
	// (not a file offset); meaningful only when Symbol is "".
	Addr uint64
}

// String spells the spec as ParseSpec reads it.
func (s Spec) String() string {
	switch {
	case s.Symbol == "":
		return fmt.Sprintf("%s:%#x", s.File, s.Addr)
	case s.File == "":
		return s.Symbol
	}
	return s.File + ":" + s.Symbol
}

// ParseSpec reads SYMBOL (in the target executable), LIB:SYMBOL (LIB a
// library path or soname) or FILE:0xADDR. The last colon separates file
// and symbol, so C++ names need the file: "libfoo.so:ns::f" is not
// supported; name such functions by their mangled symbol.
func ParseSpec(s string) (Spec, error) {
	if s == "" {
		return Spec{}, fmt.Errorf("%w: empty", ErrBadSpec)
	}
	if strings.ContainsAny(s, " \t\n") {
		return Spec{}, fmt.Errorf("%w: %q contains white space", ErrBadSpec, s)
	}
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return Spec{Symbol: s}, nil
	}
	file, sym := s[:i], s[i+1:]
	if file == "" || sym == "" {
		return Spec{}, fmt.Errorf("%w: %q: want SYMBOL, LIB:SYMBOL or FILE:0xADDR", ErrBadSpec, s)
	}
	if strings.HasPrefix(sym, "0x") || strings.HasPrefix(sym, "0X") {
		a, err := strconv.ParseUint(sym[2:], 16, 64)
		if err != nil || a == 0 {
			return Spec{}, fmt.Errorf("%w: %q: %q is not a non-zero hexadecimal address", ErrBadSpec, s, sym)
		}
		return Spec{File: file, Addr: a}, nil
	}
	return Spec{File: file, Symbol: sym}, nil
}
