package regions

import (
	"debug/dwarf"
	"debug/elf"
	"fmt"
	"path/filepath"
	"strings"
)

// InlineSite is one place the compiler inlined a function: the function it
// was inlined into, the source line of the call and the address the
// inlined copy starts at.
type InlineSite struct {
	Caller string
	File   string
	Line   int64
	Addr   uint64
}

// InlinedError is a function with no code of its own in a file: the debug
// information records it only inlined into its callers, so there is no
// entry to probe.
type InlinedError struct {
	Symbol string
	File   string
	Sites  []InlineSite
}

func (e *InlinedError) Error() string {
	const most = 4
	var at []string
	callers := map[string]bool{}
	var names []string
	for i, s := range e.Sites {
		if !callers[s.Caller] {
			callers[s.Caller] = true
			names = append(names, s.Caller)
		}
		if i < most {
			at = append(at, fmt.Sprintf("%s:%d in %s (%#x)", filepath.Base(s.File), s.Line, s.Caller, s.Addr))
		}
	}
	if len(e.Sites) > most {
		at = append(at, fmt.Sprintf("and %d more", len(e.Sites)-most))
	}
	return fmt.Sprintf("region %s: %s is inlined in %s, with no code of its own to probe: %d call site(s): %s; name the caller (%s) or keep %s out of line (__attribute__((noinline)))",
		e.Symbol, e.Symbol, e.File, len(e.Sites), strings.Join(at, ", "), strings.Join(names, ", "), e.Symbol)
}

// inlinedSites reads f's DWARF for the places a function called name was
// inlined (DW_TAG_inlined_subroutine whose abstract origin is a subprogram
// of that name), in the order the debug information lists them; none
// when f has no debug information.
func inlinedSites(f *elf.File, name string) []InlineSite {
	d, err := f.DWARF()
	if err != nil {
		return nil
	}
	origins := map[dwarf.Offset]bool{}
	r := d.Reader()
	for e, err := r.Next(); e != nil && err == nil; e, err = r.Next() {
		if e.Tag == dwarf.TagSubprogram && e.Val(dwarf.AttrName) == name {
			origins[e.Offset] = true
		}
	}
	if len(origins) == 0 {
		return nil
	}
	var sites []InlineSite
	r = d.Reader()
	var files []*dwarf.LineFile
	var caller string
	depth := 0 // of the current compile unit's children
	for e, err := r.Next(); e != nil && err == nil; e, err = r.Next() {
		switch {
		case e.Tag == 0:
			depth--
			continue
		case e.Tag == dwarf.TagCompileUnit:
			files = nil
			if lr, err := d.LineReader(e); err == nil && lr != nil {
				files = lr.Files()
			}
			depth = 0
		case e.Tag == dwarf.TagSubprogram && depth == 1:
			caller, _ = e.Val(dwarf.AttrName).(string)
		case e.Tag == dwarf.TagInlinedSubroutine:
			if o, ok := e.Val(dwarf.AttrAbstractOrigin).(dwarf.Offset); ok && origins[o] {
				s := InlineSite{Caller: caller}
				s.Line, _ = e.Val(dwarf.AttrCallLine).(int64)
				if i, ok := e.Val(dwarf.AttrCallFile).(int64); ok && i >= 0 && int(i) < len(files) && files[i] != nil {
					s.File = files[i].Name
				}
				if rs, err := d.Ranges(e); err == nil && len(rs) > 0 {
					s.Addr = rs[0][0]
				}
				sites = append(sites, s)
			}
		}
		if e.Children {
			depth++
		}
	}
	return sites
}
