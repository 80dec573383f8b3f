package roofline

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestEveryFlagCodeIsDocumented keeps the schema documents' flag tables
// complete: programs act on flag codes, so a code missing from the tables
// is a code users cannot look up.
func TestEveryFlagCodeIsDocumented(t *testing.T) {
	var docs strings.Builder
	for _, name := range []string{"schema-point.md", "schema-roofs.md"} {
		b, err := os.ReadFile(filepath.Join("..", "docs", name))
		if err != nil {
			t.Fatal(err)
		}
		docs.Write(b)
	}
	codes := flagCodes(t)
	if len(codes) < 10 {
		t.Fatalf("found only %d flag codes in the package: the source scan is broken", len(codes))
	}
	for name, code := range codes {
		if !strings.Contains(docs.String(), "`"+code+"`") {
			t.Errorf("%s = %q is in neither docs/schema-point.md nor docs/schema-roofs.md", name, code)
		}
	}
}

// flagCodes returns the package's string constants named Flag*.
func flagCodes(t *testing.T) map[string]string {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	codes := map[string]string{}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, id := range vs.Names {
					if !strings.HasPrefix(id.Name, "Flag") || i >= len(vs.Values) {
						continue
					}
					lit, ok := vs.Values[i].(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						continue
					}
					v, err := strconv.Unquote(lit.Value)
					if err != nil {
						t.Fatal(err)
					}
					codes[id.Name] = v
				}
			}
		}
	}
	return codes
}
