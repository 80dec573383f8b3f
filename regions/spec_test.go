package regions

import (
	"errors"
	"slices"
	"testing"
)

func TestParseSpecReadsTheThreeForms(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Spec
	}{
		{"dgemm_kernel", Spec{Symbol: "dgemm_kernel"}},
		{"libopenblas.so.0:cblas_dgemm", Spec{File: "libopenblas.so.0", Symbol: "cblas_dgemm"}},
		{"/usr/lib/x86_64-linux-gnu/libm.so.6:sin", Spec{File: "/usr/lib/x86_64-linux-gnu/libm.so.6", Symbol: "sin"}},
		{"./a.out:0x401136", Spec{File: "./a.out", Addr: 0x401136}},
		{"libm.so.6:exp@GLIBC_2.2.5", Spec{File: "libm.so.6", Symbol: "exp", Version: "GLIBC_2.2.5"}},
		{"vf@VER_2", Spec{Symbol: "vf", Version: "VER_2"}},
	} {
		got, err := ParseSpec(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseSpec(%q) = %+v, %v; want %+v", c.in, got, err, c.want)
		}
		if got.String() != c.in && c.want.Symbol != "" {
			t.Errorf("%+v spells %q, want %q", got, got.String(), c.in)
		}
	}
}

func TestParseSpecRefusesBadSyntax(t *testing.T) {
	for _, in := range []string{"", ":f", "lib.so:", "a.out:0xZZ", "a.out:0x0", "two words", "0x401136", "lib.so:exp@", "lib.so:@V1", "exp@@"} {
		if _, err := ParseSpec(in); !errors.Is(err, ErrBadSpec) {
			t.Errorf("ParseSpec(%q) = %v, want ErrBadSpec", in, err)
		}
	}
}

// exp@@GLIBC_2.29 names the default version as readelf prints it; it is
// the same spec as exp@GLIBC_2.29.
func TestParseSpecReadsTheDefaultVersionMark(t *testing.T) {
	got, err := ParseSpec("libm.so.6:exp@@GLIBC_2.29")
	if want := (Spec{File: "libm.so.6", Symbol: "exp", Version: "GLIBC_2.29"}); err != nil || got != want {
		t.Errorf("got %+v, %v; want %+v", got, err, want)
	}
}

func TestNearestPrefersSubstringsThenEditDistance(t *testing.T) {
	names := []string{"spin_us", "touch_pages", "main", "spin_ms", "spin_us_inner", "zzz"}
	got := nearest("spinus", names, 3)
	if len(got) == 0 || got[0] != "spin_us" {
		t.Errorf("nearest(spinus) = %v, want spin_us first", got)
	}
	if slices.Contains(got, "zzz") || slices.Contains(nearest("qqqqqqqq", names, 3), "main") {
		t.Errorf("unrelated names offered: %v", got)
	}
}

func TestKindOfClassifiesFirstInstructions(t *testing.T) {
	for _, c := range []struct {
		b    []byte
		want FirstKind
	}{
		{[]byte{0x0f, 0x1f, 0x44, 0, 0}, KindNop5},
		{[]byte{0x55, 0x48, 0x89, 0xe5}, KindPush},
		{[]byte{0x41, 0x57}, KindPush},
		{[]byte{0xf3, 0x0f, 0x1e, 0xfa}, KindEndbr},
		{[]byte{0x48, 0x83, 0xec, 0x08}, KindStep},
		{nil, KindStep},
	} {
		if got := KindOf(c.b); got != c.want {
			t.Errorf("KindOf(% x) = %s, want %s", c.b, got, c.want)
		}
	}
}
