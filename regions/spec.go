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
	// Version picks one version of a versioned symbol (GLIBC_2.2.5 of
	// exp); "" means the default one, which the dynamic loader binds a
	// newly linked program to (exp@@GLIBC_2.29).
	Version string
	// Addr is the function's virtual address as nm and objdump print it
	// (not a file offset); meaningful only when Symbol is "".
	Addr uint64
}

// String spells the spec as ParseSpec reads it.
func (s Spec) String() string {
	switch {
	case s.Symbol == "":
		return fmt.Sprintf("%s:%#x", s.File, s.Addr)
	}
	sym := s.Symbol
	if s.Version != "" {
		sym += "@" + s.Version
	}
	if s.File == "" {
		return sym
	}
	return s.File + ":" + sym
}

// ParseSpec reads SYMBOL (in the target executable), LIB:SYMBOL (LIB a
// library path or soname), either with @VERSION (or @@VERSION) to pick a
// version of a versioned symbol, or FILE:0xADDR. The last colon separates file
// and symbol, so C++ names need the file: "libfoo.so:ns::f" is not
// supported; name such functions by their mangled symbol.
func ParseSpec(s string) (Spec, error) {
	if s == "" {
		return Spec{}, fmt.Errorf("%w: empty", ErrBadSpec)
	}
	if strings.ContainsAny(s, " \t\n") {
		return Spec{}, fmt.Errorf("%w: %q contains white space", ErrBadSpec, s)
	}
	file, sym := "", s
	if i := strings.LastIndexByte(s, ':'); i >= 0 {
		file, sym = s[:i], s[i+1:]
		if file == "" || sym == "" {
			return Spec{}, fmt.Errorf("%w: %q: want SYMBOL, LIB:SYMBOL or FILE:0xADDR", ErrBadSpec, s)
		}
	}
	if strings.HasPrefix(sym, "0x") || strings.HasPrefix(sym, "0X") {
		a, err := strconv.ParseUint(sym[2:], 16, 64)
		if err != nil || a == 0 {
			return Spec{}, fmt.Errorf("%w: %q: %q is not a non-zero hexadecimal address", ErrBadSpec, s, sym)
		}
		if file == "" {
			return Spec{}, fmt.Errorf("%w: %q: an address needs its file, FILE:0xADDR", ErrBadSpec, s)
		}
		return Spec{File: file, Addr: a}, nil
	}
	sym, version, _ := strings.Cut(sym, "@")
	version = strings.TrimPrefix(version, "@")
	if sym == "" || strings.Contains(s, "@") && version == "" {
		return Spec{}, fmt.Errorf("%w: %q: want SYMBOL@VERSION", ErrBadSpec, s)
	}
	return Spec{File: file, Symbol: sym, Version: version}, nil
}
