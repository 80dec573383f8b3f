package testutil

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// OneDNN3Env names the tree of oneDNN 3.x that scripts/test.sh unpacks:
// Debian 13's libdnnl3.6 and libdnnl-dev (oneDNN 3.7) with Debian 13's C
// and C++ runtime, which that build needs (glibc 2.38 or later, libstdc++
// 14) and an older host does not have. Unset, the tests look in the
// script's default place, $XDG_CACHE_HOME/rprof-test/onednn3-trixie/root.
const OneDNN3Env = "RPROF_ONEDNN3_ROOT"

// OneDNN3 is that tree. Its programs run under the tree's own dynamic
// loader, so that they get the tree's glibc.
type OneDNN3 struct{ Root string }

// FindOneDNN3 returns the tree, or skips the test saying how to get one.
func FindOneDNN3(t testing.TB) OneDNN3 {
	t.Helper()
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skipf("the oneDNN 3.x tree is Debian's linux/amd64 build; this is %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	root := os.Getenv(OneDNN3Env)
	if root == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			t.Skipf("no oneDNN 3.x tree: %s is unset and there is no cache directory: %v", OneDNN3Env, err)
		}
		root = filepath.Join(cache, "rprof-test", "onednn3-trixie", "root")
	}
	// scripts/test.sh writes .complete after checking and unpacking every
	// package.
	if _, err := os.Stat(filepath.Join(root, ".complete")); err != nil {
		t.Skipf("no oneDNN 3.x tree at %s (scripts/test.sh downloads Debian 13's oneDNN 3.7 and runtime there): %v", root, err)
	}
	return OneDNN3{Root: root}
}

// LibDir holds the tree's libraries and loader.
func (o OneDNN3) LibDir() string { return filepath.Join(o.Root, "usr", "lib", "x86_64-linux-gnu") }

// Include holds the oneDNN 3.x headers.
func (o OneDNN3) Include() string { return filepath.Join(o.Root, "usr", "include") }

// Command runs prog under the tree's loader, which looks for libraries
// (those prog needs and those it dlopens) in the tree first.
func (o OneDNN3) Command(prog string, args ...string) *exec.Cmd {
	loader := filepath.Join(o.LibDir(), "ld-linux-x86-64.so.2")
	return exec.Command(loader, append([]string{"--library-path", o.LibDir(), prog}, args...)...)
}

// CompileC compiles the C file src against the tree's headers and
// libdnnl into the executable out, skipping the test without gcc. The
// host's linker cannot resolve the tree's libraries' references to the
// newer glibc, which the tree's loader resolves at run time.
func (o OneDNN3) CompileC(t testing.TB, src, out string) {
	t.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed")
	}
	cmd := exec.Command("gcc", "-o", out, "-I", o.Include(), src, "-L", o.LibDir(), "-Wl,--allow-shlib-undefined", "-ldnnl")
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gcc %s: %v\n%s", src, err, msg)
	}
}
