//go:build unix

package rundir

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
)

func TestPathChoosesTheRuntimeDirectory(t *testing.T) {
	me := os.Geteuid()
	other := 65534
	if me == other {
		other = 65533
	}
	mine := t.TempDir()
	othersDir := filepath.Join(t.TempDir(), "other")
	must(t, os.Mkdir(othersDir, 0o700))
	chowned := os.Lchown(othersDir, other, other) == nil // root only
	root := "/run/rprof"
	if st, err := os.Stat("/run"); err != nil || !st.IsDir() {
		root = filepath.Join(os.TempDir(), "rprof-0")
	}
	fallback := filepath.Join(os.TempDir(), "rprof-"+strconv.Itoa(me))
	if me == 0 {
		fallback = root
	}
	tests := []struct {
		name string
		xdg  string
		euid int
		want string
	}{
		{"XDG_RUNTIME_DIR of the user", mine, me, filepath.Join(mine, "rprof")},
		{"root without XDG_RUNTIME_DIR", "", 0, root},
		{"a user without XDG_RUNTIME_DIR", "", 1000, filepath.Join(os.TempDir(), "rprof-1000")},
		{"a relative XDG_RUNTIME_DIR is passed over", "run", me, fallback},
		{"a missing XDG_RUNTIME_DIR is passed over", filepath.Join(mine, "missing"), me, fallback},
		{"another user's XDG_RUNTIME_DIR (su keeps it) is passed over", othersDir, me, fallback},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.xdg == othersDir && !chowned {
				t.Skip("cannot give a directory to another user (needs root)")
			}
			got := Path(func(k string) string {
				if k == "XDG_RUNTIME_DIR" {
					return tt.xdg
				}
				return ""
			}, tt.euid)
			if got != tt.want {
				t.Errorf("Path = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestOpenCreatesAPrivateDirectoryWhateverTheUmask(t *testing.T) {
	old := syscall.Umask(0o277) // would leave it unwritable
	defer syscall.Umask(old)
	p := filepath.Join(t.TempDir(), "rprof")
	d, err := Open(p)
	syscall.Umask(old)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	st, err := os.Lstat(p)
	if err != nil || st.Mode() != fs.ModeDir|Perm {
		t.Fatalf("made %v, %v; want a directory of mode 0700", st.Mode(), err)
	}
	again, err := Open(p)
	if err != nil {
		t.Fatalf("reopening its own directory: %v", err)
	}
	again.Close()
}

// plant makes what an attacker (or an accident) left at p.
type plant func(t *testing.T, p string)

func symlinkToDir(t *testing.T, p string) {
	target := filepath.Join(t.TempDir(), "elsewhere")
	must(t, os.Mkdir(target, 0o700))
	must(t, os.Symlink(target, p))
}

func danglingSymlink(t *testing.T, p string) {
	must(t, os.Symlink(filepath.Join(t.TempDir(), "nothing"), p))
}

func regularFile(t *testing.T, p string) { must(t, os.WriteFile(p, nil, 0o600)) }

func fifo(t *testing.T, p string) { must(t, syscall.Mkfifo(p, 0o600)) }

func dirMode(mode fs.FileMode) plant {
	return func(t *testing.T, p string) {
		must(t, os.Mkdir(p, 0o700))
		must(t, os.Chmod(p, mode))
	}
}

func otherUsersDir(t *testing.T, p string) {
	must(t, os.Mkdir(p, 0o700))
	chownOrSkip(t, p)
}

func chownOrSkip(t *testing.T, p string) {
	if err := os.Lchown(p, 65534, 65534); err != nil {
		t.Skipf("cannot give %s to another user (needs root): %v", p, err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

var dirRefusals = []struct {
	name   string
	plant  plant
	reason Reason
}{
	{"a symbolic link to a directory", symlinkToDir, Symlink},
	{"a dangling symbolic link", danglingSymlink, Symlink},
	{"a regular file", regularFile, NotDir},
	{"a FIFO", fifo, NotDir},
	{"a directory others can enter", dirMode(0o755), Mode},
	{"a directory others can write", dirMode(0o1777), Mode},
	{"a directory its owner cannot write", dirMode(0o500), Mode},
	{"another user's directory", otherUsersDir, Owner},
}

func TestOpenRefusesWhatIsNotPrivate(t *testing.T) {
	for _, tt := range dirRefusals {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "rprof")
			tt.plant(t, p)
			d, err := Open(p)
			checkRefusal(t, d, err, tt.reason)
		})
	}
}

func TestSubRefusesWhatIsNotPrivate(t *testing.T) {
	for _, tt := range dirRefusals {
		t.Run(tt.name, func(t *testing.T) {
			parent := filepath.Join(t.TempDir(), "rprof")
			d, err := Open(parent)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			tt.plant(t, filepath.Join(parent, "job"))
			sub, err := d.Sub("job")
			checkRefusal(t, sub, err, tt.reason)
		})
	}
}

func checkRefusal(t *testing.T, d *Dir, err error, want Reason) {
	t.Helper()
	var ue *UnsafeError
	if !errors.As(err, &ue) || ue.Reason != want || !errors.Is(err, ErrUnsafe) {
		if d != nil {
			d.Close()
		}
		t.Fatalf("got %v, want an *UnsafeError with reason %d", err, want)
	}
}

func hardLink(t *testing.T, p string) {
	outside := filepath.Join(filepath.Dir(p), "outside")
	must(t, os.WriteFile(outside, nil, 0o600))
	must(t, os.Link(outside, p))
}

func otherUsersFile(t *testing.T, p string) {
	must(t, os.WriteFile(p, nil, 0o600))
	chownOrSkip(t, p)
}

func TestOpenFileRefusesWhatIsNotPrivate(t *testing.T) {
	tests := []struct {
		name   string
		plant  plant
		reason Reason
	}{
		{"a symbolic link to a file", func(t *testing.T, p string) {
			target := filepath.Join(t.TempDir(), "victim")
			must(t, os.WriteFile(target, []byte("keep"), 0o600))
			must(t, os.Symlink(target, p))
		}, Symlink},
		{"a dangling symbolic link", danglingSymlink, Symlink},
		{"a FIFO", fifo, NotRegular},
		{"a directory", func(t *testing.T, p string) { must(t, os.Mkdir(p, 0o700)) }, NotRegular},
		{"a hard link", hardLink, Links},
		{"another user's file", otherUsersFile, Owner},
	}
	for _, tt := range tests {
		for _, flag := range []int{os.O_RDWR | os.O_CREATE, os.O_WRONLY | os.O_CREATE | os.O_APPEND} {
			t.Run(tt.name, func(t *testing.T) {
				d, err := Open(filepath.Join(t.TempDir(), "rprof"))
				if err != nil {
					t.Fatal(err)
				}
				defer d.Close()
				tt.plant(t, filepath.Join(d.Path(), "lock"))
				f, err := d.OpenFile("lock", flag)
				if f != nil {
					f.Close()
				}
				var ue *UnsafeError
				if !errors.As(err, &ue) || ue.Reason != tt.reason {
					t.Fatalf("OpenFile = %v, want an *UnsafeError with reason %d", err, tt.reason)
				}
			})
		}
	}
}

func TestOpenFileCreatesAndReopens(t *testing.T) {
	d, err := Open(filepath.Join(t.TempDir(), "rprof"))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	f, err := d.OpenFile("log", os.O_WRONLY|os.O_CREATE|os.O_APPEND)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("one\n")
	f.Close()
	f, err = d.OpenFile("log", os.O_WRONLY|os.O_CREATE|os.O_APPEND)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("two\n")
	f.Close()
	b, err := d.ReadFile("log")
	if err != nil || string(b) != "one\ntwo\n" {
		t.Errorf("log = %q, %v", b, err)
	}
	st, _ := os.Stat(filepath.Join(d.Path(), "log"))
	if st.Mode().Perm() != 0o600 {
		t.Errorf("made mode %v, want 0600", st.Mode())
	}
	if _, err := d.OpenFile("../escape", os.O_RDWR|os.O_CREATE); err == nil {
		t.Error("a name with a slash was opened")
	}
}

func TestCreateReplacesAndRenames(t *testing.T) {
	d, err := Open(filepath.Join(t.TempDir(), "rprof"))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	victim := filepath.Join(t.TempDir(), "victim")
	must(t, os.WriteFile(victim, []byte("keep"), 0o600))
	must(t, os.Symlink(victim, filepath.Join(d.Path(), ".ready.tmp")))
	f, err := d.Create(".ready.tmp")
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("start\n")
	f.Close()
	must(t, d.Rename(".ready.tmp", ".ready"))
	if b, _ := os.ReadFile(victim); string(b) != "keep" {
		t.Errorf("the link's target was written: %q", b)
	}
	if b, err := d.ReadFile(".ready"); err != nil || string(b) != "start\n" {
		t.Errorf(".ready = %q, %v", b, err)
	}
}

func TestRemoveSubRemovesTheJobsFiles(t *testing.T) {
	d, err := Open(filepath.Join(t.TempDir(), "rprof"))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	sub, err := d.Sub("job")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"rank-0", "rank-1", ".active"} {
		f, err := sub.OpenFile(n, os.O_RDWR|os.O_CREATE)
		must(t, err)
		f.Close()
	}
	if names, _ := sub.Names(); len(names) != 3 {
		t.Errorf("Names = %q", names)
	}
	sub.Close()
	must(t, d.RemoveSub("job"))
	if _, err := os.Lstat(filepath.Join(d.Path(), "job")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("job directory left: %v", err)
	}
}
