package output

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// inReadOnlyMount returns a directory no file can be created in, even by
// root: a mode 0555 directory for other users; for root, whom permission
// bits do not stop, the test re-runs itself in a private mount namespace
// where the directory is a read-only bind mount (helper is then true).
func inReadOnlyMount(t *testing.T, name string) (dir string, helper bool) {
	t.Helper()
	if d := os.Getenv("RPROF_OUTPUT_RO_DIR"); d != "" {
		if err := unix.Mount(d, d, "", unix.MS_BIND, ""); err != nil {
			t.Fatalf("bind mount: %v", err)
		}
		if err := unix.Mount("", d, "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY, ""); err != nil {
			t.Fatalf("read-only remount: %v", err)
		}
		return d, true
	}
	dir = t.TempDir()
	if os.Geteuid() != 0 {
		if err := os.Chmod(dir, 0o555); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(dir, 0o755) })
		return dir, false
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+name+"$", "-test.v")
	cmd.Env = append(os.Environ(), "RPROF_OUTPUT_RO_DIR="+dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS}
	out, err := cmd.CombinedOutput()
	if err != nil {
		if strings.Contains(string(out), "bind mount") || strings.Contains(string(out), "operation not permitted") {
			t.Skipf("no private read-only mount here: %s", out)
		}
		t.Fatalf("in a read-only mount: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "--- PASS: "+name) {
		t.Fatalf("helper did not pass:\n%s", out)
	}
	return "", false
}

func TestCheckRefusesAReadOnlyDirectoryEvenAsRoot(t *testing.T) {
	dir, helper := inReadOnlyMount(t, "TestCheckRefusesAReadOnlyDirectoryEvenAsRoot")
	if dir == "" && !helper {
		return // the re-run in the mount namespace passed
	}
	path := filepath.Join(dir, "r.json")
	err := Check(path)
	if !errors.Is(err, ErrNotWritable) {
		t.Fatalf("Check = %v, want ErrNotWritable", err)
	}
	t.Logf("Check: %v", err)
	if err := Write(path, nil, writeString("x")); err == nil {
		t.Fatal("Write into a read-only directory succeeded")
	}
}

func TestCheckRefusesAFullFileSystem(t *testing.T) {
	if os.Getenv("RPROF_OUTPUT_FULL") == "" {
		if os.Geteuid() != 0 {
			t.Skip("mounting a small tmpfs needs root")
		}
		cmd := exec.Command(os.Args[0], "-test.run=^TestCheckRefusesAFullFileSystem$", "-test.v")
		cmd.Env = append(os.Environ(), "RPROF_OUTPUT_FULL="+t.TempDir())
		cmd.SysProcAttr = &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("in a full tmpfs: %v\n%s", err, out)
		}
		if !strings.Contains(string(out), "--- PASS: TestCheckRefusesAFullFileSystem") {
			t.Fatalf("helper did not pass:\n%s", out)
		}
		return
	}
	dir := os.Getenv("RPROF_OUTPUT_FULL")
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size=64k"); err != nil {
		t.Skipf("mount tmpfs: %v", err)
	}
	f, err := os.Create(filepath.Join(dir, "fill"))
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := f.Write(make([]byte, 4096)); err != nil {
			break
		}
	}
	f.Close()
	err = Check(filepath.Join(dir, "r.json"))
	if !errors.Is(err, ErrNotWritable) {
		t.Fatalf("Check on a full file system = %v, want ErrNotWritable", err)
	}
	t.Logf("Check: %v", err)
}
