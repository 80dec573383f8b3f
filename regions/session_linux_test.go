package regions

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/features"
	"github.com/rprof/rprof/internal/testutil"
	"github.com/rprof/rprof/pmu"
	"golang.org/x/sys/unix"
)

// requireProbes skips a test that attaches probes where eBPF uprobes
// cannot be used (not root, no uprobe PMU, no eBPF) or gcc is missing.
func requireProbes(t *testing.T) {
	t.Helper()
	if err := features.HaveProgramType(ebpf.Kprobe); err != nil {
		t.Skipf("eBPF kprobe programs cannot be loaded here (needs root or CAP_BPF+CAP_PERFMON): %v", err)
	}
	if _, err := os.Stat("/sys/bus/event_source/devices/uprobe"); err != nil {
		t.Skip("no uprobe PMU: kernel without CONFIG_UPROBE_EVENTS")
	}
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not found: the test targets are compiled by the tests")
	}
}

var build struct {
	sync.Mutex
	dir  string
	done map[string]string
}

// compile builds a C source of testdata once per test binary with the
// given gcc flags and returns the output's path.
func compile(t *testing.T, name, src string, flags ...string) string {
	t.Helper()
	build.Lock()
	defer build.Unlock()
	if build.done == nil {
		dir, err := os.MkdirTemp("", "rprof-regions-")
		if err != nil {
			t.Fatal(err)
		}
		build.dir, build.done = dir, map[string]string{}
	}
	if p, ok := build.done[name]; ok {
		return p
	}
	out := filepath.Join(build.dir, name)
	args := append([]string{"-O1", "-g", "-o", out, filepath.Join("testdata", src)}, flags...)
	if b, err := exec.Command("gcc", args...).CombinedOutput(); err != nil {
		t.Fatalf("gcc %s: %v\n%s", strings.Join(args, " "), err, b)
	}
	build.done[name] = out
	return out
}

func TestMain(m *testing.M) {
	code := m.Run()
	if build.dir != "" {
		os.RemoveAll(build.dir)
	}
	os.Exit(code)
}

// runProbed starts argv held before its exec (a shell waiting on its
// stdin execs it), attaches probes to it, releases it, waits, and returns
// the result and what it printed.
func runProbed(t *testing.T, probes []Probe, opts Options, argv ...string) (Result, string) {
	t.Helper()
	cmd := exec.Command("/bin/sh", append([]string{"-c", `read _ && exec "$@"`, "sh"}, argv...)...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Probes, links, maps and counters are descriptors of this process:
	// none may stay open once the session stopped.
	before := testutil.OpenFDs(t)
	s, err := Attach(cmd.Process.Pid, probes, opts)
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("attach: %v", err)
	}
	io.WriteString(stdin, "go\n")
	stdin.Close()
	werr := cmd.Wait()
	res, err := s.Stop()
	if err != nil {
		t.Fatalf("stop: %v", err)
	}
	if werr != nil {
		t.Logf("target: %v", werr)
	}
	testutil.CheckNoNewFDs(t, before)
	return res, out.String()
}

// own reads the target's "own NAME CALLS [SECONDS]" line.
func own(t *testing.T, out, name string) []string {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 3 && f[0] == "own" && f[1] == name {
			return f[2:]
		}
	}
	t.Fatalf("target printed no own %s line:\n%s", name, out)
	return nil
}

func resolveOne(t *testing.T, target string, spec string) Probe {
	t.Helper()
	s, err := ParseSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	ps, err := Resolver{Target: target}.Resolve([]Spec{s})
	if err != nil {
		t.Fatal(err)
	}
	return ps[0]
}

func TestProbedFunctionCountsCallsAndTime(t *testing.T) {
	requireProbes(t)
	for _, pie := range []string{"-pie", "-no-pie"} {
		t.Run(pie, func(t *testing.T) {
			target := compile(t, "target"+pie, "target.c", "-pthread", "-ldl", pie)
			p := resolveOne(t, target, "spin_us")
			res, out := runProbed(t, []Probe{p}, Options{}, target, "spin", "5", "10000")
			var calls int
			var secs float64
			fmt.Sscan(strings.Join(own(t, out, "spin_us"), " "), &calls, &secs)
			r := res.Regions[0]
			if r.Calls != 5 || r.NeverLeft != 0 {
				t.Fatalf("calls %d, never left %d; want 5, 0 (%+v)", r.Calls, r.NeverLeft, res)
			}
			// Each call spins 10 ms of wall time, and the target's own
			// timing of a call encloses the probed window (preemption on a
			// loaded machine only widens both).
			if r.Seconds < 5*0.010 || r.Seconds > secs*1.001 {
				t.Errorf("region time %.6f s, want at least 0.05 s and at most the target's own %.6f s", r.Seconds, secs)
			}
		})
	}
}

func byName(t *testing.T, res Result, name string) Stats {
	t.Helper()
	for _, r := range res.Regions {
		if r.Name == name {
			return r
		}
	}
	t.Fatalf("no region %s in %+v", name, res.Regions)
	return Stats{}
}

func TestNestedRegionsGiveInclusiveAndExclusiveTime(t *testing.T) {
	requireProbes(t)
	target := compile(t, "target-pie", "target.c", "-pthread", "-ldl", "-pie")
	probes := []Probe{resolveOne(t, target, "outer"), resolveOne(t, target, "inner"), resolveOne(t, target, "recurse")}
	res, _ := runProbed(t, probes, Options{KeepCalls: true}, target, "nest", "4")
	outer, inner, rec := byName(t, res, "outer"), byName(t, res, "inner"), byName(t, res, "recurse")
	if outer.Calls != 4 || inner.Calls != 8 || rec.Calls != 4 {
		t.Fatalf("calls outer %d inner %d recurse %d; want 4, 8, 4", outer.Calls, inner.Calls, rec.Calls)
	}
	// Every call is kept, each region's as its Stats count them.
	for i, st := range res.Regions {
		var mine []Call
		for _, c := range res.Calls {
			if c.Region == i {
				mine = append(mine, c)
			}
		}
		if sum := Summarize(st.Name, st.Cost, len(st.Counts), mine); sum.Calls != st.Calls || math.Abs(sum.Seconds-st.Seconds) > 1e-9 {
			t.Errorf("%s: kept calls give %d calls, %.9f s; the region has %d, %.9f s", st.Name, sum.Calls, sum.Seconds, st.Calls, st.Seconds)
		}
	}
	// Exclusive time is inclusive less the nested regions' (no probe cost
	// is subtracted here); the sleeps set floors that load can only raise.
	if d := outer.Seconds - inner.Seconds - outer.SelfSeconds; d > 1e-6 || d < -1e-6 {
		t.Errorf("outer: self %.6f s != inclusive %.6f s - inner %.6f s", outer.SelfSeconds, outer.Seconds, inner.Seconds)
	}
	if outer.SelfSeconds < 4*0.001 || inner.Seconds < 8*0.001 {
		t.Errorf("outer self %.6f s, inner %.6f s: want at least 4 ms and 8 ms", outer.SelfSeconds, inner.Seconds)
	}
	// recurse(4) nests four calls of 500 us each: counted once inclusive
	// (2 ms), every call's own 500 us as self time.
	if f := rec.Seconds / rec.SelfSeconds; f < 0.9 || f > 1.2 {
		t.Errorf("recurse: inclusive %.6f s, self %.6f s: recursion counted twice?", rec.Seconds, rec.SelfSeconds)
	}
}

func TestCallsOnManyThreadsAreEachCounted(t *testing.T) {
	requireProbes(t)
	target := compile(t, "target-pie", "target.c", "-pthread", "-ldl", "-pie")
	res, _ := runProbed(t, []Probe{resolveOne(t, target, "spin_us")}, Options{}, target, "threads", "10", "4")
	r := res.Regions[0]
	if r.Calls != 40 || r.Threads != 4 || r.NeverLeft != 0 {
		t.Fatalf("calls %d on %d threads, never left %d; want 40 on 4, 0", r.Calls, r.Threads, r.NeverLeft)
	}
	if r.Median < 0.0019 {
		t.Errorf("median call %.6f s, want at least the 2 ms each spins", r.Median)
	}
}

func TestRegionsLeftByLongjmpOrExitAreNeverLeft(t *testing.T) {
	requireProbes(t)
	target := compile(t, "target-pie", "target.c", "-pthread", "-ldl", "-pie")
	res, _ := runProbed(t, []Probe{resolveOne(t, target, "jumpee"), resolveOne(t, target, "spin_us")}, Options{}, target, "longjmp", "3")
	j, sp := byName(t, res, "jumpee"), byName(t, res, "spin_us")
	if j.Calls != 0 || j.NeverLeft != 3 {
		t.Errorf("jumpee: %d calls, %d never left; want 0, 3", j.Calls, j.NeverLeft)
	}
	// spin_us returns normally each time, also after the jumps.
	if sp.Calls != 4 || sp.NeverLeft != 0 {
		t.Errorf("spin_us: %d calls, %d never left; want 4, 0", sp.Calls, sp.NeverLeft)
	}
	res, _ = runProbed(t, []Probe{resolveOne(t, target, "leave")}, Options{}, target, "exit")
	if l := res.Regions[0]; l.Calls != 0 || l.NeverLeft != 1 {
		t.Errorf("leave: %d calls, %d never left; want 0, 1", l.Calls, l.NeverLeft)
	}
}

func TestLibraryLoadedWithDlopenAfterStartIsProbed(t *testing.T) {
	requireProbes(t)
	target := compile(t, "target-pie", "target.c", "-pthread", "-ldl", "-pie")
	lib := compile(t, "libspin.so", "lib.c", "-shared", "-fPIC")
	p := resolveOne(t, target, lib+":lib_spin_us")
	res, _ := runProbed(t, []Probe{p}, Options{}, target, "dlopen", "3", "2000", lib)
	if r := res.Regions[0]; r.Calls != 3 {
		t.Fatalf("lib_spin_us: %d calls, want 3 (%+v)", r.Calls, res)
	}
}

func TestLibraryTheTargetNeverLoadsHasNoCalls(t *testing.T) {
	requireProbes(t)
	target := compile(t, "target-pie", "target.c", "-pthread", "-ldl", "-pie")
	lib := compile(t, "libspin.so", "lib.c", "-shared", "-fPIC")
	res, _ := runProbed(t, []Probe{resolveOne(t, target, lib+":lib_spin_us")}, Options{}, target, "spin", "2", "100")
	if r := res.Regions[0]; r.Calls != 0 || r.NeverLeft != 0 {
		t.Fatalf("%+v, want no calls", r)
	}
}

func TestTooManyRegionsAreRefusedBeforeAttaching(t *testing.T) {
	probes := make([]Probe, MaxRegions+1)
	_, err := Attach(1, probes, Options{})
	var tm *TooManyRegionsError
	if !errors.As(err, &tm) || tm.N != MaxRegions+1 {
		t.Fatalf("err = %v, want *TooManyRegionsError", err)
	}
}

func TestPerCPUSoftwareCountersCountEachRegionsPageFaults(t *testing.T) {
	requireProbes(t)
	target := compile(t, "target-pie", "target.c", "-pthread", "-ldl", "-pie")
	pmus, err := pmu.DiscoverPMUs(os.DirFS("/sys"))
	if err != nil {
		t.Fatal(err)
	}
	var evs []pmu.Event
	for _, name := range []string{"page-faults", "task-clock"} {
		ev, err := pmu.ParseEvent(name, pmus)
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
	}
	// Per-CPU counters count whatever runs on the CPU: calls during which
	// the target was switched out are left out of the counts. On a loaded
	// machine most calls are; SCHED_FIFO keeps other tasks off.
	argv := []string{target, "pages", "10", "1000"}
	if chrt, err := exec.LookPath("chrt"); err == nil {
		argv = append([]string{chrt, "-f", "10"}, argv...)
	}
	res, _ := runProbed(t, []Probe{resolveOne(t, target, "touch_pages")}, Options{Counters: evs}, argv...)
	r := res.Regions[0]
	if r.Calls != 10 {
		t.Fatalf("calls %d, want 10", r.Calls)
	}
	counted := r.Calls - r.Migrated - r.Switched
	if counted == 0 {
		t.Skipf("every call migrated (%d) or was switched out (%d): nothing counted", r.Migrated, r.Switched)
	}
	perCall := r.Counts[0].Value() / float64(counted)
	if perCall < 1000 || perCall > 1100 {
		t.Errorf("%.0f page faults per call of touch_pages(1000), want 1000..1100", perCall)
	}
	if tc := r.Counts[1].Value() / 1e9; tc <= 0 || tc > r.CountedSeconds*1.05 {
		t.Errorf("task-clock %.6f s over calls taking %.6f s", tc, r.CountedSeconds)
	}
}

func TestCalibrateMeasuresEachKindOfFirstInstruction(t *testing.T) {
	requireProbes(t)
	before := testutil.OpenFDs(t)
	c, err := Calibrate(300)
	if errors.Is(err, ErrNotSupported) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("probe cost: %s", c)
	testutil.CheckNoNewFDs(t, before)
	for k, cost := range c.Costs {
		// A uprobe traps (or at least calls) into the kernel: far above
		// 100 ns, far below 10 ms.
		if cost.Inside <= 0 || cost.Call < 100*time.Nanosecond || cost.Call > 10*time.Millisecond || cost.Inside > cost.Call {
			t.Errorf("%s: %+v", k, cost)
		}
	}
}

func TestLikwidMarkerRegionsAreNamedByTagAndPairedPerThread(t *testing.T) {
	requireProbes(t)
	if _, err := os.Stat("/usr/include/likwid-marker.h"); err != nil {
		t.Skip("likwid-marker.h not installed (Debian package likwid)")
	}
	target := compile(t, "markers", "markers.c", "-DLIKWID_PERFMON", "-llikwid", "-pthread")
	probes, err := Resolver{Target: target}.Markers()
	if err != nil {
		t.Fatal(err)
	}
	res, _ := runProbed(t, probes, Options{}, target)
	init, compute := byName(t, res, "init"), byName(t, res, "compute")
	if init.Calls != 1 || compute.Calls != 6 || compute.Threads != 2 || compute.NeverLeft != 0 {
		t.Fatalf("init %+v, compute %+v; want 1 call, and 6 on 2 threads", init, compute)
	}
	if compute.Median < 0.0019 {
		t.Errorf("compute median %.6f s, want at least the 2 ms each spins", compute.Median)
	}
}

func TestOpenBLASDgemmIsALibraryRegion(t *testing.T) {
	requireProbes(t)
	if _, err := os.Stat("/usr/include/x86_64-linux-gnu/cblas.h"); err != nil {
		if _, err := os.Stat("/usr/include/cblas.h"); err != nil {
			t.Skip("cblas.h not installed (Debian package libopenblas-dev)")
		}
	}
	target := compile(t, "dgemm", "dgemm.c", "-lopenblas")
	p := resolveOne(t, target, "libopenblas.so.0:cblas_dgemm")
	res, out := runProbed(t, []Probe{p}, Options{}, "env", "OPENBLAS_NUM_THREADS=1", target, "4")
	if r := res.Regions[0]; r.Calls != 4 || r.NeverLeft != 0 {
		t.Fatalf("cblas_dgemm %+v; target said %s", r, out)
	}
}

// TestHardwareCountersAreReadPerCPUInRegions reads the core PMU's
// instructions counter per CPU in the probes, as W's FP events are read:
// it skips with the reason where there is no hardware PMU (fails with
// RPROF_REQUIRE_PMU=1).
func TestHardwareCountersAreReadPerCPUInRegions(t *testing.T) {
	requireProbes(t)
	testutil.SkipUnlessHardware(t, pmu.HaveHardwareCounters(), pmu.ErrNotSupported, pmu.ErrPermission)
	target := compile(t, "target-pie", "target.c", "-pthread", "-ldl", "-pie")
	instructions := pmu.Event{Name: "instructions", PMU: "cpu", Scale: 1,
		Attr: pmu.Attr{Type: unix.PERF_TYPE_HARDWARE, Config: unix.PERF_COUNT_HW_INSTRUCTIONS}}
	argv := []string{target, "spin", "10", "1000"}
	if chrt, err := exec.LookPath("chrt"); err == nil {
		argv = append([]string{chrt, "-f", "10"}, argv...)
	}
	res, _ := runProbed(t, []Probe{resolveOne(t, target, "spin_us")}, Options{Counters: []pmu.Event{instructions}}, argv...)
	r := res.Regions[0]
	if r.Calls != 10 || r.CountedSeconds == 0 {
		t.Fatalf("%+v: want 10 calls, some counted", r)
	}
	// A 1 ms spin retires at least a million instructions at any clock.
	if perCall := r.Counts[0].Value() / float64(r.Calls-r.Migrated-r.Switched); perCall < 1e5 {
		t.Errorf("%.0f instructions per 1 ms call", perCall)
	}
}

func TestLoadErrorsSayWhatIsMissing(t *testing.T) {
	if err := loadError("load", fmt.Errorf("load program: %w", os.ErrPermission)); !errors.Is(err, ErrPermission) {
		t.Errorf("EPERM: %v, want ErrPermission", err)
	}
	if err := loadError("load", fmt.Errorf("detect: %w", ebpf.ErrNotSupported)); !errors.Is(err, ErrNotSupported) {
		t.Errorf("not supported: %v, want ErrNotSupported", err)
	}
}
