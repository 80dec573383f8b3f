package output

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// nobody is the unprivileged user who plants links and files.
const nobody = 65534

// asNobody runs argv as the unprivileged user, as an attacker sharing
// /tmp would; it needs root to switch users, and skips otherwise.
func asNobody(t *testing.T, argv ...string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("running as another user needs root")
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("as uid %d: %v: %v\n%s", nobody, argv, err, out)
	}
}

// plant gives path to the unprivileged user (lchown: a link itself), for
// a directory that user cannot write; it needs root and skips otherwise.
func plant(t *testing.T, path string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("giving a file to another user needs root")
	}
	if err := os.Lchown(path, nobody, nobody); err != nil {
		t.Fatal(err)
	}
}

// sharedDir is a sticky world-writable directory, as /tmp, that every
// user can reach.
func sharedDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o777|fs.ModeSticky); err != nil {
		t.Fatal(err)
	}
	os.Chmod(filepath.Dir(dir), 0o755)
	return dir
}

// shell says whether `printf new > path` succeeds in sh.
func shell(t *testing.T, path string) bool {
	t.Helper()
	return exec.Command("sh", "-c", `printf new > "$1"`, "sh", path).Run() == nil
}

// errSplit marks a case where the write succeeds by replacing the name
// given, leaving the file it was linked to untouched.
var errSplit = errors.New("the hard link is split")

func TestWriteFollowsLinksAndRefusesPlantedOnes(t *testing.T) {
	for _, c := range []struct {
		name string
		// setup returns the output path and the file the write must (or
		// must not) reach.
		setup   func(t *testing.T) (out, victim string)
		wantErr error // nil: the write reaches victim
	}{
		{"own link in a private directory is followed", func(t *testing.T) (string, string) {
			dir := t.TempDir()
			victim := filepath.Join(dir, "real.json")
			os.WriteFile(victim, []byte("old"), 0o644)
			os.Symlink(victim, filepath.Join(dir, "link.json"))
			return filepath.Join(dir, "link.json"), victim
		}, nil},
		{"link in a linked directory is followed", func(t *testing.T) (string, string) {
			dir := t.TempDir()
			os.Mkdir(filepath.Join(dir, "real"), 0o755)
			os.Symlink("real", filepath.Join(dir, "alias"))
			victim := filepath.Join(dir, "real", "p.json")
			os.WriteFile(victim, []byte("old"), 0o644)
			return filepath.Join(dir, "alias", "p.json"), victim
		}, nil},
		{"another user's link in a sticky directory is refused", func(t *testing.T) (string, string) {
			victim := filepath.Join(t.TempDir(), "passwd")
			os.WriteFile(victim, []byte("old"), 0o644)
			out := filepath.Join(sharedDir(t), "result.json")
			asNobody(t, "ln", "-s", victim, out)
			return out, victim
		}, ErrForeign},
		{"another user's link to a sticky directory is refused", func(t *testing.T) (string, string) {
			private := t.TempDir()
			victim := filepath.Join(private, "p.json")
			os.WriteFile(victim, []byte("old"), 0o644)
			link := filepath.Join(sharedDir(t), "d")
			asNobody(t, "ln", "-s", private, link)
			return filepath.Join(link, "p.json"), victim
		}, ErrForeign},
		{"another user's file in a sticky directory is refused", func(t *testing.T) (string, string) {
			out := filepath.Join(sharedDir(t), "result.json")
			asNobody(t, "sh", "-c", `printf old > "$1"; chmod 666 "$1"`, "sh", out)
			return out, out
		}, ErrForeign},
		{"another user's FIFO in a sticky directory is refused", func(t *testing.T) (string, string) {
			out := filepath.Join(sharedDir(t), "result.json")
			asNobody(t, "mkfifo", "-m", "666", out)
			// Reading the FIFO would wait for a writer: a file stands
			// in for what must not change.
			return out, filepath.Join(t.TempDir(), "untouched")
		}, ErrForeign},
		{"another user's hard link to our file in a sticky directory is split", func(t *testing.T) (string, string) {
			private := t.TempDir()
			victim := filepath.Join(private, "p.json")
			os.WriteFile(victim, []byte("old"), 0o644)
			// Writable by all: fs.protected_hardlinks lets a user link
			// only to files they may read and write.
			os.Chmod(victim, 0o666)
			os.Chmod(private, 0o755)
			os.Chmod(filepath.Dir(private), 0o755)
			out := filepath.Join(sharedDir(t), "result.json")
			asNobody(t, "ln", victim, out)
			return out, victim
		}, errSplit},
		{"another user's link in a plain directory is followed", func(t *testing.T) (string, string) {
			dir := t.TempDir()
			victim := filepath.Join(dir, "real.json")
			os.WriteFile(victim, []byte("old"), 0o644)
			out := filepath.Join(dir, "link.json")
			os.Symlink(victim, out)
			plant(t, out)
			return out, victim
		}, nil},
		{"a dangling link is refused", func(t *testing.T) (string, string) {
			dir := t.TempDir()
			out := filepath.Join(dir, "link.json")
			os.Symlink(filepath.Join(dir, "none.json"), out)
			return out, filepath.Join(dir, "none.json")
		}, ErrDanglingLink},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, victim := c.setup(t)
			before, _ := os.ReadFile(victim)
			cerr := Check(out)
			werr := Write(context.Background(), out, nil, writeString("new"))
			after, _ := os.ReadFile(victim)
			if c.wantErr == errSplit {
				got, _ := os.ReadFile(out)
				if cerr != nil || werr != nil || string(after) != string(before) || string(got) != "new" {
					t.Fatalf("Check = %v, Write = %v, %s holds %q, %s %q: want the link split, the other name untouched", cerr, werr, out, got, victim, after)
				}
				return
			}
			if c.wantErr != nil {
				if !errors.Is(cerr, c.wantErr) || !errors.Is(cerr, ErrNotWritable) || !errors.Is(werr, c.wantErr) {
					t.Fatalf("Check = %v, Write = %v; want both %v", cerr, werr, c.wantErr)
				}
				if string(after) != string(before) {
					t.Fatalf("%s changed from %q to %q", victim, before, after)
				}
				t.Logf("refused: %v", werr)
				return
			}
			if cerr != nil || werr != nil {
				t.Fatalf("Check = %v, Write = %v", cerr, werr)
			}
			if string(after) != "new" {
				t.Fatalf("%s holds %q, want new", victim, after)
			}
			if st, err := os.Lstat(out); err != nil || (out != victim && st.Mode()&fs.ModeSymlink == 0 && filepath.Base(out) == "link.json") {
				t.Errorf("the link was replaced: %v %v", st.Mode(), err)
			}
		})
	}
}

func TestWriteRefusesWhatTheShellRefuses(t *testing.T) {
	for _, mode := range []fs.FileMode{0o444, 0o644, 0o200} {
		t.Run(mode.String(), func(t *testing.T) {
			dir := t.TempDir()
			a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
			for _, p := range []string{a, b} {
				os.WriteFile(p, []byte("old"), 0o644)
				os.Chmod(p, mode)
			}
			want := shell(t, a)
			err := Check(b)
			if (err == nil) != want {
				t.Fatalf("Check = %v, while sh's > succeeded: %v (euid %d)", err, want, os.Geteuid())
			}
			if err := Write(context.Background(), b, nil, writeString("new")); (err == nil) != want {
				t.Fatalf("Write = %v, while sh's > succeeded: %v", err, want)
			}
			sa, _ := os.Stat(a)
			sb, _ := os.Stat(b)
			if sa.Mode() != sb.Mode() {
				t.Errorf("mode after Write %v, after sh's > %v", sb.Mode(), sa.Mode())
			}
		})
	}
}

func TestWriteKeepsSetIDBitsAndHardLinks(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		dir  string
		mode fs.FileMode
		link bool // a second hard link
		// wantShared: the second name still sees the new content.
		wantShared bool
	}{
		{"set-user-ID", dir, 0o755 | fs.ModeSetuid, false, false},
		{"set-group-ID", dir, 0o755 | fs.ModeSetgid, false, false},
		{"hard link", dir, 0o644, true, true},
		{"hard link in a sticky directory is split", sharedDir(t), 0o644, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, b := filepath.Join(c.dir, "a-"+c.name), filepath.Join(c.dir, "b-"+c.name)
			os.WriteFile(a, []byte("old"), 0o644)
			os.WriteFile(b, []byte("old"), 0o644)
			if err := os.Chmod(a, c.mode); err != nil {
				t.Fatal(err)
			}
			os.Chmod(b, c.mode)
			second := a + ".2"
			if c.link {
				if err := os.Link(a, second); err != nil {
					t.Fatal(err)
				}
			}
			if !shell(t, b) {
				t.Fatal("sh could not write the twin file")
			}
			if err := Write(context.Background(), a, nil, writeString("new")); err != nil {
				t.Fatal(err)
			}
			sa, _ := os.Stat(a)
			sb, _ := os.Stat(b)
			if sa.Mode() != sb.Mode() {
				t.Errorf("mode after Write %v, after sh's > %v", sa.Mode(), sb.Mode())
			}
			if got, _ := os.ReadFile(a); string(got) != "new" {
				t.Errorf("%s holds %q", a, got)
			}
			if c.link {
				got, _ := os.ReadFile(second)
				if shared := string(got) == "new"; shared != c.wantShared {
					t.Errorf("the other hard link holds %q; want it to see the write: %v", got, c.wantShared)
				}
			}
		})
	}
}

func TestWriteFIFOWithoutReaderEndsWithTheContext(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	if err := Check(path); err != nil {
		t.Fatalf("Check on a FIFO without a reader = %v, want nil (Write waits)", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- Write(ctx, path, nil, writeString("doc")) }()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Write = %v, want context.Canceled", err)
	}
}

// Check asks about a FIFO without opening it: a reader already waiting
// would otherwise take the empty open as its whole document.
func TestCheckLeavesAWaitingFIFOReaderWaiting(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	got := make(chan string, 1)
	opened := make(chan struct{})
	go func() {
		f, err := os.Open(path)
		close(opened)
		if err != nil {
			got <- err.Error()
			return
		}
		b, _ := io.ReadAll(f)
		f.Close()
		got <- string(b)
	}()
	// The reader blocks in open until a writer comes; give it time to.
	time.Sleep(50 * time.Millisecond)
	if err := Check(path); err != nil {
		t.Fatal(err)
	}
	select {
	case <-opened:
		t.Fatal("Check opened the FIFO: its reader woke up")
	case <-time.After(50 * time.Millisecond):
	}
	if err := Write(context.Background(), path, nil, writeString("doc")); err != nil {
		t.Fatal(err)
	}
	if s := <-got; s != "doc" {
		t.Errorf("reader got %q, want doc", s)
	}
}
