package regions

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// ProbeKind says what a probe's records mean.
type ProbeKind int

const (
	// Function: an entry probe and a return probe around every call.
	Function ProbeKind = iota
	// MarkerStart and MarkerStop: entry probes on LIKWID's
	// likwid_markerStartRegion(tag) and likwid_markerStopRegion(tag); the
	// region is named by the tag and spans from Start to Stop.
	MarkerStart
	MarkerStop
)

// Probe is a resolved region: the file and offset its uprobe goes on.
type Probe struct {
	// Name names the region: the symbol, or the spec for an address.
	Name string
	Spec Spec
	Kind ProbeKind
	// Path is the file with its symbolic links resolved (uprobes attach to
	// an inode).
	Path string
	// Offset is the file offset of the function's first instruction.
	Offset uint64
	// Addr is the function's virtual address in the file (as nm prints
	// it), and Size its symbol's size in bytes (0 for an address spec or
	// a symbol without one).
	Addr, Size uint64
	// Version is the version of the symbol probed, "" when unversioned:
	// the default one (exp@@GLIBC_2.29) unless the spec named another.
	Version string
	// First holds the function's first bytes: the first instruction
	// decides what a probe costs (see Calibrate).
	First []byte
}

// SymbolError is a symbol not found in a file; Near lists the closest
// function names in it, best first. With Version set, the symbol is there
// but not in that version, and Versions lists those it has, as readelf
// spells them (exp@GLIBC_2.2.5, exp@@GLIBC_2.29 the default).
type SymbolError struct {
	Symbol   string
	Version  string
	File     string
	Near     []string
	Versions []string
}

func (e *SymbolError) Error() string {
	if e.Version != "" {
		return fmt.Sprintf("region %s@%s: %s has no version %s in %s (present: %s; @@ marks the default, which %s alone names)",
			e.Symbol, e.Version, e.Symbol, e.Version, e.File, strings.Join(e.Versions, ", "), e.Symbol)
	}
	msg := fmt.Sprintf("region %s: no function %q in %s", e.Symbol, e.Symbol, e.File)
	if len(e.Near) > 0 {
		msg += " (near: " + strings.Join(e.Near, ", ") + ")"
	}
	return msg
}

// ErrStripped is wrapped when a file has no symbol table and the symbol is
// not among its exported ones.
var ErrStripped = errors.New("stripped: no symbol table")

// StrippedError is a symbol looked up in a stripped file without debug
// symbols.
type StrippedError struct {
	Symbol string
	File   string
}

func (e *StrippedError) Error() string {
	return fmt.Sprintf("region %s: %s is %v and does not export %s; install its debug symbols (a .gnu_debuglink or build-id file under /usr/lib/debug) or name the function by address, %s:0xADDR",
		e.Symbol, e.File, ErrStripped, e.Symbol, e.File)
}

func (e *StrippedError) Unwrap() error { return ErrStripped }

// LibraryError is a library spec that names no file found the way the
// dynamic loader would find it.
type LibraryError struct {
	Library string
	Target  string
}

func (e *LibraryError) Error() string {
	return fmt.Sprintf("region library %s: not found (searched LD_LIBRARY_PATH, the RUNPATH of %s and /etc/ld.so.cache); give its path", e.Library, e.Target)
}

// Resolver finds region files and symbols for one target.
type Resolver struct {
	// Target is the executable's absolute path.
	Target string
	// Env is the target's environment (LD_LIBRARY_PATH is searched).
	Env []string
	// LdCache is the dynamic loader's cache ("" means /etc/ld.so.cache).
	LdCache string
	// DebugRoot is the debug-symbol directory ("" means /usr/lib/debug).
	DebugRoot string
}

// Resolve turns specs into probes, in order.
func (r Resolver) Resolve(specs []Spec) ([]Probe, error) {
	var out []Probe
	for _, s := range specs {
		p, err := r.resolve(s)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// Markers resolves LIKWID's marker functions in the liblikwid the target
// links.
func (r Resolver) Markers() ([]Probe, error) {
	lib, err := r.needed("liblikwid.so")
	if err != nil {
		return nil, err
	}
	var out []Probe
	for _, m := range []struct {
		sym  string
		kind ProbeKind
	}{{"likwid_markerStartRegion", MarkerStart}, {"likwid_markerStopRegion", MarkerStop}} {
		p, err := r.resolve(Spec{File: lib, Symbol: m.sym})
		if err != nil {
			return nil, err
		}
		p.Kind = m.kind
		out = append(out, p)
	}
	return out, nil
}

// needed finds the library among the target's DT_NEEDED entries whose name
// starts with prefix, and returns its path.
func (r Resolver) needed(prefix string) (string, error) {
	f, err := elf.Open(r.Target)
	if err != nil {
		return "", fmt.Errorf("regions: %w", err)
	}
	defer f.Close()
	libs, _ := f.ImportedLibraries()
	for _, l := range libs {
		if strings.HasPrefix(l, prefix) {
			return r.findLibrary(l)
		}
	}
	return "", fmt.Errorf("regions: %s does not link %s (no DT_NEEDED entry): build it with -DLIKWID_PERFMON and -llikwid", r.Target, prefix)
}

func (r Resolver) resolve(s Spec) (Probe, error) {
	file := r.Target
	if s.File != "" {
		var err error
		if file, err = r.findLibrary(s.File); err != nil {
			return Probe{}, err
		}
	}
	real, err := filepath.EvalSymlinks(file)
	if err != nil {
		return Probe{}, fmt.Errorf("region %s: %w", s, err)
	}
	f, err := elf.Open(real)
	if err != nil {
		return Probe{}, fmt.Errorf("region %s: %w", s, err)
	}
	defer f.Close()
	p := Probe{Name: s.Symbol, Spec: s, Kind: Function, Path: real}
	addr := s.Addr
	if s.Symbol == "" {
		p.Name = s.String()
	} else {
		sym, version, err := r.symbol(f, real, s)
		if err != nil {
			return Probe{}, err
		}
		addr, p.Size, p.Version = sym.Value, sym.Size, version
		if s.Version != "" {
			p.Name = s.Symbol + "@" + s.Version
		}
	}
	p.Addr = addr
	off, ok := fileOffset(f, addr)
	if !ok {
		return Probe{}, fmt.Errorf("region %s: address %#x is in no executable segment of %s", s, addr, real)
	}
	p.Offset = off
	p.First = make([]byte, 16)
	n, _ := readAt(real, p.First, int64(off))
	p.First = p.First[:n]
	return p, nil
}

func readAt(path string, b []byte, off int64) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	n, err := f.ReadAt(b, off)
	if err == io.EOF {
		err = nil
	}
	return n, err
}

// definition is one function a name stands for in a file: its symbol,
// its version ("" when unversioned) and whether that version is the
// default one (@@), which the dynamic loader binds new links to.
type definition struct {
	sym       elf.Symbol
	version   string
	isDefault bool
}

func (d definition) String() string {
	switch {
	case d.version == "":
		return d.sym.Name
	case d.isDefault:
		return d.sym.Name + "@@" + d.version
	}
	return d.sym.Name + "@" + d.version
}

// definitions reads a symbol table's functions. A static symbol table
// spells versions in the name (exp@GLIBC_2.2.5, exp@@GLIBC_2.29); the
// dynamic one records them beside it.
func definitions(table []elf.Symbol, dynamic bool) []definition {
	var out []definition
	for _, s := range table {
		if !isFunction(s) {
			continue
		}
		d := definition{sym: s}
		switch {
		case dynamic && s.HasVersion:
			d.version, d.isDefault = s.Version, !s.VersionIndex.IsHidden()
		case !dynamic:
			if base, v, ok := strings.Cut(s.Name, "@"); ok {
				d.sym.Name = base
				d.version, d.isDefault = strings.CutPrefix(v, "@")
			}
		}
		out = append(out, d)
	}
	return out
}

// pick chooses among the definitions of one name as the loader does: the
// version asked for, else the default version, else an unversioned one,
// else (only compat versions left) the first.
func pick(defs []definition, version string) (definition, bool) {
	if version != "" {
		i := slices.IndexFunc(defs, func(d definition) bool { return d.version == version })
		if i < 0 {
			return definition{}, false
		}
		return defs[i], true
	}
	if i := slices.IndexFunc(defs, func(d definition) bool { return d.isDefault && d.version != "" }); i >= 0 {
		return defs[i], true
	}
	if i := slices.IndexFunc(defs, func(d definition) bool { return d.version == "" }); i >= 0 {
		return defs[i], true
	}
	return defs[0], true
}

// symbol finds a defined function in the file's symbol table, its
// exported symbols, or its separate debug file, and returns it with the
// version it was picked by ("" for an unversioned symbol).
func (r Resolver) symbol(f *elf.File, path string, spec Spec) (elf.Symbol, string, error) {
	name := spec.Symbol
	syms, symErr := f.Symbols()
	defs := definitions(syms, false)
	dyn, _ := f.DynamicSymbols()
	defs = append(defs, definitions(dyn, true)...)
	dbg := f
	if symErr != nil {
		if d := r.debugFile(f, path); d != nil {
			ds, _ := d.Symbols()
			defs = append(defs, definitions(ds, false)...)
			symErr = nil
			defer d.Close()
			dbg = d
		}
	}
	var all []string
	var named []definition
	for _, d := range defs {
		if d.sym.Name != name {
			all = append(all, d.sym.Name)
			continue
		}
		// A symbol versioned in both tables is one definition.
		if !slices.ContainsFunc(named, func(n definition) bool { return n.sym.Value == d.sym.Value && n.version == d.version }) {
			named = append(named, d)
		}
	}
	if len(named) > 0 {
		d, ok := pick(named, spec.Version)
		if !ok {
			present := make([]string, len(named))
			for i, n := range named {
				present[i] = n.String()
			}
			return elf.Symbol{}, "", &SymbolError{Symbol: name, Version: spec.Version, File: path, Versions: present}
		}
		if elf.ST_TYPE(d.sym.Info) == elf.STT_GNU_IFUNC {
			return elf.Symbol{}, "", fmt.Errorf("region %s: %s is an indirect function (IFUNC) in %s, resolved at load time; name the implementation it selects", name, name, path)
		}
		return d.sym, d.version, nil
	}
	if sites := inlinedSites(dbg, name); len(sites) > 0 {
		return elf.Symbol{}, "", &InlinedError{Symbol: name, File: path, Sites: sites}
	}
	if symErr != nil {
		return elf.Symbol{}, "", &StrippedError{Symbol: name, File: path}
	}
	return elf.Symbol{}, "", &SymbolError{Symbol: name, File: path, Near: nearest(name, all, 3)}
}

func isFunction(s elf.Symbol) bool {
	t := elf.ST_TYPE(s.Info)
	return (t == elf.STT_FUNC || t == elf.STT_GNU_IFUNC) && s.Section != elf.SHN_UNDEF && s.Value != 0
}

// fileOffset maps a virtual address to its file offset through the
// executable load segment holding it.
func fileOffset(f *elf.File, addr uint64) (uint64, bool) {
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && p.Flags&elf.PF_X != 0 && addr >= p.Vaddr && addr < p.Vaddr+p.Filesz {
			return addr - p.Vaddr + p.Off, true
		}
	}
	return 0, false
}

// debugFile opens the separate debug file of f, found by build ID or by
// .gnu_debuglink (checked against its CRC), as gdb looks for them.
func (r Resolver) debugFile(f *elf.File, path string) *elf.File {
	root := r.DebugRoot
	if root == "" {
		root = "/usr/lib/debug"
	}
	type candidate struct {
		path     string
		crc      uint32
		checkCRC bool
	}
	var candidates []candidate
	if id := buildID(f); len(id) > 1 {
		h := fmt.Sprintf("%x", id)
		candidates = append(candidates, candidate{path: filepath.Join(root, ".build-id", h[:2], h[2:]+".debug")})
	}
	if sec := f.Section(".gnu_debuglink"); sec != nil {
		if b, err := sec.Data(); err == nil && len(b) >= 4 {
			if i := bytes.IndexByte(b, 0); i > 0 {
				name := string(b[:i])
				crc := binary.LittleEndian.Uint32(b[len(b)-4:])
				dir := filepath.Dir(path)
				for _, p := range []string{filepath.Join(dir, name), filepath.Join(dir, ".debug", name), filepath.Join(root, dir, name)} {
					candidates = append(candidates, candidate{path: p, crc: crc, checkCRC: true})
				}
			}
		}
	}
	for _, c := range candidates {
		b, err := os.ReadFile(c.path)
		if err != nil || (c.checkCRC && crc32.ChecksumIEEE(b) != c.crc) {
			continue
		}
		if d, err := elf.NewFile(bytes.NewReader(b)); err == nil {
			return d
		}
	}
	return nil
}

// buildID reads the GNU build ID note.
func buildID(f *elf.File) []byte {
	sec := f.Section(".note.gnu.build-id")
	if sec == nil {
		return nil
	}
	b, err := sec.Data()
	if err != nil || len(b) < 16 {
		return nil
	}
	nameSz := binary.LittleEndian.Uint32(b[0:])
	descSz := binary.LittleEndian.Uint32(b[4:])
	start := 12 + (nameSz+3)&^3
	if uint64(start)+uint64(descSz) > uint64(len(b)) {
		return nil
	}
	return b[start : start+descSz]
}

// nearest returns up to n names closest to name: those containing it or
// contained in it first, then by edit distance, within a third of its
// length.
func nearest(name string, names []string, n int) []string {
	type cand struct {
		s string
		d int
	}
	seen := map[string]bool{}
	var cs []cand
	lname := strings.ToLower(name)
	for _, s := range names {
		if seen[s] {
			continue
		}
		seen[s] = true
		ls := strings.ToLower(s)
		d := editDistance(lname, ls)
		if strings.Contains(ls, lname) || (len(lname) > 3 && strings.Contains(lname, ls) && len(ls) > 3) {
			d = min(d, 1)
		}
		if d <= max(2, len(name)/3) {
			cs = append(cs, cand{s, d})
		}
	}
	slices.SortFunc(cs, func(a, b cand) int {
		if a.d != b.d {
			return a.d - b.d
		}
		return strings.Compare(a.s, b.s)
	})
	var out []string
	for _, c := range cs[:min(n, len(cs))] {
		out = append(out, c.s)
	}
	return out
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
