package launch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/rprof/rprof/internal/testutil"
	"github.com/rprof/rprof/pmu"
	"golang.org/x/sys/unix"
)

func software(name string, config uint64) pmu.Event {
	return pmu.Event{Name: name, PMU: "software", Attr: pmu.Attr{Type: unix.PERF_TYPE_SOFTWARE, Config: config}}
}

var (
	taskClock  = software("task-clock", unix.PERF_COUNT_SW_TASK_CLOCK)
	pageFaults = software("page-faults", unix.PERF_COUNT_SW_PAGE_FAULTS)
	ctxSwitch  = software("context-switches", unix.PERF_COUNT_SW_CONTEXT_SWITCHES)
	swGroup    = [][]pmu.Event{{taskClock, pageFaults, ctxSwitch}}
)

// count returns the named event's raw count.
func count(t *testing.T, rs []pmu.Reading, name string) uint64 {
	t.Helper()
	for _, r := range rs {
		if r.Event.Name == name {
			return r.Count.Raw
		}
	}
	t.Fatalf("no reading for %s in %v", name, rs)
	return 0
}

func execOK(t *testing.T, spec execSpec) execution {
	t.Helper()
	x, err := execute(context.Background(), spec)
	if err != nil {
		t.Fatalf("execute(%q): %v", spec.Argv, err)
	}
	if x.ExitCode != 0 || x.Signal != "" {
		t.Fatalf("execute(%q): exit %d %s", spec.Argv, x.ExitCode, x.Signal)
	}
	return x
}

// faultsOf is the page faults counted for argv, the median of 3 runs.
func faultsOf(t *testing.T, argv ...string) int64 {
	t.Helper()
	var v [3]int64
	for i := range v {
		x := execOK(t, execSpec{Argv: argv, Groups: swGroup})
		v[i] = int64(count(t, x.Task, "page-faults"))
	}
	a, b, c := v[0], v[1], v[2]
	return max(min(a, b), min(max(a, b), c))
}

// The target's own page faults and those of a child it forks are counted:
// touching n pages adds n faults, within 5%.
func TestRunCountsPagesTouchedByTargetAndForkedChildren(t *testing.T) {
	for _, tc := range []struct{ prog, who string }{
		{"pages", "the target"},
		{"forker", "a forked child"},
	} {
		t.Run(tc.prog, func(t *testing.T) {
			bothPaths(t, func(t *testing.T) {
				path := prog(t, tc.prog)
				const n = 3000
				base := faultsOf(t, path, "0")
				got := faultsOf(t, path, strconv.Itoa(n)) - base
				t.Logf("page-faults: %d for %s 0, +%d for %s %d", base, tc.prog, got, tc.prog, n)
				if got < n*95/100 || got > n*105/100 {
					t.Errorf("%s touching %d pages added %d page faults, want %d±5%%", tc.who, n, got, n)
				}
			})
		})
	}
}

func TestRunDoesNotCountTheLauncher(t *testing.T) {
	bothPaths(t, func(t *testing.T) {
		pages := prog(t, "pages")
		// The launcher is a Go program: its start-up alone faults in hundreds
		// of pages and takes more than a millisecond of CPU. A static-free C
		// program that does nothing needs a fraction of that.
		x := execOK(t, execSpec{Argv: []string{pages, "0"}, Groups: swGroup})
		pf, tc := count(t, x.Task, "page-faults"), count(t, x.Task, "task-clock")
		t.Logf("pages 0: %d page faults, task-clock %v, wall %v", pf, time.Duration(tc), x.Wall)
		if pf == 0 || tc == 0 {
			t.Fatalf("nothing counted: %v", x.Task)
		}
		// Counting must start at exec, not when the counters were opened on
		// the waiting launcher.
		x = execOK(t, execSpec{Argv: []string{pages, "0"}, Groups: swGroup,
			Hooks: []Hook{{Attach: func(Held) error { time.Sleep(50 * time.Millisecond); return nil }}}})
		for _, r := range x.Task {
			if r.Count.Enabled > uint64(x.Wall) {
				t.Errorf("%s enabled for %v, longer than the target's wall time %v", r.Event.Name, time.Duration(r.Count.Enabled), x.Wall)
			}
		}
		self := launcherFaults(t)
		t.Logf("the launcher alone: %d page faults", self)
		if pf*2 > self {
			t.Errorf("pages 0 counted %d page faults; the launcher alone faults %d: counting did not start at exec", pf, self)
		}
	})
}

// launcherFaults counts the page faults of the launcher when counting
// starts at its own exec: what Execute must leave out.
func launcherFaults(t *testing.T) uint64 {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// A launcher given no target exits 125 as soon as the runtime has
	// started.
	x, err := execute(context.Background(), execSpec{Argv: []string{self, Role, "/nonexistent"}, Groups: swGroup})
	if err != nil {
		t.Fatal(err)
	}
	return count(t, x.Task, "page-faults")
}

func TestRunExcludesKernelModeWhenAsked(t *testing.T) {
	bothPaths(t, func(t *testing.T) {
		threads := prog(t, "threads")
		// Two threads on a machine with fewer free CPUs switch context in
		// the kernel; user-mode-only counting sees none of those switches.
		argv := []string{threads, "2", "50"}
		all := execOK(t, execSpec{Argv: argv, Groups: swGroup})
		user := execOK(t, execSpec{Argv: argv, Groups: swGroup, ExcludeKernel: true})
		t.Logf("context-switches: %d counting all modes, %d user mode only", count(t, all.Task, "context-switches"), count(t, user.Task, "context-switches"))
		if n := count(t, all.Task, "context-switches"); n == 0 {
			t.Skip("the target never switched context; nothing to exclude")
		}
		if n := count(t, user.Task, "context-switches"); n != 0 {
			t.Errorf("context-switches = %d in user mode only, want 0", n)
		}
	})
}

func TestRunCountsAllThreads(t *testing.T) {
	bothPaths(t, func(t *testing.T) {
		threads := prog(t, "threads")
		const nthreads, ms = 4, 100
		x := execOK(t, execSpec{Argv: []string{threads, strconv.Itoa(nthreads), strconv.Itoa(ms)}, Groups: swGroup})
		tc := time.Duration(count(t, x.Task, "task-clock"))
		t.Logf("%d threads × %d ms CPU: task-clock %v, wall %v", nthreads, ms, tc, x.Wall)
		// Each thread burns ms of its own CPU time, so the sum is known
		// whatever else runs on the machine; one thread would count a quarter.
		if want := nthreads * ms * time.Millisecond; tc < want*95/100 {
			t.Errorf("task-clock %v, want at least %v summed over %d threads", tc, want*95/100, nthreads)
		}
		// wait4's rusage measures the same CPU time without counters,
		// plus what ran in the child before the exec, which task-clock
		// (enabled at the exec) leaves out: on the launcher path a Go
		// runtime's start-up, ~100 ms of CPU when built with -race. An
		// empty run of the same path measures that and takes it off.
		empty := execOK(t, execSpec{Argv: []string{threads, "0", "0"}, Groups: swGroup})
		startup := empty.CPU - time.Duration(count(t, empty.Task, "task-clock"))
		t.Logf("before the exec: %v of CPU (rusage %v of an empty run)", startup, empty.CPU)
		if cpu := x.CPU - startup; cpu < tc*9/10 || cpu > tc*11/10 {
			t.Errorf("rusage CPU time %v less %v before the exec, task-clock %v: want them within 10%%", x.CPU, startup, tc)
		}
	})
}

func TestRunReportsExitStatus(t *testing.T) {
	bothPaths(t, func(t *testing.T) {
		tests := []struct {
			script     string
			wantCode   int
			wantSignal string
		}{
			{"exit 0", 0, ""},
			{"exit 7", 7, ""},
			{"kill -KILL $$", 128 + 9, "SIGKILL"},
			{"kill -SEGV $$", 128 + 11, "SIGSEGV"},
		}
		for _, tt := range tests {
			t.Run(tt.script, func(t *testing.T) {
				x, err := execute(context.Background(), execSpec{Argv: []string{"sh", "-c", tt.script}, Groups: swGroup})
				if err != nil {
					t.Fatal(err)
				}
				if x.ExitCode != tt.wantCode || x.Signal != tt.wantSignal {
					t.Errorf("exit %d %q, want %d %q", x.ExitCode, x.Signal, tt.wantCode, tt.wantSignal)
				}
				if x.PID <= 0 || x.Wall <= 0 || count(t, x.Task, "task-clock") == 0 {
					t.Errorf("execution %+v lacks PID, wall time or counts", x)
				}
			})
		}
	})
}

func TestRunPassesStreamsThrough(t *testing.T) {
	bothPaths(t, func(t *testing.T) {
		dir := t.TempDir()
		t.Run("readers and writers through pipes", func(t *testing.T) {
			var out, errOut bytes.Buffer
			execOK(t, execSpec{
				Argv:  []string{"sh", "-c", "cat; echo oops >&2"},
				Stdin: strings.NewReader("hello\nworld\n"), Stdout: &out, Stderr: &errOut,
			})
			if out.String() != "hello\nworld\n" || errOut.String() != "oops\n" {
				t.Errorf("stdout %q, stderr %q", out.String(), errOut.String())
			}
		})
		t.Run("one writer for both outputs", func(t *testing.T) {
			// One pipe keeps the target's order and never writes concurrently.
			var out bytes.Buffer
			execOK(t, execSpec{Argv: []string{"sh", "-c", "echo a; echo b >&2; echo c"}, Stdout: &out, Stderr: &out})
			if out.String() != "a\nb\nc\n" {
				t.Errorf("output %q, want a, b, c in order", out.String())
			}
		})
		t.Run("two writers onto one buffer", func(t *testing.T) {
			// A caller that wraps stdout (a line splitter) and hands the
			// same buffer as stderr: the copiers must not write to it at
			// once, or lines are lost (and -race reports the race).
			var out bytes.Buffer
			const n = 2000
			execOK(t, execSpec{
				Argv:   []string{"sh", "-c", `i=0; while [ $i -lt ` + strconv.Itoa(n) + ` ]; do echo o$i; echo e$i >&2; i=$((i+1)); done`},
				Stdout: writerOnly{&out}, Stderr: &out,
			})
			lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
			slices.Sort(lines)
			var want []string
			for i := range n {
				want = append(want, "o"+strconv.Itoa(i), "e"+strconv.Itoa(i))
			}
			slices.Sort(want)
			if !slices.Equal(lines, want) {
				t.Errorf("got %d lines of the %d written, or garbled ones", len(lines), len(want))
			}
		})
		t.Run("files handed over as they are", func(t *testing.T) {
			in := filepath.Join(dir, "in")
			if err := os.WriteFile(in, []byte("data\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			fin, err := os.Open(in)
			if err != nil {
				t.Fatal(err)
			}
			defer fin.Close()
			fout, err := os.Create(filepath.Join(dir, "out"))
			if err != nil {
				t.Fatal(err)
			}
			defer fout.Close()
			// The target's own descriptors are rprof's files, not pipes.
			execOK(t, execSpec{
				Argv:  []string{"sh", "-c", "cat; readlink /proc/self/fd/0 /proc/$$/fd/1"},
				Stdin: fin, Stdout: fout,
			})
			got, _ := os.ReadFile(fout.Name())
			if want := "data\n" + in + "\n" + fout.Name() + "\n"; string(got) != want {
				t.Errorf("stdout file holds %q, want %q", got, want)
			}
		})
		t.Run("nil streams are /dev/null", func(t *testing.T) {
			var out bytes.Buffer
			execOK(t, execSpec{Argv: []string{"sh", "-c", "readlink /proc/self/fd/0 /proc/self/fd/2"}, Stdout: &out})
			if out.String() != "/dev/null\n/dev/null\n" {
				t.Errorf("stdin and stderr are %q, want /dev/null", out.String())
			}
		})
	})
}

// A run that fails after the target wrote (here a hook's Reap) returns
// only once its copiers stopped: a copier still writing to the caller's
// buffer after Run returned would race with the caller reading it.
func TestRunStopsCopyingBeforeItReturnsAnError(t *testing.T) {
	bothPaths(t, func(t *testing.T) {
		w := &slowWriter{entered: make(chan struct{})}
		reapErr := errors.New("reap failed")
		_, err := Run(context.Background(), Spec{
			Argv: []string{"echo", "x"}, Stdout: w, Reexec: viaLauncher,
			Hooks: []Hook{{Reap: func(int) error {
				<-w.entered
				return reapErr
			}}},
		})
		if !errors.Is(err, reapErr) {
			t.Fatalf("Run: %v, want the Reap's error", err)
		}
		if n := w.writing.Load(); n != 0 {
			t.Errorf("%d writes to the target's stdout still under way after Run returned", n)
		}
	})
}

// slowWriter takes its time over each write and counts the writes under
// way; entered is closed at the first.
type slowWriter struct {
	writing atomic.Int32
	entered chan struct{}
	once    sync.Once
}

func (w *slowWriter) Write(b []byte) (int, error) {
	w.writing.Add(1)
	defer w.writing.Add(-1)
	w.once.Do(func() { close(w.entered) })
	time.Sleep(100 * time.Millisecond)
	return len(b), nil
}

// writerOnly hides what its writer is, as a wrapping writer does.
type writerOnly struct{ w io.Writer }

func (w writerOnly) Write(b []byte) (int, error) { return w.w.Write(b) }

func TestRunUsesDirAndEnv(t *testing.T) {
	bothPaths(t, func(t *testing.T) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "script"), []byte("#!/bin/sh\npwd\necho \"$FOO\"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		execOK(t, execSpec{Argv: []string{"./script"}, Dir: dir, Env: []string{"FOO=bar", "PATH=/usr/bin:/bin"}, Stdout: &out})
		if want := dir + "\nbar\n"; out.String() != want {
			t.Errorf("output %q, want %q", out.String(), want)
		}
	})
}

func TestRunRejectsMissingAndNonExecutableTargets(t *testing.T) {
	bothPaths(t, func(t *testing.T) {
		dir := t.TempDir()
		write := func(name, content string, mode os.FileMode) string {
			p := filepath.Join(dir, name)
			if err := os.WriteFile(p, []byte(content), mode); err != nil {
				t.Fatal(err)
			}
			return p
		}
		tests := []struct {
			name string
			argv []string
			want error
			text string
		}{
			{"empty command", nil, nil, "empty command"},
			{"missing path", []string{filepath.Join(dir, "nope")}, ErrNotFound, "no such file or directory"},
			{"not in PATH", []string{"rprof-no-such-command"}, ErrNotFound, "not found in $PATH"},
			{"no execute bit", []string{write("plain", "#!/bin/sh\n", 0o644)}, ErrNotExecutable, "permission denied"},
			{"directory", []string{dir}, ErrNotExecutable, ""},
			// Found and executable, but execve refuses: reported by the launcher.
			{"not a program", []string{write("junk", "\x01\x02junk", 0o755)}, ErrNotExecutable, "exec format error"},
			{"missing interpreter", []string{write("script", "#!/nonexistent/sh\n", 0o755)}, ErrNotFound, "no such file or directory"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				before := testutil.OpenFDs(t)
				x, err := execute(context.Background(), execSpec{Argv: tt.argv, Groups: swGroup})
				if err == nil {
					t.Fatalf("no error; ran %+v", x)
				}
				if tt.want != nil {
					var le *Error
					if !errors.Is(err, tt.want) || !errors.As(err, &le) {
						t.Errorf("err = %v, want an *Error matching %v", err, tt.want)
					}
				}
				if !strings.Contains(err.Error(), tt.text) {
					t.Errorf("err = %q, want it to contain %q", err, tt.text)
				}
				testutil.CheckNoNewFDs(t, before)
			})
		}
	})
}

func TestRunForwardsSignalsAndSurvivesThem(t *testing.T) {
	bothPaths(t, func(t *testing.T) {
		tests := []struct {
			sig        syscall.Signal
			script     string
			wantCode   int
			wantSignal string
		}{
			// A target that handles the signal decides how it ends.
			{syscall.SIGINT, `trap "exit 3" INT; echo ready; while :; do sleep 0.02; done`, 3, ""},
			{syscall.SIGTERM, `echo ready; exec sleep 10`, 128 + 15, "SIGTERM"},
			{syscall.SIGHUP, `echo ready; exec sleep 10`, 128 + 1, "SIGHUP"},
			{syscall.SIGQUIT, `echo ready; exec sleep 10`, 128 + 3, "SIGQUIT"},
		}
		for _, tt := range tests {
			t.Run(unix.SignalName(tt.sig), func(t *testing.T) {
				// Signal this process (as a user's kill or Ctrl-C would) once
				// the target says it runs: Execute must pass it on and live.
				w := &readyWriter{ready: make(chan struct{})}
				go func() {
					select {
					case <-w.ready:
						syscall.Kill(os.Getpid(), tt.sig)
					case <-time.After(5 * time.Second):
					}
				}()
				x, err := execute(context.Background(), execSpec{Argv: []string{"sh", "-c", tt.script}, Stdout: w})
				if err != nil {
					t.Fatal(err)
				}
				if x.ExitCode != tt.wantCode || x.Signal != tt.wantSignal {
					t.Errorf("exit %d %q, want %d %q", x.ExitCode, x.Signal, tt.wantCode, tt.wantSignal)
				}
				if x.Wall > 4*time.Second {
					t.Errorf("target ran %v: the signal did not reach it", x.Wall)
				}
			})
		}
	})
}

// readyWriter closes ready at the first write.
type readyWriter struct {
	ready chan struct{}
	once  bool
}

func (w *readyWriter) Write(p []byte) (int, error) {
	if !w.once {
		w.once = true
		close(w.ready)
	}
	return len(p), nil
}

func TestRunCountsSystemWideOverCPUs(t *testing.T) {
	bothPaths(t, func(t *testing.T) {
		var set unix.CPUSet
		if err := unix.SchedGetaffinity(0, &set); err != nil {
			t.Fatal(err)
		}
		ev := software("cpu-clock", unix.PERF_COUNT_SW_CPU_CLOCK)
		for i := range 1024 {
			if set.IsSet(i) {
				ev.CPUs = append(ev.CPUs, i)
			}
		}
		x, err := execute(context.Background(), execSpec{Argv: []string{"sleep", "0.2"}, SystemWide: []pmu.Event{ev}, Groups: swGroup})
		if errors.Is(err, pmu.ErrPermission) {
			t.Skipf("system-wide counting not allowed here: %v", err)
		}
		if err != nil {
			t.Fatal(err)
		}
		got := time.Duration(count(t, x.System, "cpu-clock"))
		want := time.Duration(len(ev.CPUs)) * x.Wall
		t.Logf("cpu-clock on %d CPUs: %v for wall %v", len(ev.CPUs), got, x.Wall)
		// Enabled just before release, disabled just after reaping: the sum
		// over CPUs is about CPUs × wall.
		if got < want*9/10 || got > want*11/10 {
			t.Errorf("system-wide cpu-clock %v, want about %v", got, want)
		}
	})
}

func TestRunClosesEveryDescriptor(t *testing.T) {
	bothPaths(t, func(t *testing.T) {
		// Warm up: the runtime's poller and similar are opened once for good.
		execOK(t, execSpec{Argv: []string{"true"}, Groups: swGroup, Stdout: &bytes.Buffer{}})
		before := testutil.OpenFDs(t)
		var out bytes.Buffer
		execOK(t, execSpec{Argv: []string{"echo", "x"}, Groups: swGroup, Stdin: strings.NewReader("in"), Stdout: &out, Stderr: &out})
		x, err := execute(context.Background(), execSpec{Argv: []string{"sh", "-c", "kill -KILL $$"}, Groups: swGroup})
		if err != nil || x.Signal != "SIGKILL" {
			t.Fatalf("Execute = %+v, %v", x, err)
		}
		testutil.CheckNoNewFDs(t, before)
	})
}

func TestRunStopsUnrunTargetWhenCancelled(t *testing.T) {
	bothPaths(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		before := testutil.OpenFDs(t)
		dir := t.TempDir()
		marker := filepath.Join(dir, "ran")
		_, err := execute(ctx, execSpec{Argv: []string{"touch", marker}, Groups: swGroup})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
		if _, err := os.Stat(marker); err == nil {
			t.Error("the target ran although the context was cancelled")
		}
		testutil.CheckNoNewFDs(t, before)
	})
}

func TestRunStopsUnrunTargetOnSignalBeforeRelease(t *testing.T) {
	bothPaths(t, func(t *testing.T) {
		stop := Hook{Attach: func(Held) error {
			syscall.Kill(os.Getpid(), syscall.SIGTERM)
			time.Sleep(50 * time.Millisecond) // let the signal arrive
			return nil
		}}
		marker := filepath.Join(t.TempDir(), "ran")
		before := testutil.OpenFDs(t)
		_, err := execute(context.Background(), execSpec{Argv: []string{"touch", marker}, Groups: swGroup, Hooks: []Hook{stop}})
		if err == nil || !strings.Contains(err.Error(), "SIGTERM before the target started") {
			t.Fatalf("err = %v, want the signal named", err)
		}
		if _, err := os.Stat(marker); err == nil {
			t.Error("the target ran although rprof was told to stop before it started")
		}
		testutil.CheckNoNewFDs(t, before)
		if kids := children(t); kids != "" {
			t.Errorf("child processes left behind: %s", kids)
		}
	})
}

func TestRunLeavesNothingBehindWhenCountersFail(t *testing.T) {
	bothPaths(t, func(t *testing.T) {
		absent := pmu.Event{Name: "nope/x/", PMU: "nope", Attr: pmu.Attr{Type: 0x7ff0}}
		tests := []struct {
			name string
			spec func(argv []string) execSpec
		}{
			{"per-process group", func(argv []string) execSpec {
				return execSpec{Argv: argv, Groups: [][]pmu.Event{{taskClock}, {absent}}}
			}},
			{"system-wide event", func(argv []string) execSpec {
				ev := absent
				ev.CPUs = []int{0}
				return execSpec{Argv: argv, Groups: swGroup, SystemWide: []pmu.Event{ev}}
			}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				marker := filepath.Join(t.TempDir(), "ran")
				before := testutil.OpenFDs(t)
				_, err := execute(context.Background(), tt.spec([]string{"touch", marker}))
				if !errors.Is(err, pmu.ErrNotSupported) {
					t.Fatalf("err = %v, want one matching pmu.ErrNotSupported", err)
				}
				if _, err := os.Stat(marker); err == nil {
					t.Error("the target ran although its counters could not be opened")
				}
				testutil.CheckNoNewFDs(t, before)
				if kids := children(t); kids != "" {
					t.Errorf("child processes left behind: %s", kids)
				}
			})
		}
	})
}

// children lists this process's child processes (zombies included).
func children(t *testing.T) string {
	t.Helper()
	tasks, err := filepath.Glob("/proc/self/task/*/children")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range tasks {
		b, _ := os.ReadFile(f)
		if s := strings.TrimSpace(string(b)); s != "" {
			out = append(out, s)
		}
	}
	return strings.Join(out, " ")
}

func TestRunCountsInstructionsOnHardware(t *testing.T) {
	testutil.SkipUnlessHardware(t, pmu.HaveHardwareCounters(), pmu.ErrNotSupported, pmu.ErrPermission)
	spin := prog(t, "spin")
	instructions := pmu.Event{Name: "instructions", PMU: "cpu", Attr: pmu.Attr{Type: unix.PERF_TYPE_HARDWARE, Config: unix.PERF_COUNT_HW_INSTRUCTIONS}}
	const m = 20
	x := execOK(t, execSpec{Argv: []string{spin, strconv.Itoa(m)}, Groups: [][]pmu.Event{{instructions}}})
	// spin's inner loop runs m million times and takes several
	// instructions per turn.
	if n := count(t, x.Task, "instructions"); n < m*1e6*3 {
		t.Errorf("instructions = %d for %d million loop turns, want > %d", n, m, m*3_000_000)
	}
}

func TestRunHooksAttachBeforeReleaseAndReapAfterTheEndInReverse(t *testing.T) {
	bothPaths(t, func(t *testing.T) {
		dir := t.TempDir()
		before, after := filepath.Join(dir, "before"), filepath.Join(dir, "after")
		var order []string
		hook := func(name string) Hook {
			return Hook{
				Attach: func(h Held) error {
					order = append(order, "attach "+name)
					if h.PID <= 0 || !filepath.IsAbs(h.Path) {
						t.Errorf("held %+v: want a PID and an absolute path", h)
					}
					return os.WriteFile(before, nil, 0o600)
				},
				Reap: func(int) error {
					_, err := os.Stat(after)
					order = append(order, fmt.Sprintf("reap %s (target done %v)", name, err == nil))
					return nil
				},
			}
		}
		// The target sees the attach hooks' work and leaves its own mark.
		r, err := Run(context.Background(), Spec{Argv: []string{"sh", "-c", "test -e " + before + " && touch " + after},
			Hooks: []Hook{hook("a"), hook("b")}, Reexec: viaLauncher})
		if err != nil || r.ExitCode != 0 {
			t.Fatalf("Run = exit %d, %v: the target did not see the attach hooks' work", r.ExitCode, err)
		}
		want := []string{"attach a", "attach b", "reap b (target done true)", "reap a (target done true)"}
		if !slices.Equal(order, want) {
			t.Errorf("hooks ran %q, want %q", order, want)
		}

		// A failing Attach stops the target unrun; the hooks attached
		// before it are reaped, the failed one and later ones are not.
		order = nil
		hookErr := errors.New("no")
		failing := Hook{Attach: func(Held) error { return hookErr }, Reap: func(int) error { order = append(order, "reap failing"); return nil }}
		_, err = Run(context.Background(), Spec{Argv: []string{"touch", after + "2"}, Hooks: []Hook{hook("a"), failing, hook("c")}, Reexec: viaLauncher})
		if !errors.Is(err, hookErr) {
			t.Errorf("Run = %v, want the hook's error", err)
		}
		if _, err := os.Stat(after + "2"); err == nil {
			t.Error("the target ran although a hook failed to attach")
		}
		if want := []string{"attach a", "reap a (target done true)"}; !slices.Equal(order, want) {
			t.Errorf("hooks ran %q, want %q", order, want)
		}
	})
}

// A traced exec would run a set-user-ID program without its privileges:
// such a target takes the launcher, and still runs.
func TestRunLeavesSetIDTargetsToTheLauncher(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "setid")
	if err := os.WriteFile(p, []byte("#!/bin/sh\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, 0o755|os.ModeSetuid); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(p); err != nil || st.Mode()&os.ModeSetuid == 0 {
		t.Skipf("cannot make a set-user-ID file here: %v", err)
	}
	r, err := Run(context.Background(), Spec{Argv: []string{p}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Traced || r.ExitCode != 3 {
		t.Errorf("traced %v, exit %d: want the launcher and the target's status 3", r.Traced, r.ExitCode)
	}
	r, err = Run(context.Background(), Spec{Argv: []string{"sh", "-c", "exit 4"}})
	if err != nil || r.ExitCode != 4 {
		t.Fatalf("exit %d, %v", r.ExitCode, err)
	}
	t.Logf("an ordinary target was traced: %v", r.Traced)
}
