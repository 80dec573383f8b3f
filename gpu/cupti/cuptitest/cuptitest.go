// Package cuptitest builds a fake libcupti.so, a fake libnvperf_host.so
// beside it and a stand-in CUDA program from C (c/fakecupti.c,
// c/fakenvperf.c, c/target.c), with which tests drive rprof's real
// injection library without a GPU: the program loads the library as the
// CUDA driver does, and the fakes hand it the kernel records and profiler
// ranges its environment describes (FAKE_CUPTI_*, FAKE_PROFILER_*; see
// the C files).
package cuptitest

import (
	_ "embed"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

//go:embed c/fakecupti.c
var fakeSource []byte

//go:embed c/target.c
var targetSource []byte

//go:embed c/fakenvperf.c
var nvperfSource []byte

// NVPerf is the fake NVPW host library's name, in lib's directory.
const NVPerf = "libnvperf_host.so"

// Build compiles the fake libraries and the program into a temporary
// directory with gcc, or skips t where gcc is absent. The fakes read the
// profiler's parameters through the injection library's profiler.h.
func Build(t *testing.T) (lib, target string) {
	t.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not found: the fake libcupti and CUDA program are built from C in the test")
	}
	dir := t.TempDir()
	_, file, _, _ := runtime.Caller(0)
	include := filepath.Join(filepath.Dir(file), "..", "inject")
	for name, b := range map[string][]byte{"fakecupti.c": fakeSource, "fakenvperf.c": nvperfSource, "target.c": targetSource} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	lib, target = filepath.Join(dir, "libcupti.so"), filepath.Join(dir, "target")
	for _, args := range [][]string{
		{"-shared", "-fPIC", "-Wall", "-Werror", "-I", include, "-o", lib, filepath.Join(dir, "fakecupti.c"), "-ldl"},
		{"-shared", "-fPIC", "-Wall", "-Werror", "-I", include, "-o", filepath.Join(dir, NVPerf), filepath.Join(dir, "fakenvperf.c"), "-ldl"},
		{"-Wall", "-Werror", "-o", target, filepath.Join(dir, "target.c"), "-ldl"},
	} {
		if out, err := exec.Command("gcc", args...).CombinedOutput(); err != nil {
			t.Fatalf("gcc %v: %v\n%s", args, err, out)
		}
	}
	return lib, target
}
