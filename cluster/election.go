package cluster

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// The files of an election, in a node-local lock directory. Each job has
// a directory of its own, named by job and node (so that a lock
// directory shared between nodes still elects one owner per node):
//
//	rprof-JOB@NODE/rank-R   a rank registered (counted against LocalSize)
//	rprof-JOB@NODE/.active  shared-locked by every rank while its program runs
//	rprof-JOB@NODE/.uncore  exclusive-locked by the owner for its whole life
//	rprof-JOB@NODE/.ready   the owner's counters run: ranks may start
//	rprof-NODE.owners       the node's log of owners starting and ending
const (
	activeFile = ".active"
	uncoreFile = ".uncore"
	readyFile  = ".ready"
)

// ErrUnsupported: the election needs flock(2), which this system lacks.
var ErrUnsupported = errors.New("the traffic-owner election needs Linux")

// LockDirError is a lock directory rprof cannot use. The run can still
// count W and T; nobody on the node counts Q.
type LockDirError struct {
	Dir string
	Err error
}

func (e *LockDirError) Error() string {
	return fmt.Sprintf("lock directory %s: %v", e.Dir, e.Err)
}

func (e *LockDirError) Unwrap() error { return e.Err }

// jobDirName is the job's directory: the job and node, with anything but
// letters, digits, '.', '-' and '_' replaced.
func jobDirName(id Identity) string {
	return "rprof-" + safeName(id.Job) + "@" + safeName(id.Node)
}

func ownersLogName(node string) string { return "rprof-" + safeName(node) + ".owners" }

func safeName(s string) string {
	if s == "" {
		return "_"
	}
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-', r == '_':
			return r
		}
		return '_'
	}, s)
}

// proc names one process over time: a pid and its start time (clock
// ticks since boot), so that a reused pid is not mistaken for it.
type proc struct {
	PID   int
	Start uint64
}

// logEntry is one line of a node's owners log: "start JOB PID TICKS" when
// an owner began counting, "end JOB PID TICKS" when it stopped.
type logEntry struct {
	Start bool
	Job   string
	Proc  proc
}

func (e logEntry) String() string {
	what := "end"
	if e.Start {
		what = "start"
	}
	return fmt.Sprintf("%s %s %d %d\n", what, safeName(e.Job), e.Proc.PID, e.Proc.Start)
}

// parseLog reads an owners log, skipping lines it does not understand
// (a torn line from an owner that died mid-write).
func parseLog(s string) []logEntry {
	var out []logEntry
	for _, line := range strings.Split(s, "\n") {
		f := strings.Fields(line)
		if len(f) != 4 || (f[0] != "start" && f[0] != "end") {
			continue
		}
		pid, err1 := strconv.Atoi(f[2])
		ticks, err2 := strconv.ParseUint(f[3], 10, 64)
		if err1 != nil || err2 != nil {
			continue
		}
		out = append(out, logEntry{Start: f[0] == "start", Job: f[1], Proc: proc{pid, ticks}})
	}
	return out
}

// ownersBefore lists the other jobs' owners that began before this one
// and had not ended, and are still alive: they count the same memory
// controllers during this run.
func ownersBefore(before []logEntry, self string, alive func(proc) bool) []string {
	open := map[proc]string{}
	var order []proc
	for _, e := range before {
		switch {
		case e.Job == safeName(self):
		case e.Start:
			if _, ok := open[e.Proc]; !ok {
				order = append(order, e.Proc)
			}
			open[e.Proc] = e.Job
		default:
			delete(open, e.Proc)
		}
	}
	var out []string
	for _, p := range order {
		if job, ok := open[p]; ok && alive(p) {
			out = append(out, fmt.Sprintf("the owner of job %s (pid %d) was counting this node's memory controllers when this run began", job, p.PID))
		}
	}
	return out
}

// ownersDuring lists the other jobs' owners that began after this one
// did (the log's lines after its own start line).
func ownersDuring(after []logEntry, self string) []string {
	var out []string
	for _, e := range after {
		if e.Start && e.Job != safeName(self) {
			out = append(out, fmt.Sprintf("the owner of job %s (pid %d) began counting this node's memory controllers during this run", e.Job, e.Proc.PID))
		}
	}
	return out
}
