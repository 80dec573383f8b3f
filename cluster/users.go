package cluster

import (
	"bufio"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"strings"

	"github.com/rprof/rprof/internal/kfs"
)

// launcherDaemons are the command names of the processes a launcher runs
// on each node to start the ranks there (mpirun itself on its own node):
// every local rank of a job descends from one.
var launcherDaemons = map[string]bool{
	"orted": true, "prted": true, "orterun": true, "prterun": true,
	"mpirun": true, "mpiexec": true, "mpirun.openmpi": true, "mpiexec.openmpi": true,
	"hydra_pmi_proxy": true, "mpiexec.hydra": true, "mpirun.mpich": true, "mpiexec.mpich": true,
	"slurmstepd": true,
}

// MixedUsersError: another rank of this job on this node runs as another
// user. Each user's election lives in a directory private to that user, so
// ranks of two users would each elect an owner and count the node's
// traffic twice: this rank takes no part in it.
type MixedUsersError struct {
	// PID and UID are the other rank's; Want is this process's effective
	// uid. Daemon and DaemonPID are the launcher's process both descend
	// from.
	PID, UID, Want int
	Daemon         string
	DaemonPID      int
}

func (e *MixedUsersError) Error() string {
	return fmt.Sprintf("pid %d, another rank of this job on this node (both started by %s, pid %d), runs as uid %d and this one as uid %d: ranks of one job under different users cannot share the traffic-owner election",
		e.PID, e.Daemon, e.DaemonPID, e.UID, e.Want)
}

// otherUsersRank looks, under a /proc root, for a process running the
// same program as self (by command name) under self's nearest launcher
// daemon with another effective uid than euid: a *MixedUsersError names
// the first. Outside a launcher's daemon, or where /proc says nothing, it
// finds none.
func otherUsersRank(procfs fs.FS, self, euid int) error {
	me, err := kfs.ReadProcStat(procfs, self)
	if err != nil {
		return nil
	}
	daemon, name := 0, ""
	for p := me.PPID; p > 1 && daemon == 0; {
		st, err := kfs.ReadProcStat(procfs, p)
		if err != nil {
			return nil
		}
		if launcherDaemons[st.Comm] {
			daemon, name = p, st.Comm
		}
		p = st.PPID
	}
	if daemon == 0 {
		return nil
	}
	ents, err := fs.ReadDir(procfs, ".")
	if err != nil {
		return nil
	}
	parent := map[int]int{}
	var same []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, err := kfs.ReadProcStat(procfs, pid); err == nil {
			parent[pid] = st.PPID
			if st.Comm == me.Comm && pid != self {
				same = append(same, pid)
			}
		}
	}
	slices.Sort(same)
	for _, pid := range same {
		if !descends(parent, pid, daemon) {
			continue
		}
		if uid, err := effectiveUID(procfs, pid); err == nil && uid != euid {
			return &MixedUsersError{PID: pid, UID: uid, Want: euid, Daemon: name, DaemonPID: daemon}
		}
	}
	return nil
}

// descends reports whether pid has ancestor among its parents.
func descends(parent map[int]int, pid, ancestor int) bool {
	for n := 0; pid > 1 && n < len(parent); n++ {
		p, ok := parent[pid]
		if !ok {
			return false
		}
		if p == ancestor {
			return true
		}
		pid = p
	}
	return false
}

// effectiveUID reads the second field of the Uid line of PID/status.
func effectiveUID(procfs fs.FS, pid int) (int, error) {
	f, err := procfs.Open(strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "Uid:"); ok {
			if u := strings.Fields(rest); len(u) >= 2 {
				return strconv.Atoi(u[1])
			}
		}
	}
	return 0, fmt.Errorf("%d/status: no Uid line: %w", pid, kfs.ErrMalformed)
}
