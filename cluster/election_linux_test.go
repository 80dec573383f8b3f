package cluster

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rprof/rprof/internal/rundir"
)

// A subprocess of this test binary with rankEnv set plays one rank: it
// joins, elects, "runs" for RPROF_TEST_RUN, ends, and prints the outcome.
const rankEnv = "RPROF_CLUSTER_TEST_RANK"

func TestMain(m *testing.M) {
	if spec := os.Getenv(rankEnv); spec != "" {
		os.Exit(playRank(spec))
	}
	os.Exit(m.Run())
}

// playRank: spec is "DIR JOB NODE RANK LOCALSIZE RUN", RUN a duration
// or "until:FILE" (run until FILE exists).
func playRank(spec string) int {
	f := strings.Fields(spec)
	rank, _ := strconv.Atoi(f[3])
	local, _ := strconv.Atoi(f[4])
	run, _ := time.ParseDuration(f[5])
	until, waits := strings.CutPrefix(f[5], "until:")
	id := Identity{Launcher: OpenMPI, Job: f[1], Node: f[2], Rank: rank, Size: local, LocalRank: rank, LocalSize: local}
	s, err := Join(f[0], id)
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	defer s.Close()
	ctx := context.Background()
	owner, err := s.Elect(ctx)
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	fmt.Printf("elected %v\n", owner)
	if err := s.Started(); err != nil {
		fmt.Println("error", err)
		return 1
	}
	time.Sleep(run)
	for waits {
		if _, err := os.Stat(until); err == nil {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := s.Ended(ctx); err != nil {
		fmt.Println("error", err)
		return 1
	}
	start, end := s.Window()
	fmt.Printf("result %v %d %d %d\n", owner, start.UnixNano(), end.UnixNano(), len(s.Shared()))
	for _, r := range s.Shared() {
		fmt.Println("shared", r)
	}
	return 0
}

type rankResult struct {
	owner      bool
	start, end int64
	shared     int
	lines      []string
}

func startRank(t *testing.T, dir, job, node string, rank, local int, run any) (*exec.Cmd, *bufio.Scanner) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s %s %s %d %d %s", rankEnv, dir, job, node, rank, local, run))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd, bufio.NewScanner(out)
}

func collect(t *testing.T, sc *bufio.Scanner) rankResult {
	t.Helper()
	var r rankResult
	for sc.Scan() {
		line := sc.Text()
		r.lines = append(r.lines, line)
		if f := strings.Fields(line); len(f) == 5 && f[0] == "result" {
			r.owner = f[1] == "true"
			r.start, _ = strconv.ParseInt(f[2], 10, 64)
			r.end, _ = strconv.ParseInt(f[3], 10, 64)
			r.shared, _ = strconv.Atoi(f[4])
		}
	}
	return r
}

// runJob runs n ranks of one job at once; rank i runs for runs[i].
func runJob(t *testing.T, dir, job string, runs []time.Duration) []rankResult {
	t.Helper()
	res := make([]rankResult, len(runs))
	var wg sync.WaitGroup
	for i, d := range runs {
		cmd, sc := startRank(t, dir, job, "node0", i, len(runs), d)
		wg.Add(1)
		go func() {
			defer wg.Done()
			res[i] = collect(t, sc)
			cmd.Wait()
		}()
	}
	wg.Wait()
	return res
}

// lockDir is a lock directory rprof creates, private as it must be (a
// t.TempDir is mode 0755 under the usual umask).
func lockDir(t *testing.T) string { return filepath.Join(t.TempDir(), "locks") }

func TestElectionHasOneOwnerWhoseWindowCoversEveryRank(t *testing.T) {
	dir := lockDir(t)
	runs := []time.Duration{50 * time.Millisecond, 300 * time.Millisecond, 10 * time.Millisecond, 200 * time.Millisecond, 100 * time.Millisecond, 20 * time.Millisecond}
	res := runJob(t, dir, "job1", runs)
	owners := 0
	var owner rankResult
	for i, r := range res {
		if r.start == 0 {
			t.Fatalf("rank %d gave no result: %q", i, r.lines)
		}
		if r.owner {
			owners++
			owner = r
		}
	}
	if owners != 1 {
		t.Fatalf("%d owners, want 1", owners)
	}
	for i, r := range res {
		if r.start < owner.start || r.end > owner.end {
			t.Errorf("rank %d ran %d..%d, outside the owner's window %d..%d", i, r.start, r.end, owner.start, owner.end)
		}
	}
	if owner.shared != 0 {
		t.Errorf("a lone job's owner reports shared traffic: %q", owner.lines)
	}
	if _, err := os.Stat(filepath.Join(dir, jobDirName(Identity{Job: "job1", Node: "node0"}))); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the job's directory outlived the job: %v", err)
	}
}

func TestElectionKilledOwnerFreesTheLock(t *testing.T) {
	dir := lockDir(t)
	// Local size 2 keeps the first owner waiting for a second rank, so
	// it is killed while it owns.
	cmd, sc := startRank(t, dir, "job2", "node0", 0, 2, time.Hour)
	if !sc.Scan() || sc.Text() != "elected true" {
		t.Fatalf("first rank: %q, want elected true", sc.Text())
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	done := make(chan rankResult, 1)
	_, sc2 := startRank(t, dir, "job2", "node0", 1, 1, 10*time.Millisecond)
	go func() { done <- collect(t, sc2) }()
	select {
	case r := <-done:
		if !r.owner {
			t.Errorf("the next rank did not take over: %q", r.lines)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the next rank still waits 20 s after the owner was killed")
	}
}

func TestElectionDetectsAnotherJobsOwner(t *testing.T) {
	dir := lockDir(t)
	// Job A's owner runs until job B, run inside A's window, is done.
	release := filepath.Join(t.TempDir(), "release")
	cmdA, scA := startRank(t, dir, "jobA", "node0", 0, 1, "until:"+release)
	if !scA.Scan() || scA.Text() != "elected true" {
		t.Fatalf("job A: %q", scA.Text())
	}
	b := runJob(t, dir, "jobB", []time.Duration{50 * time.Millisecond})[0]
	os.WriteFile(release, nil, 0o600)
	a := collect(t, scA)
	cmdA.Wait()
	if !a.owner || a.shared == 0 {
		t.Errorf("job A's owner did not see job B begin during its run: %q", a.lines)
	}
	if !b.owner || b.shared == 0 {
		t.Errorf("job B's owner did not see job A counting: %q", b.lines)
	}
	// Afterwards, alone again.
	c := runJob(t, dir, "jobC", []time.Duration{10 * time.Millisecond})[0]
	if c.shared != 0 {
		t.Errorf("job C ran alone but reports shared traffic: %q", c.lines)
	}
}

func TestElectionDetectsAReplacedLockFile(t *testing.T) {
	dir := lockDir(t)
	id := Identity{Job: "job4", Node: "node0", LocalSize: 1}
	s, err := Join(dir, id)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if owner, err := s.Elect(context.Background()); err != nil || !owner {
		t.Fatalf("Elect = %v, %v", owner, err)
	}
	p := filepath.Join(dir, jobDirName(id), uncoreFile)
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if len(s.Shared()) == 0 {
		t.Error("a replaced lock file went unnoticed")
	}
}

func TestJoinRefusesALockDirectoryThatIsNotPrivate(t *testing.T) {
	id := Identity{Job: "j", Node: "n", LocalSize: 1}
	tests := []struct {
		name   string
		plant  func(t *testing.T, dir string) // dir is the lock directory
		reason rundir.Reason
	}{
		{"a lock directory others can write", func(t *testing.T, dir string) {
			os.Mkdir(dir, 0o700)
			os.Chmod(dir, 0o1777)
		}, rundir.Mode},
		{"a lock directory that is a link", func(t *testing.T, dir string) {
			os.Symlink(t.TempDir(), dir)
		}, rundir.Symlink},
		{"a job directory that is a link", func(t *testing.T, dir string) {
			os.Mkdir(dir, 0o700)
			os.Symlink(t.TempDir(), filepath.Join(dir, jobDirName(id)))
		}, rundir.Symlink},
		{"a job directory others can write", func(t *testing.T, dir string) {
			os.Mkdir(dir, 0o700)
			os.Mkdir(filepath.Join(dir, jobDirName(id)), 0o700)
			os.Chmod(filepath.Join(dir, jobDirName(id)), 0o777)
		}, rundir.Mode},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := lockDir(t)
			tt.plant(t, dir)
			s, err := Join(dir, id)
			var lde *LockDirError
			var ue *rundir.UnsafeError
			if !errors.As(err, &lde) || !errors.As(err, &ue) || ue.Reason != tt.reason {
				if s != nil {
					s.Close()
				}
				t.Fatalf("Join = %v, want a *LockDirError for reason %d", err, tt.reason)
			}
		})
	}
}

func TestElectionWritesNothingThroughAPlantedLink(t *testing.T) {
	dir := lockDir(t)
	id := Identity{Job: "job5", Node: "node0", LocalSize: 1}
	s, err := Join(dir, id)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// Links planted where the owner writes: its owners log and the
	// ready file's temporary.
	victims := filepath.Join(t.TempDir(), "victim")
	os.WriteFile(victims, []byte("keep"), 0o600)
	os.Symlink(victims, filepath.Join(dir, jobDirName(id), readyFile+".tmp"))
	os.Symlink(victims, filepath.Join(dir, ownersLogName(id.Node)))
	owner, err := s.Elect(context.Background())
	var ue *rundir.UnsafeError
	if !errors.As(err, &ue) || ue.Reason != rundir.Symlink {
		t.Errorf("Elect with a linked owners log = %v, %v; want it refused", owner, err)
	}
	s.Started()
	if b, _ := os.ReadFile(victims); string(b) != "keep" {
		t.Errorf("the link's target was written: %q", b)
	}
}

func TestJoinUnusableLockDir(t *testing.T) {
	f := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(f, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Join(filepath.Join(f, "locks"), Identity{Job: "j", Node: "n"})
	var lde *LockDirError
	if !errors.As(err, &lde) {
		t.Errorf("Join under a file = %v, want *LockDirError", err)
	}
}

func TestStartTicksOfSelf(t *testing.T) {
	a, err := StartTicks(os.Getpid())
	if err != nil || a == 0 {
		t.Fatalf("StartTicks = %d, %v", a, err)
	}
	if !alive(proc{os.Getpid(), a}) || alive(proc{os.Getpid(), a + 1}) {
		t.Error("alive does not tell this process from a reuse of its pid")
	}
}
