package launch

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// The test binary is its own launcher, as rprof is: Run re-executes
// os.Executable() with Role where ptrace is not used.
func init() { runtime.LockOSThread() }

// progsDir holds the C test programs of testdata/progs, built once;
// progsErr says why they could not be.
var progsDir, progsErr = "", error(nil)

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == Role {
		os.Exit(Main(os.Args))
	}
	runtime.UnlockOSThread()
	dir, err := os.MkdirTemp("", "rprof-progs-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	progsDir, progsErr = dir, buildProgs(dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func buildProgs(dir string) error {
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		return fmt.Errorf("no C compiler to build testdata/progs: %w", err)
	}
	srcs, err := filepath.Glob("testdata/progs/*.c")
	if err != nil || len(srcs) == 0 {
		return fmt.Errorf("no testdata/progs/*.c: %v", err)
	}
	for _, src := range srcs {
		out := filepath.Join(dir, strings.TrimSuffix(filepath.Base(src), ".c"))
		if b, err := exec.Command(gcc, "-O2", "-pthread", "-o", out, src).CombinedOutput(); err != nil {
			return fmt.Errorf("gcc %s: %v: %s", src, err, b)
		}
	}
	return nil
}

// prog is the path of a built test program, or skips the test.
func prog(t testing.TB, name string) string {
	t.Helper()
	if progsErr != nil {
		t.Skipf("unmet requirement: %v", progsErr)
	}
	return filepath.Join(progsDir, name)
}
