package e2e

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// host is a "host" made of a network namespace on a private bridge.
type host struct {
	name, addr string
	// enter is a script that runs its arguments on the host: in its
	// network namespace (nsenter --net), with its own hostname and a
	// private /var/tmp tmpfs and /etc/hosts (unshare --uts --mount).
	// `ip netns exec` is not used: it remounts /sys, which slurmd rejects.
	enter string
}

// twoHosts makes two hosts, h1 and h2, on a bridge of a random private
// /24. The root namespace gets no address on it, and a blackhole route
// for its subnet, so nothing sent to it leaves the machine. Cleanup
// removes the namespaces, the bridge and the route.
func twoHosts(t *testing.T) []host {
	t.Helper()
	need(t, "ip", "nsenter", "unshare", "mount")
	needRoot(t)
	tag := fmt.Sprintf("%04x", rand.IntN(1<<16))
	net := ""
	for range 20 {
		n := fmt.Sprintf("10.%d.%d", 200+rand.IntN(50), 1+rand.IntN(250))
		if out, _ := runErr(5*time.Second, nil, "ip", "-4", "route", "show", "match", n+".1"); !strings.Contains(out, n+".0/24") && !strings.Contains(out, "blackhole") {
			net = n
			break
		}
	}
	if net == "" {
		t.Fatal("no free 10.x.y.0/24 subnet for the bridge")
	}
	dir := t.TempDir()
	br := "rpbr" + tag
	var hosts []host
	var undo [][]string
	t.Cleanup(func() {
		for i := len(undo) - 1; i >= 0; i-- {
			runErr(10*time.Second, nil, undo[i]...)
		}
	})
	step := func(argv []string, rollback ...string) {
		t.Helper()
		run(t, 10*time.Second, nil, argv...)
		if rollback != nil {
			undo = append(undo, rollback)
		}
	}
	step([]string{"ip", "link", "add", br, "type", "bridge"}, "ip", "link", "del", br)
	step([]string{"ip", "link", "set", br, "up"})
	step([]string{"ip", "route", "add", "blackhole", net + ".0/24"}, "ip", "route", "del", "blackhole", net+".0/24")
	etcHosts := filepath.Join(dir, "hosts")
	var hostsFile strings.Builder
	hostsFile.WriteString("127.0.0.1 localhost\n")
	for i, name := range []string{"h1", "h2"} {
		ns := "rprof-" + name + "-" + tag
		addr := fmt.Sprintf("%s.%d", net, 11+i)
		veth := fmt.Sprintf("rpv%s%d", tag, i)
		step([]string{"ip", "netns", "add", ns}, "ip", "netns", "del", ns)
		step([]string{"ip", "link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", ns}, "ip", "link", "del", veth)
		step([]string{"ip", "link", "set", veth, "master", br, "up"})
		step([]string{"ip", "-n", ns, "addr", "add", addr + "/24", "dev", "eth0"})
		step([]string{"ip", "-n", ns, "link", "set", "eth0", "up"})
		step([]string{"ip", "-n", ns, "link", "set", "lo", "up"})
		fmt.Fprintf(&hostsFile, "%s %s\n", addr, name)
		enter := filepath.Join(dir, "enter-"+name)
		script := fmt.Sprintf(`#!/bin/sh
exec nsenter --net=/run/netns/%s unshare --uts --mount sh -c 'hostname %s && mount -t tmpfs tmpfs /var/tmp && mount --bind %s /etc/hosts && exec "$@"' enter "$@"
`, ns, name, etcHosts)
		if err := os.WriteFile(enter, []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		hosts = append(hosts, host{name: name, addr: addr, enter: enter})
	}
	if err := os.WriteFile(etcHosts, []byte(hostsFile.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return hosts
}

func TestOpenMPIAcrossTwoHosts(t *testing.T) {
	need(t, "mpirun.openmpi", "go")
	hosts := twoHosts(t)
	bin := buildRprof(t)
	tmp := t.TempDir()
	pts := filepath.Join(tmp, "points")
	os.Mkdir(pts, 0o755)
	// Open MPI's rsh agent: "AGENT HOST CMD..." runs CMD on HOST, as ssh would.
	agent := filepath.Join(tmp, "agent")
	os.WriteFile(agent, []byte(fmt.Sprintf("#!/bin/sh\nh=$1; shift\nexec %s/enter-$h sh -c \"$*\"\n", filepath.Dir(hosts[0].enter))), 0o755)
	hostfile := filepath.Join(tmp, "hostfile")
	os.WriteFile(hostfile, []byte("h1 slots=2\nh2 slots=2\n"), 0o644)
	subnet := hosts[0].addr[:strings.LastIndexByte(hosts[0].addr, '.')] + ".0/24"
	argv := []string{hosts[0].enter, "mpirun.openmpi", "--oversubscribe", "-np", "4", "--hostfile", hostfile,
		"--mca", "plm_rsh_agent", agent, "--mca", "oob_tcp_if_include", subnet, "--mca", "btl_tcp_if_include", subnet}
	for _, e := range append(countEnv, ompiRoot...) {
		argv = append(argv, "-x", strings.SplitN(e, "=", 2)[0])
	}
	argv = append(argv, bin, "run", "--count", "rproftest", "--lock-dir", "/var/tmp/rprof-locks", "--json", pts+"/", "--", "sleep", "0.1")
	run(t, 3*time.Minute, append(countEnv, ompiRoot...), argv...)
	p := merged(t, bin, pts, 4, 2)
	for _, n := range p.Job.Nodes {
		if len(n.Ranks) != 2 {
			t.Errorf("node %s ran ranks %v, want 2", n.Node, n.Ranks)
		}
	}
}

func TestSlurmTwoNodes(t *testing.T) {
	need(t, "go")
	hosts := twoHosts(t)
	env := startSlurmOn(t, hosts)
	bin := buildRprof(t)
	tmp := t.TempDir()
	pts := filepath.Join(tmp, "points")
	os.Mkdir(pts, 0o755)
	run(t, 3*time.Minute, append(env, countEnv...), hosts[0].enter, "srun", "--overcommit", "-N", "2", "-n", "4",
		bin, "run", "--count", "rproftest", "--lock-dir", "/var/tmp/rprof-locks", "--json", pts+"/", "--", "sleep", "0.1")
	p := merged(t, bin, pts, 4, 2)
	if p.Job.Launcher != "slurm" {
		t.Errorf("launcher %s", p.Job.Launcher)
	}
}

// startSlurmOn starts a Slurm whose controller and first slurmd run on
// hosts[0] and whose other slurmds run on the other hosts; its clients
// must run on a host too.
func startSlurmOn(t *testing.T, hosts []host) []string {
	var nodes []slurmNode
	for _, h := range hosts {
		nodes = append(nodes, slurmNode{name: h.name, addr: h.addr, enter: []string{h.enter}})
	}
	return startSlurm(t, hosts[0], nodes, runtime.NumCPU())
}
