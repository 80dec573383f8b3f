package output

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestDistinctRefusesAnOutputThatNamesAnInput(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "r.json")
	os.WriteFile(in, []byte("{}"), 0o644)
	os.Symlink(in, filepath.Join(dir, "link.json"))
	os.Link(in, filepath.Join(dir, "hard.json"))
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	os.Symlink(dir, filepath.Join(dir, "alias"))
	wd, _ := os.Getwd()
	t.Cleanup(func() { os.Chdir(wd) })
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		out, in string
		same    bool
	}{
		{"same path", in, in, true},
		{"relative and absolute", "r.json", in, true},
		{"unclean path", filepath.Join(dir, "sub", "..", "r.json"), in, true},
		{"through a symbolic link", filepath.Join(dir, "link.json"), in, true},
		{"a hard link", filepath.Join(dir, "hard.json"), in, true},
		{"neither exists yet, same path", "new.json", filepath.Join(dir, "new.json"), true},
		{"neither exists yet, through a linked directory", filepath.Join(dir, "alias", "new.json"), "new.json", true},
		{"another file", filepath.Join(dir, "other.json"), in, false},
		{"stdout and stdin", Stdout, Stdout, false},
		{"no output", "", in, false},
		{"a device", "/dev/null", "/dev/null", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := Distinct([]string{"", c.out}, []string{c.in})
			if got := errors.Is(err, ErrSameFile); got != c.same {
				t.Fatalf("Distinct(%q, %q) = %v, want same: %v", c.out, c.in, err, c.same)
			}
		})
	}
}
