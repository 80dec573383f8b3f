// Package cuptitest builds a fake libcupti.so and a stand-in CUDA program
// from C (c/fakecupti.c, c/target.c), with which tests drive rprof's real
// injection library without a GPU: the program loads the library as the
// CUDA driver does, and the fake hands it the kernel records its
// environment describes (FAKE_CUPTI_*; see c/fakecupti.c).
package cuptitest

import (
	_ "embed"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

//go:embed c/fakecupti.c
var fakeSource []byte

//go:embed c/target.c
var targetSource []byte

// Build compiles the fake library and the program into a temporary
// directory with gcc, or skips t where gcc is absent.
func Build(t *testing.T) (lib, target string) {
	t.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not found: the fake libcupti and CUDA program are built from C in the test")
	}
	dir := t.TempDir()
	for name, b := range map[string][]byte{"fakecupti.c": fakeSource, "target.c": targetSource} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	lib, target = filepath.Join(dir, "libcupti.so"), filepath.Join(dir, "target")
	for _, args := range [][]string{
		{"-shared", "-fPIC", "-Wall", "-Werror", "-o", lib, filepath.Join(dir, "fakecupti.c")},
		{"-Wall", "-Werror", "-o", target, filepath.Join(dir, "target.c"), "-ldl"},
	} {
		if out, err := exec.Command("gcc", args...).CombinedOutput(); err != nil {
			t.Fatalf("gcc %v: %v\n%s", args, err, out)
		}
	}
	return lib, target
}
