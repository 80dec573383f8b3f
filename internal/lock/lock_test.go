package lock

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rprof/rprof/internal/rundir"
)

// holderEnv makes a run of this test binary a process that takes the lock
// in the directory named and holds it until its stdin closes.
const holderEnv = "RPROF_LOCK_TEST_HOLD"

func TestMain(m *testing.M) {
	if dir := os.Getenv(holderEnv); dir != "" {
		l, err := Acquire(context.Background(), dir, Request{Mode: Exclusive, What: os.Getenv("RPROF_LOCK_TEST_WHAT")})
		if err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		fmt.Println("held")
		os.Stdin.Read(make([]byte, 1))
		l.Release()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// holdElsewhere starts another process holding the lock exclusively,
// described as what; it lets go when the test ends (or at release).
func holdElsewhere(t *testing.T, dir, what string) (pid int, release func()) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), holderEnv+"="+dir, "RPROF_LOCK_TEST_WHAT="+what)
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	release = func() { in.Close(); cmd.Wait() }
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	b := make([]byte, 5)
	if n, _ := out.Read(b); string(b[:n]) != "held\n" {
		t.Fatalf("the holder said %q", b[:n])
	}
	return cmd.Process.Pid, release
}

func runtimeDir(t *testing.T) string { return filepath.Join(t.TempDir(), "rprof") }

func TestASecondExclusiveWaitsAndNamesTheHolder(t *testing.T) {
	dir := runtimeDir(t)
	pid, release := holdElsewhere(t, dir, "rprof roofs")
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	var told Holder
	_, err := Acquire(ctx, dir, Request{Mode: Exclusive, What: "rprof roofs", Timeout: time.Hour, Waiting: func(h Holder) { told = h }})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("second Acquire = %v, want it to wait until its deadline", err)
	}
	if want := fmt.Sprintf("rprof roofs (pid %d)", pid); told.String() != want {
		t.Errorf("waiting told %q, want %q", told, want)
	}
	release()
	second, err := Acquire(context.Background(), dir, Request{Mode: Exclusive, What: "rprof roofs", Waiting: func(Holder) { t.Error("waited for a released lock") }})
	if err != nil {
		t.Fatal(err)
	}
	second.Release()
}

func TestRunsShareButRoofsWaitsForThem(t *testing.T) {
	dir := runtimeDir(t)
	a, err := Acquire(context.Background(), dir, Request{Mode: Shared, What: "rprof run"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Acquire(context.Background(), dir, Request{Mode: Shared, What: "rprof run", Waiting: func(Holder) { t.Error("a run waited for a run") }})
	if err != nil {
		t.Fatal(err)
	}
	// Both holders are this process, no ancestor of itself: roofs waits.
	released := make(chan struct{})
	go func() {
		time.Sleep(100 * time.Millisecond)
		a.Release()
		b.Release()
		close(released)
	}()
	waited := false
	c, err := Acquire(context.Background(), dir, Request{Mode: Exclusive, What: "rprof roofs", Timeout: time.Hour, Waiting: func(Holder) { waited = true }})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-released:
	default:
		t.Error("roofs got the lock while runs held it")
	}
	if !waited {
		t.Error("roofs did not say it waited")
	}
	if _, nested := c.Nested(); nested {
		t.Error("a lock taken is reported nested")
	}
	c.Release()
}

func TestAcquireGivesUpAfterItsTimeout(t *testing.T) {
	dir := runtimeDir(t)
	pid, _ := holdElsewhere(t, dir, "rprof roofs")
	start := time.Now()
	_, err := Acquire(context.Background(), dir, Request{Mode: Shared, What: "rprof run", Timeout: 150 * time.Millisecond})
	var te *TimeoutError
	if !errors.As(err, &te) {
		t.Fatalf("Acquire = %v, want a *TimeoutError", err)
	}
	if took := time.Since(start); took < 150*time.Millisecond {
		t.Errorf("gave up after %v, before its timeout", took)
	}
	if te.Timeout != 150*time.Millisecond || !strings.Contains(te.Error(), "pid "+strconv.Itoa(pid)) {
		t.Errorf("TimeoutError %q does not name the holder", te)
	}
}

func TestAZeroTimeoutDoesNotWait(t *testing.T) {
	dir := runtimeDir(t)
	holdElsewhere(t, dir, "rprof roofs")
	told := false
	_, err := Acquire(context.Background(), dir, Request{Mode: Shared, Waiting: func(Holder) { told = true }})
	var te *TimeoutError
	if !errors.As(err, &te) || told {
		t.Errorf("Acquire = %v (said it waits: %v), want a *TimeoutError at once", err, told)
	}
	free, err := Acquire(context.Background(), runtimeDir(t), Request{Mode: Exclusive})
	if err != nil {
		t.Errorf("a free lock with a zero timeout: %v", err)
	}
	free.Release()
}

func TestAcquireRefusesARuntimeDirectoryThatIsNotPrivate(t *testing.T) {
	dir := runtimeDir(t)
	os.Mkdir(dir, 0o755)
	_, err := Acquire(context.Background(), dir, Request{Mode: Shared})
	var ue *rundir.UnsafeError
	if !errors.As(err, &ue) || ue.Reason != rundir.Mode {
		t.Errorf("Acquire in a mode 0755 directory = %v, want its reason", err)
	}
}

func TestTheHoldersNoteReachesNoTerminalRaw(t *testing.T) {
	dir := runtimeDir(t)
	pid, _ := holdElsewhere(t, dir, "rprof \x1b]0;pwned\x07roofs\x1b[2J")
	_, err := Acquire(context.Background(), dir, Request{Mode: Shared, Timeout: time.Millisecond})
	var te *TimeoutError
	if !errors.As(err, &te) {
		t.Fatalf("Acquire = %v", err)
	}
	if want := fmt.Sprintf("rprof ?]0;pwned?roofs?[2J (pid %d)", pid); te.Holder.String() != want {
		t.Errorf("holder %q, want %q", te.Holder, want)
	}
}

// A note left by a holder killed before it could clear it names a pid
// that no longer runs: the waiter says so and names the real holders.
func TestAStaleNoteIsRecognised(t *testing.T) {
	dir := runtimeDir(t)
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	run, err := Acquire(context.Background(), dir, Request{Mode: Shared, What: "rprof run"})
	if err != nil {
		t.Fatal(err)
	}
	defer run.Release()
	os.WriteFile(filepath.Join(dir, fileName), []byte(fmt.Sprintf("%d rprof roofs\n", dead.Process.Pid)), 0o600)
	_, err = Acquire(context.Background(), dir, Request{Mode: Exclusive, Timeout: time.Millisecond})
	var te *TimeoutError
	if !errors.As(err, &te) {
		t.Fatalf("Acquire = %v", err)
	}
	if te.Holder.StalePID != dead.Process.Pid || te.Holder.What != "" {
		t.Errorf("holder %+v, want the note's pid %d known stale", te.Holder, dead.Process.Pid)
	}
	if len(te.Holder.PIDs) > 0 && te.Holder.PIDs[0] != os.Getpid() {
		t.Errorf("holders %v, want this process", te.Holder.PIDs)
	}
}

// nestedEnv makes a run of this test binary try the lock exclusively,
// held by its parent, and print whether it came back nested.
const nestedEnv = "RPROF_LOCK_TEST_NESTED"

func TestANestedMeasurementDoesNotWaitForItsParent(t *testing.T) {
	if dir := os.Getenv(nestedEnv); dir != "" {
		l, err := Acquire(context.Background(), dir, Request{Mode: Exclusive, Timeout: 10 * time.Second})
		h, nested := l.Nested()
		fmt.Printf("nested=%v err=%v holders=%v\n", nested, err, h.PIDs)
		return
	}
	if _, err := os.Stat("/proc/locks"); err != nil {
		t.Skip("no /proc/locks: a nested measurement cannot see its parent holds the lock")
	}
	dir := runtimeDir(t)
	parent, err := Acquire(context.Background(), dir, Request{Mode: Shared, What: "rprof run"})
	if err != nil {
		t.Fatal(err)
	}
	defer parent.Release()
	// The child runs under sh, as a target runs under its launcher.
	cmd := exec.Command("sh", "-c", `"$0" -test.run='^TestANestedMeasurementDoesNotWaitForItsParent$' -test.v`, os.Args[0])
	cmd.Env = append(os.Environ(), nestedEnv+"="+dir)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	want := fmt.Sprintf("nested=true err=<nil> holders=[%d]", os.Getpid())
	if err != nil || !strings.Contains(string(out), want) {
		t.Errorf("nested measurement: %v\n%s\nwant %q", err, out, want)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the nested measurement took %v", took)
	}
}

func TestParseLocks(t *testing.T) {
	text := `1: FLOCK  ADVISORY  READ  4242 00:2b:1234 0 EOF
1: -> FLOCK  ADVISORY  WRITE 4343 00:2b:1234 0 EOF
2: FLOCK  ADVISORY  READ  4444 00:2b:1234 0 EOF
3: POSIX  ADVISORY  WRITE 4545 08:01:1234 0 EOF
4: FLOCK  ADVISORY  WRITE 4646 00:2b:99 0 EOF
`
	tests := []struct {
		name         string
		major, minor uint32
		want         []int
	}{
		{"the device and inode named", 0, 0x2b, []int{4242, 4444}},
		{"a device stat does not name: the inode alone", 0, 0x30, []int{4242, 4444, 4545}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := parseLocks(text, tt.major, tt.minor, 1234); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("parseLocks = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestHoldGoesAheadOnlyWhereNothingForbidsIt(t *testing.T) {
	held := runtimeDir(t)
	holdElsewhere(t, held, "rprof roofs")
	unsafe := runtimeDir(t)
	os.Mkdir(unsafe, 0o755)
	interrupted, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name        string
		ctx         context.Context
		dir         string
		timeout     time.Duration
		want        func(error) bool
		unavailable bool
	}{
		{"a free machine", context.Background(), runtimeDir(t), 0, func(err error) bool { return err == nil }, false},
		{"a runtime directory that is not private", context.Background(), unsafe, 0, func(err error) bool { return err == nil }, true},
		{"a held machine and no wait", context.Background(), held, 0, func(err error) bool { var te *TimeoutError; return errors.As(err, &te) }, false},
		{"an interrupted wait", interrupted, held, time.Hour, func(err error) bool { return errors.Is(err, context.Canceled) }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var why error
			release, err := Hold(tt.ctx, tt.dir, Request{Mode: Shared, Timeout: tt.timeout}, Notes{Unavailable: func(err error) { why = err }})
			if !tt.want(err) || (why != nil) != tt.unavailable || (release != nil) != (err == nil) {
				t.Errorf("Hold = %v (told %v)", err, why)
			}
			if release != nil {
				release()
			}
		})
	}
}
