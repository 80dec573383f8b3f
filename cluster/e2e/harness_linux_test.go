package e2e

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rprof/rprof/internal/docfile"
	"github.com/rprof/rprof/roofline"
)

// The rproftest backend's counts (see measure/testbackend_rproftest.go).
const (
	workPerRank    = 1_000_000
	trafficPerNode = 7_000_000
)

// countEnv is the ranks' environment: the backend's counts, and a
// runtime directory of the tests' own, so that rprof's machine lock
// (which keeps measurements apart) is not shared with rprof runs outside
// the test: the ranks would wait for them.
var countEnv = []string{
	fmt.Sprintf("RPROF_TEST_WORK_FLOPS=%d", workPerRank),
	fmt.Sprintf("RPROF_TEST_NODE_TRAFFIC_BYTES=%d", trafficPerNode),
}

// need skips the test unless the commands exist.
func need(t *testing.T, cmds ...string) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts launchers and daemons")
	}
	for _, c := range cmds {
		if _, err := exec.LookPath(c); err != nil {
			t.Skipf("%s is not installed (scripts/test.sh installs it): %v", c, err)
		}
	}
}

func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: starts Slurm daemons and network namespaces")
	}
}

// built is the rproftest build of rprof, made once per test binary in
// a directory TestMain removes.
var built struct {
	once sync.Once
	dir  string
	bin  string
	err  error
}

func TestMain(m *testing.M) {
	runtimeDir, err := os.MkdirTemp("", "rprof-e2e-run-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	countEnv = append(countEnv, "XDG_RUNTIME_DIR="+runtimeDir)
	code := m.Run()
	os.RemoveAll(runtimeDir)
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// buildRprof builds rprof with the rproftest backend (once).
func buildRprof(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		if built.dir, built.err = os.MkdirTemp("", "rprof-e2e-"); built.err != nil {
			return
		}
		built.bin = filepath.Join(built.dir, "rprof")
		cmd := exec.Command("go", "build", "-tags", "rproftest", "-o", built.bin, "github.com/rprof/rprof/cmd/rprof")
		if out, err := cmd.CombinedOutput(); err != nil {
			built.err = fmt.Errorf("go build -tags rproftest: %v\n%s", err, out)
		}
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.bin
}

// run runs argv with extra environment, within limit, and returns its
// combined output; a failure fails the test.
func run(t *testing.T, limit time.Duration, env []string, argv ...string) string {
	t.Helper()
	out, err := runErr(limit, env, argv...)
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(argv, " "), err, out)
	}
	return out
}

func runErr(limit time.Duration, env []string, argv ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	// Kill the whole group on timeout: launchers leave children.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var b bytes.Buffer
	cmd.Stdout, cmd.Stderr = &b, &b
	err := cmd.Run()
	return b.String(), err
}

// merged merges the rank files in dir and checks the job: every rank
// present, one traffic owner per node, W = ranks × W per rank, and
// Q = nodes × the node's traffic.
func merged(t *testing.T, bin, dir string, ranks, nodes int) roofline.Point {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(files) != ranks {
		t.Fatalf("%d rank files in %s, want %d: %v", len(files), dir, ranks, files)
	}
	job := filepath.Join(t.TempDir(), "job.json")
	run(t, time.Minute, nil, append([]string{bin, "merge", "--json", job}, files...)...)
	ps, err := docfile.ReadPoints(job)
	if err != nil {
		t.Fatal(err)
	}
	p := ps[0]
	j := p.Job
	if j == nil || j.Ranks != ranks || len(j.Missing) != 0 || len(j.Nodes) != nodes {
		t.Fatalf("job %+v: want %d ranks on %d nodes, none missing", j, ranks, nodes)
	}
	for _, n := range j.Nodes {
		if len(n.Owners) != 1 {
			t.Errorf("node %s has traffic owners %v, want exactly one", n.Node, n.Owners)
		}
	}
	if p.WorkFlops == nil || *p.WorkFlops != float64(ranks*workPerRank) {
		t.Errorf("job W = %v, want %d ranks × %d", p.WorkFlops, ranks, workPerRank)
	}
	if p.TrafficBytes == nil || *p.TrafficBytes != float64(nodes*trafficPerNode) {
		t.Errorf("job Q = %v, want %d nodes × %d (not %d ranks × it)", p.TrafficBytes, nodes, trafficPerNode, ranks)
	}
	if !(p.Seconds > 0) || math.IsInf(p.Seconds, 0) || p.Seconds < j.SlowestSeconds*0.99 {
		t.Errorf("job T = %g s, slowest rank %g s: T must cover the slowest rank", p.Seconds, j.SlowestSeconds)
	}
	if slices.ContainsFunc(p.Flags, func(f roofline.Flag) bool { return f.Code == roofline.FlagSharedTraffic }) {
		t.Errorf("a lone job flagged shared traffic: %+v", p.Flags)
	}
	return p
}
