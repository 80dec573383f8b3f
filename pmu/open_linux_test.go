package pmu

import (
	"errors"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rprof/rprof/internal/testutil"
	"golang.org/x/sys/unix"
)

// Software events: they exist on every Linux machine, with or without a
// hardware PMU.
var (
	taskClock       = Event{Name: "task-clock", PMU: "software", Attr: Attr{Type: unix.PERF_TYPE_SOFTWARE, Config: unix.PERF_COUNT_SW_TASK_CLOCK}}
	pageFaults      = Event{Name: "page-faults", PMU: "software", Attr: Attr{Type: unix.PERF_TYPE_SOFTWARE, Config: unix.PERF_COUNT_SW_PAGE_FAULTS}}
	contextSwitches = Event{Name: "context-switches", PMU: "software", Attr: Attr{Type: unix.PERF_TYPE_SOFTWARE, Config: unix.PERF_COUNT_SW_CONTEXT_SWITCHES}}
	cpuClock        = Event{Name: "cpu-clock", PMU: "software", Attr: Attr{Type: unix.PERF_TYPE_SOFTWARE, Config: unix.PERF_COUNT_SW_CPU_CLOCK}}
)

// spin burns d of the calling thread's own CPU time, however busy the
// machine is.
func spin(t *testing.T, d time.Duration) {
	t.Helper()
	cpu := func() time.Duration {
		var ts unix.Timespec
		if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
			t.Fatal(err)
		}
		return time.Duration(ts.Nano())
	}
	for end := cpu() + d; cpu() < end; {
	}
}

func TestOpenTaskCountsCallingThreadBetweenEnableAndDisable(t *testing.T) {
	// pid 0 is the calling thread: keep the test on one.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	before := testutil.OpenFDs(t)
	c, err := OpenTask(0, [][]Event{{taskClock, pageFaults, contextSwitches}}, TaskOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rs, err := c.Read()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		if r.Count.Raw != 0 || r.Count.Enabled != 0 {
			t.Errorf("%s counted %v before Enable", r.Event.Name, r.Count)
		}
	}
	if err := c.Enable(); err != nil {
		t.Fatal(err)
	}
	spin(t, 30*time.Millisecond)
	const pages = 64
	mem, err := unix.Mmap(-1, 0, pages*os.Getpagesize(), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(mem)
	unix.Madvise(mem, unix.MADV_NOHUGEPAGE) // one fault per page
	for i := 0; i < len(mem); i += os.Getpagesize() {
		mem[i] = 1
	}
	if err := c.Disable(); err != nil {
		t.Fatal(err)
	}
	rs, err = c.Read()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	testutil.CheckNoNewFDs(t, before)
	if len(rs) != 3 || rs[0].Event.Name != "task-clock" || rs[1].Event.Name != "page-faults" || rs[2].Event.Name != "context-switches" {
		t.Fatalf("readings %v not in the order of the events", rs)
	}
	if tc := rs[0].Count; tc.Raw < uint64(25*time.Millisecond) || tc.Multiplexed() || tc.Enabled == 0 {
		t.Errorf("task-clock = %v after spinning 30 ms of CPU, want >= 25 ms, not multiplexed", tc)
	}
	if pf := rs[1].Count.Raw; pf < pages {
		t.Errorf("page-faults = %d after touching %d fresh pages", pf, pages)
	}
}

// startBlocked starts sh that waits for a line on stdin and then execs
// script, so that counters can be opened on it before its exec.
func startBlocked(t *testing.T, script string) (*exec.Cmd, func()) {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", `read x; exec /bin/sh -c '`+script+`'`)
	w, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd, func() { w.Write([]byte("go\n")); w.Close() }
}

func countChildren(t *testing.T, n int) (Count, Count) {
	t.Helper()
	cmd, release := startBlocked(t, "i=0; while [ $i -lt "+strconv.Itoa(n)+" ]; do /bin/true; i=$((i+1)); done")
	c, err := OpenTask(cmd.Process.Pid, [][]Event{{taskClock, pageFaults}}, TaskOptions{EnableOnExec: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	time.Sleep(10 * time.Millisecond) // let sh run up to its read
	rs, err := c.Read()
	if err != nil {
		t.Fatal(err)
	}
	if rs[0].Count.Enabled != 0 || rs[1].Count.Raw != 0 {
		t.Errorf("counted before exec: %v", rs)
	}
	release()
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	if rs, err = c.Read(); err != nil {
		t.Fatal(err)
	}
	return rs[0].Count, rs[1].Count
}

func TestOpenTaskEnableOnExecInheritsToChildren(t *testing.T) {
	_, pf1 := countChildren(t, 1)
	tc, pf21 := countChildren(t, 21)
	if tc.Raw == 0 || tc.Multiplexed() {
		t.Errorf("task-clock = %v, want counted and not multiplexed", tc)
	}
	// Each /bin/true is a fresh process that faults in its pages; twenty
	// more of them must show up in the parent's counters.
	if pf21.Raw < pf1.Raw+20*10 {
		t.Errorf("page-faults with 21 children = %d, with 1 = %d: children's counts not inherited", pf21.Raw, pf1.Raw)
	}
}

func TestOpenSystemWideSumsOverCPUs(t *testing.T) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		t.Fatal(err)
	}
	var cpus []int
	for i := range 1024 {
		if set.IsSet(i) {
			cpus = append(cpus, i)
		}
	}
	ev := cpuClock
	ev.CPUs = cpus
	before := testutil.OpenFDs(t)
	c, err := OpenSystemWide([]Event{ev})
	if errors.Is(err, ErrPermission) {
		t.Skipf("system-wide counting not allowed here: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := c.Enable(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	if err := c.Disable(); err != nil {
		t.Fatal(err)
	}
	elapsed := time.Since(start)
	rs, err := c.Read()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	testutil.CheckNoNewFDs(t, before)
	// cpu-clock runs on every CPU whether busy or idle: the sum is about
	// len(cpus) times the elapsed time.
	got := float64(rs[0].Count.Raw)
	want := float64(len(cpus)) * float64(elapsed)
	if got < 0.9*want || got > 1.05*want {
		t.Errorf("cpu-clock over %d CPUs = %.0f ns in %v, want about %.0f", len(cpus), got, elapsed, want)
	}
}

func TestProbe(t *testing.T) {
	tests := []struct {
		name string
		ev   Event
		want error // nil, ErrNotSupported
	}{
		{"software task-clock", taskClock, nil},
		{"PMU type that does not exist", Event{Name: "nope/x/", PMU: "nope", Attr: Attr{Type: 0x7ff0}}, ErrNotSupported},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Probe(tt.ev)
			if tt.want == nil && err != nil || tt.want != nil && !errors.Is(err, tt.want) {
				t.Fatalf("Probe = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestOpenErrorClassifiesErrno(t *testing.T) {
	ev := Event{Name: "uncore_imc_0/cas_count_read/", PMU: "uncore_imc_0", Attr: Attr{Type: 20}}
	tests := []struct {
		errno    unix.Errno
		wantIs   error
		wantText string
	}{
		{unix.ENOENT, ErrNotSupported, "not supported"},
		{unix.ENODEV, ErrNotSupported, "not supported"},
		{unix.EOPNOTSUPP, ErrNotSupported, "not supported"},
		{unix.EACCES, ErrPermission, "(system-wide): permission denied at perf_event_paranoid="},
		{unix.EPERM, ErrPermission, "permission denied"},
		{unix.EINVAL, unix.EINVAL, "rejected the encoding (type 20, config 0x0"},
		{unix.EBUSY, unix.EBUSY, "counter busy"},
	}
	for _, tt := range tests {
		t.Run(tt.errno.Error(), func(t *testing.T) {
			err := openError(ev, 3, true, tt.errno)
			var ee *EventError
			if !errors.As(err, &ee) || ee.CPU != 3 || ee.Event != ev.Name {
				t.Fatalf("err = %#v, want an *EventError for %s on cpu 3", err, ev.Name)
			}
			if !errors.Is(err, tt.wantIs) || !strings.Contains(err.Error(), tt.wantText) {
				t.Errorf("err = %q, want it to match %v and contain %q", err, tt.wantIs, tt.wantText)
			}
			if tt.wantIs != ErrPermission {
				return
			}
			var pe *PermissionError
			if !errors.As(err, &pe) || !pe.SystemWide {
				t.Errorf("err = %v, want a system-wide *PermissionError", err)
			}
		})
	}
}

func TestHaveHardwareCountersAgreesWithOpeningOne(t *testing.T) {
	err := HaveHardwareCounters()
	if err != nil && !errors.Is(err, ErrNotSupported) {
		t.Skipf("inconclusive probe: %v", err)
	}
	if again := HaveHardwareCounters(); again != err {
		t.Errorf("conclusive answer not cached: %v, then %v", err, again)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	c, openErr := OpenTask(0, [][]Event{{hwInstructions}}, TaskOptions{ExcludeKernel: true})
	if err == nil {
		if openErr != nil {
			t.Fatalf("HaveHardwareCounters = nil but opening instructions failed: %v", openErr)
		}
		c.Close()
		return
	}
	if !errors.Is(err, ErrNoPMU) {
		t.Errorf("HaveHardwareCounters = %v, want it to match ErrNoPMU too", err)
	}
	if !errors.Is(openErr, ErrNoPMU) || !errors.Is(openErr, ErrNotSupported) {
		t.Errorf("opening instructions without a PMU: err = %v, want ErrNoPMU and ErrNotSupported", openErr)
	}
}

func TestOpenTaskCountsInstructionsOnHardware(t *testing.T) {
	testutil.SkipUnlessHardware(t, HaveHardwareCounters(), ErrNotSupported, ErrPermission)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	c, err := OpenTask(0, [][]Event{{hwInstructions}}, TaskOptions{ExcludeKernel: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Enable(); err != nil {
		t.Fatal(err)
	}
	spin(t, 10*time.Millisecond)
	if err := c.Disable(); err != nil {
		t.Fatal(err)
	}
	rs, err := c.Read()
	if err != nil {
		t.Fatal(err)
	}
	if n := rs[0].Count.Raw; n < 1e6 || rs[0].Count.Running == 0 {
		t.Errorf("instructions = %v after spinning 10 ms of CPU, want > 1e6 and scheduled", rs[0].Count)
	}
}
