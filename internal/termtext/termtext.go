// Package termtext makes text that rprof did not write itself (a note
// left in a lock file, a label read from a document) safe to print on a
// terminal: control characters and escape sequences could move the
// cursor, rewrite what was printed before, or set the window's title.
package termtext

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Clean returns s with every rune that is not printable (control and
// format characters, escape sequences' introducers, invalid UTF-8)
// replaced by '?', and cut to at most max bytes, marked with "..." where
// it was cut (max <= 0: no cut).
func Clean(s string, max int) string {
	var b strings.Builder
	for i, r := range s {
		if max > 0 && b.Len()+utf8.RuneLen(r) > max {
			return b.String() + "..."
		}
		if !unicode.IsPrint(r) || invalid(s[i:], r) {
			r = '?'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// invalid reports whether r, read from the start of s, stands for a byte
// that is not UTF-8 (rather than a U+FFFD written out).
func invalid(s string, r rune) bool {
	_, size := utf8.DecodeRuneInString(s)
	return r == utf8.RuneError && size == 1
}
