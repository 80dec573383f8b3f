package rundir_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rprof/rprof/cluster"
	"github.com/rprof/rprof/internal/lock"
	"github.com/rprof/rprof/internal/rundir"
)

// The test below plays an unprivileged user planting links, directories
// and FIFOs where rprof keeps its state, and root (and another user) then
// running rprof's lock and election, with the kernel's protected_symlinks,
// protected_regular and protected_fifos left as they are (often 0 on VMs).
// It needs root and runs in a mount namespace of its own, with tmpfs on
// /tmp and /run, so that nothing it plants is seen outside it and all of
// it goes when the namespace's last process exits, pass or fail.

const (
	nsEnv = "RPROF_PRIVSEP_NS"  // set inside the private namespace
	asEnv = "RPROF_PRIVSEP_OPS" // a helper: ops to run as its user

	attacker = 65534 // nobody
	victim   = 65533 // a second user with no privileges (no passwd entry needed)
)

func TestMain(m *testing.M) {
	if ops := os.Getenv(asEnv); ops != "" {
		os.Exit(runOps(strings.Split(ops, ";")))
	}
	os.Exit(m.Run())
}

func TestAnotherUserCannotTurnRuntimeFilesAgainstItsUser(t *testing.T) {
	if os.Getenv(nsEnv) == "" {
		reexecInPrivateNamespace(t)
		return
	}
	for _, dir := range []string{"/tmp", "/run"} {
		if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "mode=1777"); err != nil {
			t.Fatalf("mount tmpfs on %s: %v", dir, err)
		}
	}
	os.Chmod("/run", 0o755)
	t.Setenv("TMPDIR", "/tmp")
	os.Unsetenv("XDG_RUNTIME_DIR")
	host, _ := os.Hostname()
	id := cluster.Identity{Job: "4242", Node: host, LocalSize: 1}

	t.Run("root's lock and election ignore what another user planted in /tmp", func(t *testing.T) {
		victimFile := writeVictim(t, "/root-owned")
		as(t, attacker,
			"symlink "+victimFile+" /tmp/rprof-measure.lock",
			"mkdir /tmp/rprof-4242@"+host,
			"symlink "+victimFile+" /tmp/rprof-4242@"+host+"/.ready.tmp",
			"symlink "+victimFile+" /tmp/rprof-"+host+".owners")
		if got := rundir.Default(); got != "/run/rprof" {
			t.Fatalf("root's runtime directory is %s", got)
		}
		l, err := lock.Acquire(context.Background(), rundir.Default(), lock.Request{Mode: lock.Exclusive, What: "rprof roofs"})
		if err != nil {
			t.Fatal(err)
		}
		// The user cannot even open root's lock to hold it.
		if out := as(t, attacker, "open /run/rprof/measure.lock"); !strings.Contains(out, "permission denied") {
			t.Errorf("another user opening root's lock: %s", out)
		}
		l.Release()
		elect(t, rundir.Default(), id)
		checkVictim(t, victimFile)
	})

	t.Run("a shared directory given as the lock directory is refused", func(t *testing.T) {
		_, err := cluster.Join("/tmp", id)
		var ue *rundir.UnsafeError
		if !errors.As(err, &ue) || ue.Reason != rundir.Mode {
			t.Errorf("Join(/tmp) = %v, want it refused for its mode", err)
		}
	})

	// A user without XDG_RUNTIME_DIR keeps its state in /tmp/rprof-UID,
	// which another user can create first.
	vdir := fmt.Sprintf("/tmp/rprof-%d", victim)
	squats := []struct {
		name   string
		ops    []string
		reason rundir.Reason
	}{
		{"the attacker's directory", []string{"mkdir " + vdir}, rundir.Owner},
		{"the attacker's directory open to all", []string{"mkdir " + vdir, "chmod777 " + vdir}, rundir.Owner},
		{"a link to the attacker's directory", []string{"mkdir /tmp/a", "symlink /tmp/a " + vdir}, rundir.Symlink},
		{"a link to the victim's home", []string{"symlink /root " + vdir}, rundir.Symlink},
		{"a FIFO", []string{"mkfifo " + vdir}, rundir.NotDir},
		{"a file", []string{"create " + vdir}, rundir.NotDir},
	}
	for _, sq := range squats {
		t.Run("a user's runtime directory squatted: "+sq.name, func(t *testing.T) {
			defer os.RemoveAll(vdir)
			defer os.RemoveAll("/tmp/a")
			as(t, attacker, sq.ops...)
			out := as(t, victim, "acquire")
			if want := fmt.Sprintf("refused:%d", sq.reason); !strings.Contains(out, want) {
				t.Errorf("the victim's lock: %s, want %s", out, want)
			}
			if out := as(t, victim, "join "+host); !strings.Contains(out, fmt.Sprintf("refused:%d", sq.reason)) {
				t.Errorf("the victim's election: %s, want it refused", out)
			}
		})
	}

	// A launcher's daemon (a shell named orted) starts two ranks of one
	// job: the first as root, the second as another user (as sudo in a
	// wrapper would). Their default directories differ, so the second
	// must see the first some other way and refuse.
	t.Run("ranks of one job under different users", func(t *testing.T) {
		if _, err := exec.LookPath("setpriv"); err != nil {
			t.Skip("no setpriv(1)")
		}
		self, _ := os.Executable()
		dir := filepath.Dir(self)
		for _, c := range [][2]string{{"/bin/sh", "orted"}, {self, "rprof"}} {
			b, err := os.ReadFile(c[0])
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, c[1]), b, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		script := fmt.Sprintf(`%[1]s=%[2]q ./rprof & sleep 1; %[1]s=%[3]q setpriv --reuid %[4]d --regid %[4]d --clear-groups ./rprof; wait`,
			asEnv, "join "+host+" 3s", "join "+host, victim)
		cmd := exec.Command(filepath.Join(dir, "orted"), "-c", script)
		cmd.Dir = dir
		cmd.Env = []string{"PATH=/usr/bin:/bin", "TMPDIR=/tmp"}
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "join: ok") || !strings.Contains(string(out), "join: mixed users: pid") {
			t.Errorf("two users' ranks under one daemon: %v\n%s", err, out)
		}
	})

	t.Run("a user's own runtime directory is closed to others", func(t *testing.T) {
		defer os.RemoveAll(vdir)
		if out := as(t, victim, "acquire"); !strings.Contains(out, "held") {
			t.Fatalf("the victim's lock: %s", out)
		}
		out := as(t, attacker, "open "+vdir+"/measure.lock", "symlink /root "+vdir+"/rprof-x.owners")
		if strings.Count(out, "permission denied") != 2 {
			t.Errorf("another user reached into the victim's directory: %s", out)
		}
		st, err := os.Lstat(vdir)
		if err != nil || st.Mode() != os.ModeDir|0o700 || st.Sys().(*syscall.Stat_t).Uid != victim {
			t.Errorf("%s: %v %v", vdir, st.Mode(), err)
		}
	})
}

// reexecInPrivateNamespace runs this test again under unshare(1) with a
// mount namespace of its own.
func reexecInPrivateNamespace(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: it plays two users and mounts tmpfs on /tmp and /run in a namespace of its own")
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("no unshare(1)")
	}
	cmd := exec.Command("unshare", "-m", "--propagation", "private", testBinary(t), "-test.run=^"+t.Name()+"$", "-test.v")
	cmd.Env = append(os.Environ(), nsEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil && strings.HasPrefix(string(out), "unshare: ") {
		t.Skipf("no mount namespace: %s", out)
	}
	t.Logf("in a private mount namespace:\n%s", out)
	if err != nil {
		t.Fatalf("unshare: %v", err)
	}
}

// testBinary is this test binary, copied where the other users can run it
// once /tmp is hidden (under the namespace's tmpfs) and its own directory
// is private.
func testBinary(t *testing.T) string {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("/var/tmp", "rprof-privsep-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	b, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "privsep.test")
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

// as runs ops as uid, each printing one line of what happened.
func as(t *testing.T, uid int, ops ...string) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, "-test.run=^$")
	cmd.Env = []string{asEnv + "=" + strings.Join(ops, ";"), "TMPDIR=/tmp", "PATH=/usr/bin:/bin"}
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid)}}
	done := make(chan struct{})
	go func() {
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
		}
	}()
	out, err := cmd.CombinedOutput()
	close(done)
	if err != nil {
		t.Fatalf("as uid %d %q: %v\n%s", uid, ops, err, out)
	}
	return string(out)
}

// runOps runs a helper's ops, printing one line for each.
func runOps(ops []string) int {
	for _, op := range ops {
		f := strings.Fields(op)
		var err error
		switch f[0] {
		case "symlink":
			err = os.Symlink(f[1], f[2])
		case "mkdir":
			err = os.Mkdir(f[1], 0o700)
		case "chmod777":
			err = os.Chmod(f[1], 0o777)
		case "mkfifo":
			err = syscall.Mkfifo(f[1], 0o600)
		case "create":
			err = os.WriteFile(f[1], nil, 0o600)
		case "open":
			var fh *os.File
			if fh, err = os.Open(f[1]); err == nil {
				fh.Close()
			}
		case "acquire":
			var l *lock.Lock
			if l, err = lock.Acquire(context.Background(), rundir.Default(), lock.Request{Mode: lock.Exclusive}); err == nil {
				fmt.Println("held")
				l.Release()
			}
		case "join":
			var s *cluster.Session
			if s, err = cluster.Join(rundir.Default(), cluster.Identity{Job: "4242", Node: f[1], LocalSize: 1}); err == nil {
				if len(f) > 2 { // hold it this long
					d, _ := time.ParseDuration(f[2])
					time.Sleep(d)
				}
				s.Close()
			}
		}
		var ue *rundir.UnsafeError
		var mixed *cluster.MixedUsersError
		switch {
		case errors.As(err, &ue):
			fmt.Printf("%s: refused:%d: %v\n", f[0], ue.Reason, err)
		case errors.As(err, &mixed):
			fmt.Printf("%s: mixed users: %v\n", f[0], err)
		case err != nil:
			fmt.Printf("%s: %v\n", f[0], err)
		default:
			fmt.Printf("%s: ok\n", f[0])
		}
	}
	return 0
}

func writeVictim(t *testing.T, name string) string {
	t.Helper()
	p := filepath.Join("/run", name)
	if err := os.WriteFile(p, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func checkVictim(t *testing.T, p string) {
	t.Helper()
	if b, err := os.ReadFile(p); err != nil || string(b) != "keep" {
		t.Errorf("%s, which links pointed at, now holds %q (%v)", p, b, err)
	}
}

// elect runs one rank's whole election in dir.
func elect(t *testing.T, dir string, id cluster.Identity) {
	t.Helper()
	s, err := cluster.Join(dir, id)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	owner, err := s.Elect(context.Background())
	if err != nil || !owner {
		t.Fatalf("Elect = %v, %v", owner, err)
	}
	if err := s.Started(); err != nil {
		t.Fatal(err)
	}
	if err := s.Ended(context.Background()); err != nil {
		t.Fatal(err)
	}
	if shared := s.Shared(); len(shared) != 0 {
		t.Errorf("a lone owner reports %q", shared)
	}
}
