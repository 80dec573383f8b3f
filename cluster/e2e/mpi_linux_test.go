package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rprof/rprof/internal/docfile"
	"github.com/rprof/rprof/roofline"
)

var ompiRoot = []string{"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"}

func TestOpenMPIFourRanksOneOwner(t *testing.T) {
	need(t, "mpirun.openmpi", "go")
	tmp := t.TempDir()
	bin := buildRprof(t)
	pts, locks := filepath.Join(tmp, "points"), filepath.Join(tmp, "locks")
	os.Mkdir(pts, 0o755)
	argv := []string{"mpirun.openmpi", "--oversubscribe", "-np", "4"}
	for _, e := range countEnv {
		argv = append(argv, "-x", strings.SplitN(e, "=", 2)[0])
	}
	argv = append(argv, bin, "run", "--count", "rproftest", "--lock-dir", locks, "--json", pts+"/", "--", "sleep", "0.1")
	run(t, 2*time.Minute, append(countEnv, ompiRoot...), argv...)
	p := merged(t, bin, pts, 4, 1)
	if p.Job.Launcher != "openmpi" {
		t.Errorf("launcher %q", p.Job.Launcher)
	}

	// A rank that died leaves no file: merge says which, still writes
	// the job point, flagged, and exits 1.
	files, _ := filepath.Glob(filepath.Join(pts, "*.rank2.json"))
	if len(files) != 1 {
		t.Fatalf("rank 2's file: %v", files)
	}
	os.Remove(files[0])
	rest, _ := filepath.Glob(filepath.Join(pts, "*.json"))
	job := filepath.Join(tmp, "job.json")
	out, err := runErr(time.Minute, nil, append([]string{bin, "merge", "--json", job}, rest...)...)
	if err == nil || !strings.Contains(out, "1 of 4 ranks missing") {
		t.Errorf("merge without rank 2: %v\n%s", err, out)
	}
	ps, rerr := docfile.ReadPoints(job)
	if rerr != nil || len(ps[0].Job.Missing) != 1 || ps[0].Job.Missing[0] != 2 {
		t.Errorf("job point without rank 2: %v %+v", rerr, ps)
	}
}

func TestMPICHFourRanksOneOwner(t *testing.T) {
	need(t, "mpirun.mpich", "go")
	tmp := t.TempDir()
	bin := buildRprof(t)
	pts, locks := filepath.Join(tmp, "points"), filepath.Join(tmp, "locks")
	os.Mkdir(pts, 0o755)
	run(t, 2*time.Minute, countEnv, "mpirun.mpich", "-np", "4",
		bin, "run", "--count", "rproftest", "--lock-dir", locks, "--json", pts+"/", "--", "sleep", "0.1")
	p := merged(t, bin, pts, 4, 1)
	if p.Job.Launcher != "mpich" {
		t.Errorf("launcher %q", p.Job.Launcher)
	}
}

func TestRunRefusesToMeasureALauncher(t *testing.T) {
	need(t, "go")
	bin := buildRprof(t)
	out, err := runErr(time.Minute, nil, bin, "run", "--", "mpirun", "-np", "2", "true")
	if err == nil || strings.Count(out, "\n") != 1 || !strings.Contains(out, "put rprof after it") {
		t.Errorf("rprof run -- mpirun: %v\n%q", err, out)
	}
}

func TestUnwritableLockDirStillCountsWork(t *testing.T) {
	need(t, "mpirun.openmpi", "go")
	tmp := t.TempDir()
	bin := buildRprof(t)
	pts := filepath.Join(tmp, "points")
	os.Mkdir(pts, 0o755)
	notDir := filepath.Join(tmp, "file")
	os.WriteFile(notDir, nil, 0o600)
	out := run(t, 2*time.Minute, append(countEnv, ompiRoot...), "mpirun.openmpi", "--oversubscribe", "-np", "2",
		bin, "run", "--count", "rproftest", "--lock-dir", filepath.Join(notDir, "locks"), "--json", pts+"/", "--", "true")
	if n := strings.Count(out, "lock directory"); n != 2 {
		t.Errorf("%d lines about the lock directory, want one per rank:\n%s", n, out)
	}
	files, _ := filepath.Glob(filepath.Join(pts, "*.json"))
	for _, f := range files {
		ps, err := docfile.ReadPoints(f)
		if err != nil || ps[0].WorkFlops == nil || ps[0].TrafficBytes != nil || ps[0].Rank.TrafficOwner {
			t.Errorf("%s: want W counted, no Q, no owner: %v %+v", f, err, ps)
		}
	}
}

// Two jobs at once on one node: each owner counts the other's traffic
// too, and both job points say so.
func TestOverlappingJobsFlagSharedTraffic(t *testing.T) {
	need(t, "mpirun.mpich", "go")
	tmp := t.TempDir()
	bin := buildRprof(t)
	locks := filepath.Join(tmp, "locks")
	job := func(name, secs string, done chan<- error) {
		dir := filepath.Join(tmp, name)
		os.Mkdir(dir, 0o755)
		out, err := runErr(2*time.Minute, countEnv, "mpirun.mpich", "-np", "2",
			bin, "run", "--count", "rproftest", "--lock-dir", locks, "--job", name, "--json", dir+"/", "--", "sleep", secs)
		if err != nil {
			err = fmt.Errorf("%s: %v\n%s", name, err, out)
		}
		done <- err
	}
	doneA, doneB := make(chan error, 1), make(chan error, 1)
	go job("long", "4", doneA)
	time.Sleep(500 * time.Millisecond)
	go job("short", "0.1", doneB)
	for _, c := range []chan error{doneB, doneA} {
		if err := <-c; err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"long", "short"} {
		files, _ := filepath.Glob(filepath.Join(tmp, name, "*.json"))
		jobPath := filepath.Join(tmp, name+".job.json")
		run(t, time.Minute, nil, append([]string{bin, "merge", "--json", jobPath}, files...)...)
		ps, err := docfile.ReadPoints(jobPath)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(ps[0].Flags, func(f roofline.Flag) bool { return f.Code == roofline.FlagSharedTraffic }) {
			t.Errorf("job %s ran beside another job but its Q is not flagged shared: %+v", name, ps[0].Flags)
		}
	}
}

func TestOpenMPIFourEmulatedRanksMergeWithTheirQSummed(t *testing.T) {
	need(t, "mpirun.openmpi", "go", "qemu-x86_64", "gcc")
	tmp := t.TempDir()
	bin := buildRprof(t)
	src, prog := filepath.Join(tmp, "triad.c"), filepath.Join(tmp, "triad")
	// 3 arrays of 20,000 doubles, 2 passes: far inside any modelled cache.
	triad := "#include <stdlib.h>\nint main(void){int n=20000;double*a=calloc(n,8),*b=calloc(n,8),*c=calloc(n,8);" +
		"for(int p=0;p<2;p++)for(int i=0;i<n;i++)a[i]=b[i]+1.5*c[i];return a[7]!=0;}\n"
	if err := os.WriteFile(src, []byte(triad), 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, time.Minute, nil, "gcc", "-O1", "-o", prog, src)
	pts := filepath.Join(tmp, "points")
	os.Mkdir(pts, 0o755)
	out := run(t, 5*time.Minute, ompiRoot, "mpirun.openmpi", "--oversubscribe", "-np", "4",
		bin, "run", "--count", "emulate", "--json", pts+"/", "--", prog)
	if strings.Count(out, "(this rank's own)") != 4 {
		t.Errorf("want each of 4 ranks to report its own modelled Q:\n%s", out)
	}
	files, _ := filepath.Glob(filepath.Join(pts, "*.json"))
	var sum float64
	for _, f := range files {
		ps, err := docfile.ReadPoints(f)
		if err != nil || ps[0].TrafficBytes == nil {
			t.Fatalf("%s: %v, %+v", f, err, ps)
		}
		sum += *ps[0].TrafficBytes
	}
	job := filepath.Join(tmp, "job.json")
	msg := run(t, time.Minute, nil, append([]string{bin, "merge", "--json", job}, files...)...)
	ps, err := docfile.ReadPoints(job)
	if err != nil {
		t.Fatal(err)
	}
	p := ps[0]
	if len(files) != 4 || p.Job.Ranks != 4 || p.WorkFlops == nil || *p.WorkFlops != 4*2*2*20000 ||
		p.TrafficBytes == nil || *p.TrafficBytes != sum || sum == 0 {
		t.Errorf("%d rank files; job %+v: W %v, Q %v; want 4 ranks, W 4 x 80,000, Q the ranks' sum %g", len(files), p.Job, p.WorkFlops, p.TrafficBytes, sum)
	}
	if !slices.ContainsFunc(p.Flags, func(f roofline.Flag) bool { return f.Code == roofline.FlagRankTraffic }) ||
		slices.ContainsFunc(p.Flags, func(f roofline.Flag) bool { return f.Code == roofline.FlagTrafficOwner }) {
		t.Errorf("flags %+v: want %s and no %s\n%s", p.Flags, roofline.FlagRankTraffic, roofline.FlagTrafficOwner, msg)
	}
}
