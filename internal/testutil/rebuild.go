package testutil

import (
	"bytes"
	"debug/elf"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// CheckRebuilt rebuilds the committed shared objects builds in dir by
// running dir's build.sh on copies of its sources, and fails t where one
// differs from the committed file byte for byte (the C sources rprof
// embeds builds of: the QEMU plugin, the CUPTI injection library). The
// build is reproducible for one compiler version, so it skips where gcc
// is absent or is not the one that built builds[0] (named in its
// .comment section).
func CheckRebuilt(t *testing.T, dir string, sources, builds []string) {
	t.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not found")
	}
	committed, err := os.ReadFile(filepath.Join(dir, builds[0]))
	if err != nil {
		t.Fatal(err)
	}
	built, err := elfComment(committed)
	if err != nil {
		t.Fatal(err)
	}
	ver, err := exec.Command("gcc", "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(string(ver), "\n")
	if !strings.Contains(built, strings.TrimPrefix(first, "gcc ")) {
		t.Skipf("%s/%s was built by %q, this machine has %q: byte equality holds only for one compiler", dir, builds[0], built, first)
	}
	tmp := t.TempDir()
	for _, f := range append([]string{"build.sh"}, sources...) {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(tmp, f), b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := exec.Command("sh", filepath.Join(tmp, "build.sh")).CombinedOutput(); err != nil {
		t.Fatalf("build.sh: %v\n%s", err, out)
	}
	for _, so := range builds {
		committed, err := os.ReadFile(filepath.Join(dir, so))
		if err != nil {
			t.Fatal(err)
		}
		rebuilt, err := os.ReadFile(filepath.Join(tmp, so))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(rebuilt, committed) {
			t.Errorf("%s/%s differs from a build of its sources (%d vs %d bytes): run %s/build.sh and commit the result", dir, so, len(rebuilt), len(committed), dir)
		}
	}
}

// elfComment returns the .comment section of an ELF file (the compiler's
// identification).
func elfComment(b []byte) (string, error) {
	f, err := elf.NewFile(bytes.NewReader(b))
	if err != nil {
		return "", err
	}
	s := f.Section(".comment")
	if s == nil {
		return "", errors.New("no .comment section")
	}
	d, err := s.Data()
	return strings.TrimRight(string(d), "\x00"), err
}
