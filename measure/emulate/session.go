package emulate

import (
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Session is one prepared emulated run: a private directory holding the
// plugin and the plugin's output. Close removes it.
type Session struct {
	QEMU  QEMU
	Model CacheModel
	// CPU is the processor QEMU presents (zero: QEMU's default model).
	CPU CPU
	dir string
	lib string
	out string
	// disas asks the plugin to list every translated instruction with
	// QEMU's disassembly (tests cross-check the decoder with it).
	disas bool
	// calls, when set, is the function whose calls are counted one by one.
	calls *callArgs
}

type callArgs struct {
	path     string
	at, size uint64
}

// NewSession writes the plugin for q into a new private directory.
func NewSession(q QEMU, m CacheModel) (*Session, error) {
	if len(q.plugin) == 0 {
		return nil, fmt.Errorf("emulate: no plugin for %s", q.Path)
	}
	dir, err := os.MkdirTemp("", "rprof-emulate-")
	if err != nil {
		return nil, fmt.Errorf("emulate: %w", err)
	}
	s := &Session{QEMU: q, Model: m, dir: dir,
		lib: filepath.Join(dir, fmt.Sprintf("rprof-qemu-v%d.so", q.PluginAPI)),
		out: filepath.Join(dir, "out")}
	if err := os.WriteFile(s.lib, q.plugin, 0o755); err != nil {
		s.Close()
		return nil, fmt.Errorf("emulate: %w", err)
	}
	if err := os.Mkdir(s.out, 0o755); err != nil {
		s.Close()
		return nil, fmt.Errorf("emulate: %w", err)
	}
	return s, nil
}

// Close removes the session's directory.
func (s *Session) Close() error { return os.RemoveAll(s.dir) }

// Argv is the command line running argv under QEMU with the plugin. path
// is argv[0] resolved to a file (QEMU does not search PATH); the target
// still sees argv[0] as given. A script (#!) runs under its interpreter,
// as the kernel would start it (QEMU loads only ELF files). Execs are
// followed: the plugin re-enters QEMU with itself for each x86-64 program
// or script the target execs.
func (s *Session) Argv(path string, argv []string) ([]string, error) {
	for _, p := range []string{s.out, s.lib, s.QEMU.Path} {
		if strings.ContainsAny(p, ",=") {
			return nil, fmt.Errorf("emulate: path %q holds a comma or '=', which QEMU's -plugin syntax cannot carry", p)
		}
	}
	args := []string{
		"out=" + s.out,
		fmt.Sprintf("line=%d", s.Model.Line),
		"cache=" + s.Model.pluginArg(),
		"qemu=" + s.QEMU.Path,
		"self=" + s.lib,
	}
	if s.CPU.Option != "" {
		// Followed execs run with the same -cpu; QEMU's option syntax
		// escapes a comma by doubling it.
		args = append(args, "cpu="+strings.ReplaceAll(s.CPU.Option, ",", ",,"))
	}
	if s.disas {
		args = append(args, "disas=1")
	}
	if c := s.calls; c != nil {
		if strings.ContainsAny(c.path, ",=") {
			return nil, fmt.Errorf("emulate: path %q holds a comma or '=', which QEMU's -plugin syntax cannot carry", c.path)
		}
		args = append(args, "call="+c.path, fmt.Sprintf("call_at=%x", c.at), fmt.Sprintf("call_size=%d", c.size))
	}
	// The file QEMU loads, for QEMUs whose plugin API cannot say it.
	interp := interpreter(path)
	loaded := path
	if interp != nil {
		loaded = interp[0]
	}
	args = append(args, "exe="+strings.ReplaceAll(loaded, ",", ",,"))
	out := []string{s.QEMU.Path, "-plugin", s.lib + "," + strings.Join(args, ",")}
	if s.CPU.Option != "" {
		out = append(out, "-cpu", s.CPU.Option)
	}
	if interp != nil {
		out = append(out, "-0", interp[0], interp[0])
		out = append(out, interp[1:]...)
		return append(append(out, path), argv[1:]...), nil
	}
	out = append(out, "-0", argv[0], path)
	return append(out, argv[1:]...), nil
}

// interpreter returns the interpreter line of a script (#!INTERP [ARG]),
// nil for any other file.
func interpreter(path string) []string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	head := make([]byte, 256)
	n, _ := io.ReadFull(f, head)
	line, _, _ := strings.Cut(string(head[:n]), "\n")
	rest, ok := strings.CutPrefix(line, "#!")
	if !ok {
		return nil
	}
	// The kernel passes everything after the interpreter as one argument.
	rest = strings.Trim(rest, " \t\r")
	name, arg := rest, ""
	if i := strings.IndexAny(rest, " \t"); i >= 0 {
		name, arg = rest[:i], strings.Trim(rest[i:], " \t")
	}
	switch {
	case name == "":
		return nil
	case arg != "":
		return []string{name, arg}
	}
	return []string{name}
}

// CountCalls asks the plugin to count every call of the function at ELF
// address addr, size bytes long, in the shared library at path, on its
// own (Result.Calls): all threads' work from the call's entry to its
// return on the thread that made it. Errors: ErrNotSharedLibrary.
func (s *Session) CountCalls(path string, addr, size uint64) error {
	f, err := elf.Open(path)
	if err != nil {
		return fmt.Errorf("emulate: %w", err)
	}
	defer f.Close()
	// The dynamic loader maps the file from offset 0 at the load base,
	// where the first PT_LOAD segment begins; the plugin learns the base
	// from that mmap.
	for _, p := range f.Progs {
		if p.Type != elf.PT_LOAD {
			continue
		}
		if f.Type != elf.ET_DYN || p.Off != 0 || addr < p.Vaddr || size == 0 {
			break
		}
		s.calls = &callArgs{path: path, at: addr - p.Vaddr, size: size}
		return nil
	}
	return fmt.Errorf("%w: %s (function at %#x, %d bytes)", ErrNotSharedLibrary, path, addr, size)
}

// ErrNotSharedLibrary: per-call counts need a function of a shared library
// (one the dynamic loader maps), of known size.
var ErrNotSharedLibrary = errors.New("emulate: calls are counted only in a shared library's sized function")

// Result reads what the plugin wrote for every process and exec'd image
// of the run.
func (s *Session) Result() (Result, error) { return readResult(s.out, s.Model) }
