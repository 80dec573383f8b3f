package roofline

import (
	"go/build"
	"path/filepath"
	"strings"
	"testing"
)

// roofline is the bottom layer: plain data and pure functions. Its
// non-test files do no I/O of their own (documents come and go through
// io.Reader and io.Writer, paths are the command's) and import no rprof
// package but leaves, packages that themselves import no rprof package and
// do no I/O either.
func TestRooflineImportsNoOSAndNothingAboveIt(t *testing.T) {
	const module = "github.com/rprof/rprof/"
	doesIO := func(imp string) bool {
		return imp == "os" || strings.HasPrefix(imp, "os/") || imp == "syscall" || imp == "net" || strings.HasPrefix(imp, "net/")
	}
	for _, goos := range []string{"linux", "darwin"} {
		ctx := build.Default
		ctx.GOOS = goos
		pkg, err := ctx.ImportDir(".", 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range pkg.Imports {
			switch {
			case doesIO(imp):
				t.Errorf("GOOS=%s: roofline imports %s: documents are read and written by the command", goos, imp)
			case strings.HasPrefix(imp, module):
				leaf, err := ctx.ImportDir(filepath.Join("..", strings.TrimPrefix(imp, module)), 0)
				if err != nil {
					t.Fatal(err)
				}
				for _, up := range leaf.Imports {
					if strings.HasPrefix(up, module) || doesIO(up) {
						t.Errorf("GOOS=%s: roofline imports %s, which imports %s: roofline may import only rprof's leaves that do no I/O", goos, imp, up)
					}
				}
			}
		}
	}
}
