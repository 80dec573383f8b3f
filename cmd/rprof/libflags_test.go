package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// longFlag is a command-line flag in a string: two dashes and a name, not
// inside a word or a longer run of dashes.
var longFlag = regexp.MustCompile(`(?:^|[^-\w])(--[a-z][a-z0-9-]*)`)

// otherPrograms are the library strings that name flags of programs other
// than rprof, which they run or describe; rprof's own flags are named by
// cmd/rprof alone (cmd/rprof/internal/advice).
var otherPrograms = map[string]string{
	// QEMU identifies itself when run with --version.
	"measure/emulate/qemu.go: --version": "an argument rprof gives qemu-x86_64",
	// The reader's error says how Nsight Compute writes what it reads.
	"gpu/ncu/ncu.go: not an Nsight Compute CSV export (ncu --csv --page raw)": "ncu's own flags",
	// The oneDNN 3 test helper links and loads its C program.
	"internal/testutil/onednn3.go: --library-path":              "an argument of the dynamic loader",
	"internal/testutil/onednn3.go: -Wl,--allow-shlib-undefined": "an argument of the linker",
	// The rebuild check asks gcc which compiler it is.
	"internal/testutil/rebuild.go: --version": "an argument rprof's tests give gcc",
}

// TestLibrariesNameNoFlags keeps advice in one place: a library returns
// codes and typed errors, and the command turns them into the remedies
// that name its flags. It scans the string literals of every non-test Go
// file outside cmd/.
func TestLibrariesNameNoFlags(t *testing.T) {
	root := filepath.Join("..", "..")
	seen, files := map[string]bool{}, 0
	walkRepo(t, root, func(rel, file string) {
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return
		}
		files++
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil || !longFlag.MatchString(s) {
				return true
			}
			key := rel + ": " + s
			if _, ok := otherPrograms[key]; ok {
				seen[key] = true
				return true
			}
			t.Errorf("%s:%d names a flag (%s) in %q: return a code or typed error and let cmd/rprof's advice name it",
				rel, fset.Position(lit.Pos()).Line, longFlag.FindStringSubmatch(s)[1], s)
			return true
		})
	}, "cmd")
	if files < 100 {
		t.Fatalf("scanned only %d files: the walk is broken", files)
	}
	for key := range otherPrograms {
		if !seen[key] {
			t.Errorf("exception %q matches nothing: drop it", key)
		}
	}
}
