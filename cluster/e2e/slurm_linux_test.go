package e2e

import (
	"crypto/rand"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rprof/rprof/internal/docfile"
)

// slurmNode is one slurmd: its node name, address, and the command
// prefix that enters its host (nil: this host).
type slurmNode struct {
	name, addr string
	enter      []string
}

// on prefixes argv with the command that enters h (none for this host).
func (h host) on(argv ...string) []string {
	if h.enter == "" {
		return argv
	}
	return append([]string{h.enter}, argv...)
}

// startSlurm starts munged, slurmctld and one slurmd per node with a
// temporary configuration (SlurmUser=root, proctrack/linuxproc,
// task/affinity, select/cons_tres, no cgroup plugins), waits until every
// node is idle, and returns the clients' environment. Cleanup cancels
// the jobs left and stops the daemons, pass or fail. slurmctld and the
// clients run on ctl.
//
// The daemons' ports are free ones the kernel gives, not fixed, so that
// runs of these tests that overlap on one machine do not meet; where
// another process takes one before a daemon binds it, the daemon exits,
// and Slurm starts again on new ports.
func startSlurm(t *testing.T, ctl host, nodes []slurmNode, cpus int) []string {
	t.Helper()
	need(t, "munged", "slurmctld", "slurmd", "srun", "sbatch", "sinfo", "scancel", "squeue")
	needRoot(t)
	dir := t.TempDir()
	os.Chmod(dir, 0o755) // munged wants its socket's directory searchable
	key := make([]byte, 1024)
	rand.Read(key)
	if err := os.WriteFile(filepath.Join(dir, "munge.key"), key, 0o600); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "munge.sock")
	daemon(t, nil, "munged", "-F", "-f", "--key-file="+filepath.Join(dir, "munge.key"), "--socket="+sock,
		"--pid-file="+filepath.Join(dir, "munged.pid"), "--log-file="+filepath.Join(dir, "munged.log"),
		"--seed-file="+filepath.Join(dir, "munged.seed"))
	waitFor(t, 10*time.Second, "munged's socket", func() bool { _, err := os.Stat(sock); return err == nil })

	const tries = 3
	for try := 1; ; try++ {
		env, daemons := startSlurmDaemons(t, filepath.Join(dir, fmt.Sprint(try)), sock, ctl, nodes, cpus)
		var exited *process
		waitFor(t, 60*time.Second, "every node idle", func() bool {
			for _, d := range daemons {
				if d.exited() {
					exited = d
					return true
				}
			}
			out, err := runErr(5*time.Second, env, ctl.on("sinfo", "-h", "-N", "-o", "%T")...)
			return err == nil && strings.Count(out, "idle") == len(nodes)
		})
		if exited == nil {
			t.Cleanup(func() {
				// Jobs first, so that no slurmstepd outlives its slurmd.
				runErr(10*time.Second, env, ctl.on("scancel", "--quiet", "--user=root")...)
				waitUntil(10*time.Second, func() bool {
					out, err := runErr(5*time.Second, env, ctl.on("squeue", "-h")...)
					return err != nil || strings.TrimSpace(out) == ""
				})
			})
			return env
		}
		for _, d := range daemons {
			d.stop()
		}
		if try == tries {
			t.Fatalf("%s exited before every node was idle, %d times:\n%s", exited.name, tries, exited.output())
		}
		t.Logf("%s exited before every node was idle (another process may have taken its port); starting Slurm again on new ports:\n%s", exited.name, exited.output())
	}
}

// startSlurmDaemons writes a configuration into dir, with free ports,
// and starts slurmctld and the slurmds.
func startSlurmDaemons(t *testing.T, dir, sock string, ctl host, nodes []slurmNode, cpus int) ([]string, []*process) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, "state"), 0o755); err != nil {
		t.Fatal(err)
	}
	ports := freePorts(t, 2)
	var conf strings.Builder
	fmt.Fprintf(&conf, `ClusterName=rproftest
SlurmctldHost=%s(%s)
SlurmctldPort=%d
SlurmdPort=%d
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=%s
CredType=cred/munge
StateSaveLocation=%s/state
SlurmdSpoolDir=%s/spool-%%n
SlurmctldPidFile=%s/slurmctld.pid
SlurmdPidFile=%s/slurmd-%%n.pid
SlurmctldLogFile=%s/slurmctld.log
SlurmdLogFile=%s/slurmd-%%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/affinity
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
ReturnToService=2
SchedulerType=sched/builtin
TmpFS=/var/tmp
`, ctl.name, ctl.addr, ports[0], ports[1], sock, dir, dir, dir, dir, dir, dir)
	var names []string
	for _, n := range nodes {
		fmt.Fprintf(&conf, "NodeName=%s NodeAddr=%s CPUs=%d State=UNKNOWN\n", n.name, n.addr, cpus)
		names = append(names, n.name)
	}
	fmt.Fprintf(&conf, "PartitionName=debug Nodes=%s Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES\n", strings.Join(names, ","))
	confPath := filepath.Join(dir, "slurm.conf")
	if err := os.WriteFile(confPath, []byte(conf.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"SLURM_CONF=" + confPath}
	daemons := []*process{daemon(t, env, ctl.on("slurmctld", "-D", "-f", confPath)...)}
	for _, n := range nodes {
		daemons = append(daemons, daemon(t, env, append(n.enter, "slurmd", "-D", "-f", confPath, "-N", n.name)...))
	}
	return env, daemons
}

// process is a daemon a test started.
type process struct {
	name string
	log  string
	done chan struct{}
	// stop stops its process group; the test's cleanup calls it too.
	stop func()
}

func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

func (p *process) output() string {
	b, _ := os.ReadFile(p.log)
	return string(b)
}

// daemon starts a foreground daemon in its own process group and stops
// the group when the test ends.
func daemon(t *testing.T, env []string, argv ...string) *process {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	log, err := os.Create(filepath.Join(t.TempDir(), filepath.Base(argv[0])+".out"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", strings.Join(argv, " "), err)
	}
	p := &process{name: strings.Join(argv, " "), log: log.Name(), done: make(chan struct{})}
	go func() { cmd.Wait(); close(p.done) }()
	var once sync.Once
	p.stop = func() {
		once.Do(func() {
			syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
			select {
			case <-p.done:
			case <-time.After(10 * time.Second):
				syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
				<-p.done
			}
			log.Close()
		})
	}
	t.Cleanup(func() {
		p.stop()
		if t.Failed() {
			t.Logf("%s:\n%s", p.name, p.output())
		}
	})
	return p
}

// freePorts are n distinct TCP ports free on every address now, as the
// kernel hands them out.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ports []int
	for range n {
		l, err := net.Listen("tcp", ":0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports
}

func waitUntil(limit time.Duration, ok func() bool) bool {
	for end := time.Now().Add(limit); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if ok() {
			return true
		}
	}
	return false
}

func waitFor(t *testing.T, limit time.Duration, what string, ok func() bool) {
	t.Helper()
	if !waitUntil(limit, ok) {
		t.Fatalf("no %s after %v", what, limit)
	}
}

func TestSlurmOneNodeSrunAndSbatch(t *testing.T) {
	hostname, _ := os.Hostname()
	env := startSlurm(t, host{name: hostname, addr: "127.0.0.1"}, []slurmNode{{name: hostname, addr: "127.0.0.1"}}, runtime.NumCPU())
	bin := buildRprof(t)
	tmp := t.TempDir()
	env = append(env, countEnv...)
	rprof := func(dir string) string {
		return fmt.Sprintf("%s run --count rproftest --lock-dir %s --json %s/ -- sleep 0.1", bin, filepath.Join(tmp, "locks"), dir)
	}
	mkdirs := func(names ...string) {
		for _, n := range names {
			os.Mkdir(filepath.Join(tmp, n), 0o755)
		}
	}
	mkdirs("srun", "batch-srun", "batch-mpirun")

	// --overcommit: two tasks even on a one-CPU machine.
	run(t, 2*time.Minute, env, append([]string{"srun", "--overcommit", "-n", "2"}, strings.Fields(rprof(filepath.Join(tmp, "srun")))...)...)
	p := merged(t, bin, filepath.Join(tmp, "srun"), 2, 1)
	if p.Job.Launcher != "slurm" || !strings.HasPrefix(p.Job.ID, "slurm-") {
		t.Errorf("srun job %s by %s", p.Job.ID, p.Job.Launcher)
	}

	// rprof roofs under srun: local rank 0 alone measures the node; merge
	// makes the node type's document and the job's.
	roofsDir, mergedRoofs := filepath.Join(tmp, "roofs"), filepath.Join(tmp, "roofs-merged")
	mkdirs("roofs", "roofs-merged")
	out := run(t, 4*time.Minute, env, "srun", "--overcommit", "-n", "2", bin, "roofs", "--quick", "--threads", "1", "--no-dgemm", "-o", roofsDir+"/")
	if !strings.Contains(out, "local rank 0 measures this node's roofs") {
		t.Errorf("rank 1 did not leave the node to rank 0:\n%s", out)
	}
	docs, _ := filepath.Glob(filepath.Join(roofsDir, "*.json"))
	if len(docs) != 1 || filepath.Base(docs[0]) != "roofs-"+hostname+".json" {
		t.Fatalf("roofs documents %v, want one for node %s", docs, hostname)
	}
	run(t, time.Minute, nil, bin, "merge", "-o", mergedRoofs+"/", docs[0])
	if _, err := docfile.ReadRoofs(filepath.Join(mergedRoofs, "roofs-job.json")); err != nil {
		t.Errorf("job roofs: %v", err)
	}

	// In a batch script, ranks started by mpirun inherit SLURM_PROCID=0:
	// they must still be ranks 0 and 1 of an Open MPI job.
	script := filepath.Join(tmp, "job.sh")
	body := "#!/bin/sh\nset -e\nsrun --overcommit -n 2 " + rprof(filepath.Join(tmp, "batch-srun")) + "\n"
	if _, err := exec.LookPath("mpirun.openmpi"); err == nil {
		body += "mpirun.openmpi --oversubscribe -np 2 " + rprof(filepath.Join(tmp, "batch-mpirun")) + "\n"
	}
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	out = filepath.Join(tmp, "job.out")
	if _, err := runErr(3*time.Minute, append(env, ompiRoot...), "sbatch", "--wait", "--overcommit", "-n", "2", "-o", out, script); err != nil {
		b, _ := os.ReadFile(out)
		t.Fatalf("sbatch: %v\n%s", err, b)
	}
	merged(t, bin, filepath.Join(tmp, "batch-srun"), 2, 1)
	if strings.Contains(body, "mpirun") {
		if p := merged(t, bin, filepath.Join(tmp, "batch-mpirun"), 2, 1); p.Job.Launcher != "openmpi" {
			t.Errorf("mpirun in sbatch: launcher %s, want openmpi (the sbatch trap)", p.Job.Launcher)
		}
	}
}
