package emulate

import (
	"debug/elf"
	"debug/gosym"
	"encoding/hex"
	"path/filepath"
	"sort"
)

// Buckets for code that is not in a named function.
const (
	BucketJIT  = "[jit]"
	BucketVDSO = "[vdso]"
	// BucketUnattributed holds DRAM traffic of no block (none is expected:
	// a dirty line's write-back counts for the block that last wrote it).
	BucketUnattributed = "[unattributed]"
	BucketUnknown      = "[unknown]"
	// BucketNoSymbol gathers the code of an object that no symbol covers
	// (a stripped library's internal functions).
	BucketNoSymbol = "[no symbol]"
)

// symbolizer names the function at a guest address from the mappings the
// plugin recorded and the ELF symbol tables of the mapped files.
type symbolizer struct {
	files map[string]*elfSyms
}

type elfSyms struct {
	loads []elf.ProgHeader
	syms  []elf.Symbol // functions, by address
}

func newSymbolizer() *symbolizer { return &symbolizer{files: map[string]*elfSyms{}} }

// name returns the object and function holding vaddr in img.
func (s *symbolizer) name(img *image, vaddr uint64) (object, fn string) {
	if vaddr == 0 {
		return "", BucketUnattributed
	}
	if !img.hostAddrs {
		return "", BucketUnknown
	}
	i := sort.Search(len(img.maps), func(i int) bool { return img.maps[i].hi > vaddr })
	if i == len(img.maps) || img.maps[i].lo > vaddr {
		return "", BucketUnknown
	}
	m := img.maps[i]
	switch {
	case m.path == "[vdso]":
		return "", BucketVDSO
	case m.path == "[anon]" || m.path == "[heap]" || m.path == "[stack]" || m.path[0] == '[':
		return "", BucketJIT
	}
	off := vaddr - m.lo + m.off
	e := s.load(m.path)
	base := filepath.Base(m.path)
	if e == nil {
		return base, BucketUnknown
	}
	for _, p := range e.loads {
		if off >= p.Off && off < p.Off+p.Filesz {
			a := off - p.Off + p.Vaddr
			j := sort.Search(len(e.syms), func(j int) bool { return e.syms[j].Value > a }) - 1
			if j >= 0 && (a < e.syms[j].Value+e.syms[j].Size || e.syms[j].Size == 0) {
				return base, e.syms[j].Name
			}
			return base, BucketNoSymbol
		}
	}
	return base, BucketUnknown
}

// load reads path's executable segments and function symbols (the static
// table, else the dynamic one); nil when it is not a readable ELF file.
func (s *symbolizer) load(path string) *elfSyms {
	if e, ok := s.files[path]; ok {
		return e
	}
	var e *elfSyms
	if f, err := elf.Open(path); err == nil {
		e = &elfSyms{}
		for _, p := range f.Progs {
			if p.Type == elf.PT_LOAD {
				e.loads = append(e.loads, p.ProgHeader)
			}
		}
		seen := map[uint64]bool{}
		static, _ := f.Symbols()
		if len(static) == 0 {
			static = debugSymbols(f)
		}
		if len(static) == 0 {
			static = goSymbols(f)
		}
		dynamic, _ := f.DynamicSymbols()
		for _, syms := range [][]elf.Symbol{static, dynamic} {
			for _, sym := range syms {
				if elf.ST_TYPE(sym.Info) != elf.STT_FUNC || sym.Value == 0 || seen[sym.Value] {
					continue
				}
				seen[sym.Value] = true
				e.syms = append(e.syms, sym)
			}
		}
		sort.Slice(e.syms, func(i, j int) bool { return e.syms[i].Value < e.syms[j].Value })
		f.Close()
	}
	s.files[path] = e
	return e
}

// goSymbols names the functions of a stripped Go binary from its
// .gopclntab, which the Go runtime keeps for tracebacks.
func goSymbols(f *elf.File) []elf.Symbol {
	pcln, text := f.Section(".gopclntab"), f.Section(".text")
	if pcln == nil || text == nil {
		return nil
	}
	data, err := pcln.Data()
	if err != nil {
		return nil
	}
	tab, err := gosym.NewTable(nil, gosym.NewLineTable(data, text.Addr))
	if err != nil {
		return nil
	}
	syms := make([]elf.Symbol, 0, len(tab.Funcs))
	for _, fn := range tab.Funcs {
		syms = append(syms, elf.Symbol{Name: fn.Name, Value: fn.Entry, Size: fn.End - fn.Entry,
			Info: elf.ST_INFO(elf.STB_GLOBAL, elf.STT_FUNC)})
	}
	return syms
}

// debugSymbols reads the symbol table of f's separate debug file, found by
// build ID under /usr/lib/debug (Debian's -dbg and -dbgsym packages), when
// one is installed.
func debugSymbols(f *elf.File) []elf.Symbol {
	sec := f.Section(".note.gnu.build-id")
	if sec == nil {
		return nil
	}
	b, err := sec.Data()
	// An ELF note: namesz, descsz, type (4 bytes each), "GNU\0", the ID.
	if err != nil || len(b) < 16+2 {
		return nil
	}
	id := hex.EncodeToString(b[16:])
	d, err := elf.Open(filepath.Join("/usr/lib/debug/.build-id", id[:2], id[2:]+".debug"))
	if err != nil {
		return nil
	}
	defer d.Close()
	syms, _ := d.Symbols()
	return syms
}
