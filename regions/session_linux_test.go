package regions

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/features"
	"github.com/cilium/ebpf/link"
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
	requireNoLinks(t)
	return res, out.String()
}

// requireNoLinks fails when a BPF link of this process's programs is still
// attached after a session ended.
func requireNoLinks(t *testing.T) {
	t.Helper()
	it := new(link.Iterator)
	defer it.Close()
	for it.Next() {
		info, err := it.Link.Info()
		if err != nil {
			continue
		}
		prog, err := ebpf.NewProgramFromID(info.Program)
		if err != nil {
			continue
		}
		pi, err := prog.Info()
		prog.Close()
		if err == nil && pi.Name == "rprof_region" {
			t.Errorf("link %d of program %s still attached", it.ID, pi.Name)
		}
	}
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
			if d := r.Seconds/secs - 1; d < -0.02 || d > 0.05 {
				t.Errorf("region time %.6f s, target's own %.6f s (%+.1f%%)", r.Seconds, secs, 100*d)
			}
		})
	}
}

var _ = errors.Is
