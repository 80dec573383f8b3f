package output

import (
	"context"
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
	if err := Write(context.Background(), path, nil, writeString("x")); err == nil {
		t.Fatal("Write into a read-only directory succeeded")
	}
}

// inMountNamespace re-runs the calling test as root in a private mount
// namespace and reports its result: it returns true in the re-run, false
// in the caller (which then returns). It skips when not root.
func inMountNamespace(t *testing.T) bool {
	t.Helper()
	if os.Getenv("RPROF_OUTPUT_NS") == t.Name() {
		return true
	}
	if os.Geteuid() != 0 {
		t.Skip("mounting needs root")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.v")
	cmd.Env = append(os.Environ(), "RPROF_OUTPUT_NS="+t.Name())
	cmd.SysProcAttr = &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("in a private mount namespace: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "--- PASS: "+t.Name()) {
		t.Fatalf("the re-run did not pass:\n%s", out)
	}
	t.Logf("in a private mount namespace:\n%s", out)
	return false
}

func TestCheckRefusesAFullFileSystem(t *testing.T) {
	if !inMountNamespace(t) {
		return
	}
	dir := t.TempDir()
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size=64k"); err != nil {
		t.Skipf("mount tmpfs: %v", err)
	}
	t.Cleanup(func() { unix.Unmount(dir, unix.MNT_DETACH) })
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

// A finished run is never lost to an output that cannot be renamed over:
// each is written in place, as `>` would, and stays what it was.
func TestWriteInPlaceWhereRenameIsImpossible(t *testing.T) {
	if !inMountNamespace(t) {
		return
	}
	for _, c := range []struct {
		name string
		// setup returns the output path; the file there holds "old".
		setup func(t *testing.T) string
	}{
		{"file bind-mounted from the same file system (EBUSY)", func(t *testing.T) string {
			src := filepath.Join(t.TempDir(), "host.json")
			os.WriteFile(src, []byte("old"), 0o644)
			out := filepath.Join(t.TempDir(), "r.json")
			os.WriteFile(out, nil, 0o644)
			bind(t, src, out)
			return out
		}},
		{"file on a tmpfs bind-mounted onto the disk", func(t *testing.T) string {
			mnt := t.TempDir()
			if err := unix.Mount("tmpfs", mnt, "tmpfs", 0, "size=1m"); err != nil {
				t.Skipf("mount tmpfs: %v", err)
			}
			t.Cleanup(func() { unix.Unmount(mnt, unix.MNT_DETACH) })
			src := filepath.Join(mnt, "host.json")
			os.WriteFile(src, []byte("old"), 0o644)
			out := filepath.Join(t.TempDir(), "r.json")
			os.WriteFile(out, nil, 0o644)
			bind(t, src, out)
			return out
		}},
		{"writable file in a read-only directory", func(t *testing.T) string {
			dir := t.TempDir()
			out := filepath.Join(dir, "r.json")
			src := filepath.Join(t.TempDir(), "r.json")
			os.WriteFile(src, []byte("old"), 0o644)
			os.WriteFile(out, nil, 0o644)
			// The directory is read-only; the file in it a writable
			// bind mount of src.
			bind(t, dir, dir)
			if err := unix.Mount("", dir, "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY, ""); err != nil {
				t.Fatalf("read-only remount: %v", err)
			}
			bind(t, src, out)
			return out
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := c.setup(t)
			before, _ := os.Stat(out)
			if err := Check(out); err != nil {
				t.Fatalf("Check = %v", err)
			}
			if err := Write(context.Background(), out, nil, writeString("new")); err != nil {
				t.Fatalf("Write = %v", err)
			}
			if got, _ := os.ReadFile(out); string(got) != "new" {
				t.Fatalf("%s holds %q, want new", out, got)
			}
			if after, _ := os.Stat(out); !os.SameFile(before, after) {
				t.Errorf("the file was replaced, not written in place")
			}
			if ents, _ := os.ReadDir(filepath.Dir(out)); len(ents) != 1 {
				t.Errorf("the directory holds %d entries, want the output alone", len(ents))
			}
		})
	}
}

// bind bind-mounts src onto dst, unmounted when the test ends.
func bind(t *testing.T, src, dst string) {
	t.Helper()
	if err := unix.Mount(src, dst, "", unix.MS_BIND, ""); err != nil {
		t.Fatalf("bind mount %s on %s: %v", src, dst, err)
	}
	t.Cleanup(func() { unix.Unmount(dst, unix.MNT_DETACH) })
}
