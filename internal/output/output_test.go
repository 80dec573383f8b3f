package output

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

func writeString(s string) func(io.Writer) error {
	return func(w io.Writer) error {
		_, err := io.WriteString(w, s)
		return err
	}
}

func TestWriteNewFileTakesTheUmask(t *testing.T) {
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	path := filepath.Join(t.TempDir(), "p.json")
	if err := Write(context.Background(), path, nil, writeString("x")); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := st.Mode().Perm(); got != 0o600 {
		t.Errorf("mode %v under umask 077, want -rw-------", got)
	}
	syscall.Umask(0o022)
	path2 := filepath.Join(t.TempDir(), "q.json")
	if err := Write(context.Background(), path2, nil, writeString("x")); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(path2); st.Mode().Perm() != 0o644 {
		t.Errorf("mode %v under umask 022, want -rw-r--r--", st.Mode().Perm())
	}
}

func TestWriteKeepsTheReplacedFilesMode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.json")
	if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Chmod(path, 0o640)
	if err := Write(context.Background(), path, nil, writeString("new")); err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(path)
	if st.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want the replaced file's -rw-r-----", st.Mode().Perm())
	}
	if b, _ := os.ReadFile(path); string(b) != "new" {
		t.Errorf("content %q, want new", b)
	}
}

func TestWriteFailureLeavesTheOldFileAndNoTemporary(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "p.json")
	os.WriteFile(path, []byte("old"), 0o644)
	boom := errors.New("boom")
	err := Write(context.Background(), path, nil, func(w io.Writer) error {
		io.WriteString(w, "half")
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want boom", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "old" {
		t.Errorf("content %q, want the old file untouched", b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("directory holds %d entries, want only the old file (no temporary left)", len(ents))
	}
}

func TestWriteThroughASymlinkReplacesItsTarget(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "real.json")
	link := filepath.Join(dir, "link.json")
	os.WriteFile(target, []byte("old"), 0o644)
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if err := Write(context.Background(), link, nil, writeString("new")); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Lstat(link); st.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("the link was replaced by a %v", st.Mode())
	}
	if b, _ := os.ReadFile(target); string(b) != "new" {
		t.Errorf("target holds %q, want new", b)
	}
}

func TestWriteDashGoesToStdout(t *testing.T) {
	var b bytes.Buffer
	if err := Write(context.Background(), Stdout, &b, writeString("doc")); err != nil {
		t.Fatal(err)
	}
	if b.String() != "doc" {
		t.Errorf("stdout got %q", b.String())
	}
}

func TestWriteDevNullStaysADevice(t *testing.T) {
	if err := Check("/dev/null"); err != nil {
		t.Fatal(err)
	}
	if err := Write(context.Background(), "/dev/null", nil, writeString("discarded")); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat("/dev/null")
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode()&fs.ModeCharDevice == 0 {
		t.Fatalf("/dev/null is now %v", st.Mode())
	}
}

func TestWriteFIFOStaysAFIFOAndItsReaderGetsTheDocument(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	if err := Check(path); err != nil {
		t.Fatal(err)
	}
	got := make(chan string)
	go func() {
		f, err := os.Open(path)
		if err != nil {
			got <- err.Error()
			return
		}
		b, _ := io.ReadAll(f)
		f.Close()
		got <- string(b)
	}()
	if err := Write(context.Background(), path, nil, writeString("doc")); err != nil {
		t.Fatal(err)
	}
	if s := <-got; s != "doc" {
		t.Errorf("reader got %q", s)
	}
	if st, _ := os.Lstat(path); st.Mode()&fs.ModeNamedPipe == 0 {
		t.Errorf("the FIFO was replaced by a %v", st.Mode())
	}
}

func TestWriteUnixSocketSendsTheDocument(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sock")
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Skipf("listen: %v", err)
	}
	defer l.Close()
	got := make(chan string)
	go func() {
		c, err := l.Accept()
		if err != nil {
			got <- err.Error()
			return
		}
		b, _ := io.ReadAll(c)
		c.Close()
		got <- string(b)
	}()
	if err := Check(path); err != nil {
		t.Fatal(err)
	}
	if err := Write(context.Background(), path, nil, writeString("doc")); err != nil {
		t.Fatal(err)
	}
	if s := <-got; s != "doc" {
		t.Errorf("listener got %q", s)
	}
}

func TestWriteDescriptorPathWritesTheDescriptor(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	path := "/dev/fd/" + strconv.Itoa(int(w.Fd()))
	if _, err := os.Stat("/dev/fd"); err != nil {
		t.Skip("no /dev/fd")
	}
	if err := Check(path); err != nil {
		t.Fatal(err)
	}
	if err := Write(context.Background(), path, nil, writeString("doc")); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if b, _ := io.ReadAll(r); string(b) != "doc" {
		t.Errorf("pipe got %q", b)
	}
}

func TestCheckRefusesAMissingDirectoryAndCreatesNone(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "missing", "deeper", "r.json")
	err := Check(path)
	if !errors.Is(err, ErrNotWritable) || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("Check = %v, want a missing directory refused", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Check created a directory")
	}
	if err := Write(context.Background(), path, nil, writeString("x")); err == nil {
		t.Errorf("Write into a missing directory succeeded")
	}
	if _, err := os.Stat(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Write created a directory")
	}
}

func TestCheckRefusesADirectory(t *testing.T) {
	if err := Check(t.TempDir()); !errors.Is(err, ErrNotWritable) {
		t.Fatalf("Check(dir) = %v, want ErrNotWritable", err)
	}
}

func TestCheckLeavesNothingBehind(t *testing.T) {
	dir := t.TempDir()
	if err := Check(filepath.Join(dir, "r.json")); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("Check left %d entries", len(ents))
	}
}

func TestCheckAcceptsDash(t *testing.T) {
	if err := Check(Stdout); err != nil {
		t.Fatal(err)
	}
}
