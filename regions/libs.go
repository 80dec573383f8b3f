package regions

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
)

// findLibrary finds a library the way the dynamic loader would for the
// target: a name with a slash is a path; otherwise LD_LIBRARY_PATH, the
// target's RUNPATH (or RPATH), the loader's cache and the default
// directories are searched, for the name itself or, failing that, a
// versioned file of that name (libfoo.so finds libfoo.so.1).
func (r Resolver) findLibrary(name string) (string, error) {
	if strings.Contains(name, "/") {
		if _, err := os.Stat(name); err != nil {
			return "", &LibraryError{Library: name, Target: r.Target}
		}
		return filepath.Abs(name)
	}
	var dirs []string
	for _, kv := range r.env() {
		if v, ok := strings.CutPrefix(kv, "LD_LIBRARY_PATH="); ok {
			dirs = append(dirs, filepath.SplitList(v)...)
		}
	}
	dirs = append(dirs, r.runpath()...)
	for _, d := range dirs {
		if d == "" {
			continue
		}
		if p := filepath.Join(d, name); isFile(p) {
			return p, nil
		}
	}
	cache := r.LdCache
	if cache == "" {
		cache = "/etc/ld.so.cache"
	}
	entries := readLdCache(cache)
	for _, exact := range []bool{true, false} {
		for _, e := range entries {
			if (exact && e.name == name || !exact && strings.HasPrefix(e.name, name+".")) && isFile(e.path) {
				return e.path, nil
			}
		}
	}
	for _, d := range []string{"/lib64", "/usr/lib64", "/lib", "/usr/lib"} {
		if p := filepath.Join(d, name); isFile(p) {
			return p, nil
		}
	}
	return "", &LibraryError{Library: name, Target: r.Target}
}

func (r Resolver) env() []string {
	if r.Env == nil {
		return os.Environ()
	}
	return r.Env
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// runpath is the target's DT_RUNPATH, or DT_RPATH without one, with
// $ORIGIN expanded.
func (r Resolver) runpath() []string {
	f, err := elf.Open(r.Target)
	if err != nil {
		return nil
	}
	defer f.Close()
	paths, _ := f.DynString(elf.DT_RUNPATH)
	if len(paths) == 0 {
		paths, _ = f.DynString(elf.DT_RPATH)
	}
	origin := filepath.Dir(r.Target)
	var out []string
	for _, p := range paths {
		for _, d := range filepath.SplitList(p) {
			d = strings.ReplaceAll(strings.ReplaceAll(d, "${ORIGIN}", origin), "$ORIGIN", origin)
			out = append(out, d)
		}
	}
	return out
}

type ldCacheEntry struct{ name, path string }

// readLdCache reads glibc's loader cache in its current format
// ("glibc-ld.so.cache1.1": a 48-byte header, then entries of flags,
// key and value string offsets from the file's start, os version and
// hwcap). Anything else reads as empty.
func readLdCache(path string) []ldCacheEntry {
	b, err := os.ReadFile(path)
	const magic = "glibc-ld.so.cache1.1"
	const header, entrySize = 48, 24
	if err != nil || len(b) < header || string(b[:len(magic)]) != magic {
		return nil
	}
	n := int(binary.LittleEndian.Uint32(b[20:]))
	str := func(off uint32) string {
		if int(off) >= len(b) {
			return ""
		}
		s := b[off:]
		if i := bytes.IndexByte(s, 0); i >= 0 {
			s = s[:i]
		}
		return string(s)
	}
	var out []ldCacheEntry
	for i := 0; i < n && header+(i+1)*entrySize <= len(b); i++ {
		e := b[header+i*entrySize:]
		out = append(out, ldCacheEntry{name: str(binary.LittleEndian.Uint32(e[4:])), path: str(binary.LittleEndian.Uint32(e[8:]))})
	}
	return out
}
