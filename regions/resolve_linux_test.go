package regions

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func requireTools(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not found", tool)
		}
	}
}

func run(t *testing.T, name string, args ...string) {
	t.Helper()
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
}

func TestResolveFindsSymbolsInPIEAndNonPIE(t *testing.T) {
	requireTools(t, "gcc")
	for _, pie := range []string{"-pie", "-no-pie"} {
		target := compile(t, "target"+pie, "target.c", "-pthread", "-ldl", pie)
		p := resolveOne(t, target, "spin_us")
		if p.Offset == 0 || len(p.First) == 0 || p.Kind != Function {
			t.Errorf("%s: %+v", pie, p)
		}
		// The address form names the same instruction.
		byAddr := resolveOne(t, target, target+":"+hexAddr(t, target, "spin_us"))
		if byAddr.Offset != p.Offset || byAddr.Addr != p.Addr {
			t.Errorf("%s: by address offset %#x at %#x, by symbol %#x at %#x", pie, byAddr.Offset, byAddr.Addr, p.Offset, p.Addr)
		}
		// The symbol's size comes with it (an address spec has none).
		if p.Size == 0 || byAddr.Size != 0 {
			t.Errorf("%s: size %d by symbol, %d by address", pie, p.Size, byAddr.Size)
		}
	}
}

// hexAddr is the symbol's address as nm prints it.
func hexAddr(t *testing.T, file, sym string) string {
	out, err := exec.Command("nm", file).Output()
	if err != nil {
		t.Skipf("nm: %v", err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[2] == sym {
			return "0x" + f[0]
		}
	}
	t.Fatalf("nm shows no %s", sym)
	return ""
}

func TestResolveUnknownSymbolNamesNearMatches(t *testing.T) {
	requireTools(t, "gcc")
	target := compile(t, "target-pie", "target.c", "-pthread", "-ldl", "-pie")
	_, err := Resolver{Target: target}.Resolve([]Spec{{Symbol: "spinus"}})
	var se *SymbolError
	if !errors.As(err, &se) || len(se.Near) == 0 || se.Near[0] != "spin_us" {
		t.Fatalf("err = %v, want a *SymbolError naming spin_us", err)
	}
}

func TestResolveStrippedBinaryFailsClearlyUnlessDebugLinkFound(t *testing.T) {
	requireTools(t, "gcc", "objcopy", "strip")
	dir := t.TempDir()
	full := compile(t, "target-pie", "target.c", "-pthread", "-ldl", "-pie")
	stripped := filepath.Join(dir, "stripped")
	run(t, "strip", "-o", stripped, full)
	_, err := Resolver{Target: stripped, DebugRoot: dir}.Resolve([]Spec{{Symbol: "spin_us"}})
	var st *StrippedError
	if !errors.As(err, &st) || !errors.Is(err, ErrStripped) {
		t.Fatalf("err = %v, want *StrippedError", err)
	}
	// With its symbols in a separate file named by .gnu_debuglink.
	dbg := filepath.Join(dir, "linked.debug")
	linked := filepath.Join(dir, "linked")
	run(t, "objcopy", "--only-keep-debug", full, dbg)
	run(t, "strip", "-o", linked, full)
	run(t, "objcopy", "--add-gnu-debuglink="+dbg, linked)
	p, err := Resolver{Target: linked, DebugRoot: filepath.Join(dir, "none")}.Resolve([]Spec{{Symbol: "spin_us"}})
	if err != nil {
		t.Fatalf("with a debug link: %v", err)
	}
	if want := resolveOne(t, full, "spin_us"); p[0].Offset != want.Offset {
		t.Errorf("offset %#x through the debug file, %#x in the unstripped binary", p[0].Offset, want.Offset)
	}
	// A debug file whose CRC does not match is not used.
	os.WriteFile(dbg, []byte("not the debug file"), 0o644)
	if _, err := (Resolver{Target: linked, DebugRoot: filepath.Join(dir, "none")}).Resolve([]Spec{{Symbol: "spin_us"}}); !errors.Is(err, ErrStripped) {
		t.Errorf("with a foreign debug file: %v, want ErrStripped", err)
	}
}

func TestResolveFindsLibrariesBySonameAndRefusesUnknownOnes(t *testing.T) {
	requireTools(t, "gcc")
	target := compile(t, "target-pie", "target.c", "-pthread", "-ldl", "-pie")
	lib := compile(t, "libspin.so", "lib.c", "-shared", "-fPIC")
	// LD_LIBRARY_PATH is searched by file name.
	r := Resolver{Target: target, Env: []string{"LD_LIBRARY_PATH=" + filepath.Dir(lib)}}
	if _, err := r.Resolve([]Spec{{File: "libspin.so", Symbol: "lib_spin_us"}}); err != nil {
		t.Errorf("by name in LD_LIBRARY_PATH: %v", err)
	}
	_, err := Resolver{Target: target, Env: []string{}}.Resolve([]Spec{{File: "libnot-there.so.9", Symbol: "f"}})
	var le *LibraryError
	if !errors.As(err, &le) {
		t.Errorf("err = %v, want *LibraryError", err)
	}
	// The loader's cache: libc is always there.
	if p, err := (Resolver{Target: target, Env: []string{}}).Resolve([]Spec{{File: "libc.so.6", Symbol: "getpid"}}); err != nil || p[0].Offset == 0 {
		t.Errorf("libc.so.6:getpid through ld.so.cache: %+v, %v", p, err)
	}
}

// A versioned symbol binds as the loader binds it: the default version
// (vf@@VER_2) unless the spec names another, from the static symbol table
// and, stripped, from the dynamic one alone. A version the file lacks is
// refused with the versions it has.
func TestResolveBindsTheDefaultVersionUnlessOneIsNamed(t *testing.T) {
	requireTools(t, "gcc", "strip")
	lib := compile(t, "libversioned.so", "versioned.c", "-shared", "-fPIC", "-Wl,--version-script=testdata/versioned.map")
	stripped := filepath.Join(filepath.Dir(lib), "libversioned-stripped.so")
	run(t, "strip", "-o", stripped, lib)
	for _, file := range []string{lib, stripped} {
		v1, v2 := resolveOne(t, lib, lib+":vf_1"), resolveOne(t, lib, lib+":vf_2")
		for _, c := range []struct {
			spec       string
			addr       uint64
			name, vers string
		}{
			{file + ":vf", v2.Addr, "vf", "VER_2"},
			{file + ":vf@VER_1", v1.Addr, "vf@VER_1", "VER_1"},
			{file + ":vf@@VER_2", v2.Addr, "vf@VER_2", "VER_2"},
		} {
			p := resolveOne(t, lib, c.spec)
			if p.Addr != c.addr || p.Name != c.name || p.Version != c.vers {
				t.Errorf("%s: %s version %q at %#x; want %s version %q at %#x", c.spec, p.Name, p.Version, p.Addr, c.name, c.vers, c.addr)
			}
		}
		spec, _ := ParseSpec(file + ":vf@VER_9")
		_, err := Resolver{Target: lib}.Resolve([]Spec{spec})
		var se *SymbolError
		if !errors.As(err, &se) || !strings.Contains(err.Error(), "present: vf@@VER_2, vf@VER_1") && !strings.Contains(err.Error(), "present: vf@VER_1, vf@@VER_2") {
			t.Errorf("%s: err = %v, want a *SymbolError naming vf@VER_1 and vf@@VER_2", spec, err)
		}
	}
}

// A static function the compiler inlined everywhere has no entry to probe:
// the error says so and names its call sites from the debug information.
func TestResolveNamesAnInlinedFunctionsCallSites(t *testing.T) {
	requireTools(t, "gcc")
	target := compile(t, "inlined", "inlined.c", "-O2")
	_, err := Resolver{Target: target}.Resolve([]Spec{{Symbol: "kernel"}})
	var ie *InlinedError
	if !errors.As(err, &ie) {
		t.Fatalf("err = %v, want *InlinedError", err)
	}
	callers := map[string]bool{}
	for _, s := range ie.Sites {
		callers[s.Caller] = true
		if filepath.Base(s.File) != "inlined.c" || s.Line == 0 || s.Addr == 0 {
			t.Errorf("site %+v: want inlined.c, a line and an address", s)
		}
	}
	if !callers["main"] || !callers["twice"] {
		t.Errorf("sites %+v: want calls in main and in twice", ie.Sites)
	}
	if msg := err.Error(); !strings.Contains(msg, "kernel is inlined") || !strings.Contains(msg, "inlined.c:") {
		t.Errorf("message %q", msg)
	}
}
