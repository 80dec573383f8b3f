package main

import (
	"bufio"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// archRow is a row of docs/architecture.md's table: the package, the
// generator script or the type it is about, in backquotes.
var archRow = regexp.MustCompile("^\\| `([^`]+)` \\|")

// TestArchitectureHasARowForEveryPackageAndGenerator reads the table of
// docs/architecture.md against the tree, as go list ./... and the build
// scripts of committed output find it: every package (test-only ones and
// generators included) and every build.sh has one row; a row names one of
// them, or a package's type (machine.Host).
func TestArchitectureHasARowForEveryPackageAndGenerator(t *testing.T) {
	root := filepath.Join("..", "..")
	want := map[string]bool{} // package directories and build scripts
	walkRepo(t, root, func(rel, _ string) {
		switch name := path.Base(rel); {
		case strings.HasSuffix(name, ".go"):
			want[path.Dir(rel)] = true
		case name == "build.sh":
			want[rel] = true
		}
	})
	if len(want) < 20 {
		t.Fatalf("found %d packages and build scripts: not the repository's tree", len(want))
	}
	f, err := os.Open(filepath.Join(root, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows := map[string]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		m := archRow.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		rows[m[1]]++
		pkg, _, _ := strings.Cut(m[1], ".")
		if !want[m[1]] && !want[pkg] {
			t.Errorf("docs/architecture.md has a row for %s, which is no package, build script or package's type", m[1])
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	for p := range want {
		switch rows[p] {
		case 0:
			t.Errorf("docs/architecture.md has no row for %s", p)
		case 1:
		default:
			t.Errorf("docs/architecture.md has %d rows for %s: one says what it owns", rows[p], p)
		}
	}
}

// walkRepo calls visit with every file below root (rel: its slash path
// from root), leaving out the directories the go command leaves out of
// ./... (testdata, and names that begin with "." or "_") and the top-level
// directories in skip.
func walkRepo(t *testing.T, root string, visit func(rel, file string), skip ...string) {
	t.Helper()
	err := filepath.WalkDir(root, func(file string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, file)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if !d.IsDir() {
			visit(rel, file)
			return nil
		}
		name := d.Name()
		if rel != "." && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || slices.Contains(skip, rel)) {
			return filepath.SkipDir
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
