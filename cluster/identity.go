// Package cluster tells a process where it stands in a parallel job (its
// launcher, rank, local rank, node and job) and elects, per node and job,
// the one process that counts the node's memory-controller traffic; after
// the job, it merges the ranks' points into the job's and the nodes'
// (Merge) and the nodes' roofs into one document per node type
// (MergeRoofs).
//
// The identity is read from the environment the launchers set; reading it
// is pure. The election uses flock(2) on files in a node-local directory
// and is Linux-only.
package cluster

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Launchers an identity can come from.
const (
	OpenMPI = "openmpi"
	MPICH   = "mpich"
	Slurm   = "slurm"
)

// Identity is a process's place in a parallel job.
type Identity struct {
	// Launcher is OpenMPI, MPICH or Slurm.
	Launcher string
	// Rank is the global rank in 0..Size-1.
	Rank, Size int
	// LocalRank is the rank among the job's processes on this node, in
	// 0..LocalSize-1. LocalSize is 0 when the launcher does not say.
	LocalRank, LocalSize int
	// Node names the host (its hostname).
	Node string
	// Job identifies one launch: equal for every rank of it on this node,
	// and (except for MPICH, see Environment) on every node.
	Job string
}

// Environment is what identity parsing reads: the variables, the
// hostname, and for MPICH the launcher's proxy process.
type Environment struct {
	Getenv   func(string) string
	Hostname string
	// Proxy finds the MPICH hydra proxy among this process's ancestors
	// and returns its pid and start time (clock ticks since boot, as in
	// /proc/PID/stat), which together name one launch on this node.
	Proxy func() (pid int, start uint64, err error)
}

// ErrNoLauncher: the environment names no launcher; the process is not a
// rank of a parallel job.
var ErrNoLauncher = errors.New("no MPI or Slurm launcher in the environment")

// EnvError is a launcher variable that is missing or malformed.
type EnvError struct {
	Launcher string
	Var      string
	Value    string
	Err      error
}

func (e *EnvError) Error() string {
	if e.Value == "" {
		return fmt.Sprintf("%s: %s is not set: %v", e.Launcher, e.Var, e.Err)
	}
	return fmt.Sprintf("%s: %s=%q: %v", e.Launcher, e.Var, e.Value, e.Err)
}

func (e *EnvError) Unwrap() error { return e.Err }

// FromEnv works out the identity. The launchers are tried in this order:
// Open MPI, MPICH hydra, then srun. The SLURM variables count only when
// SLURM_STEP_ID is set and no MPI launcher is present: inside an sbatch
// script, ranks started by mpirun inherit SLURM_PROCID=0 and
// SLURM_LOCALID=0 from the batch shell, which would make every one of
// them rank 0 (the sbatch trap). The batch shell itself has
// SLURM_JOB_ID but no SLURM_STEP_ID.
func FromEnv(e Environment) (Identity, error) {
	get := e.Getenv
	switch {
	case get("OMPI_COMM_WORLD_RANK") != "":
		return openMPI(e)
	case get("PMI_RANK") != "" && get("MPI_LOCALRANKID") != "":
		return mpich(e)
	case get("SLURM_STEP_ID") != "" && get("SLURM_PROCID") != "":
		return slurm(e)
	}
	return Identity{}, ErrNoLauncher
}

// reader reads integer variables of one launcher, keeping the first error.
type reader struct {
	launcher string
	get      func(string) string
	err      error
}

func (r *reader) int(name string) int {
	v := r.get(name)
	n, err := strconv.Atoi(v)
	if err == nil && n < 0 {
		err = errors.New("negative")
	}
	if err != nil && r.err == nil {
		if v == "" {
			err = errors.New("the launcher did not set it")
		}
		r.err = &EnvError{Launcher: r.launcher, Var: name, Value: v, Err: err}
	}
	return n
}

func (r *reader) str(name string) string {
	v := r.get(name)
	if v == "" && r.err == nil {
		r.err = &EnvError{Launcher: r.launcher, Var: name, Err: errors.New("the launcher did not set it")}
	}
	return v
}

func openMPI(e Environment) (Identity, error) {
	r := reader{launcher: OpenMPI, get: e.Getenv}
	id := Identity{Launcher: OpenMPI, Node: e.Hostname,
		Rank: r.int("OMPI_COMM_WORLD_RANK"), Size: r.int("OMPI_COMM_WORLD_SIZE"),
		LocalRank: r.int("OMPI_COMM_WORLD_LOCAL_RANK"), LocalSize: r.int("OMPI_COMM_WORLD_LOCAL_SIZE")}
	job := e.Getenv("OMPI_MCA_ess_base_jobid")
	if job == "" {
		job = r.str("PMIX_NAMESPACE")
	}
	id.Job = "ompi-" + job
	return id.check(r.err)
}

func mpich(e Environment) (Identity, error) {
	r := reader{launcher: MPICH, get: e.Getenv}
	id := Identity{Launcher: MPICH, Node: e.Hostname,
		Rank: r.int("PMI_RANK"), Size: r.int("PMI_SIZE"),
		LocalRank: r.int("MPI_LOCALRANKID"), LocalSize: r.int("MPI_LOCALNRANKS")}
	if r.err != nil {
		return Identity{}, r.err
	}
	// Hydra gives the ranks no job identifier; its proxy on this node
	// lives exactly as long as the launch.
	if e.Proxy == nil {
		return Identity{}, &EnvError{Launcher: MPICH, Var: "hydra_pmi_proxy", Err: errors.New("no way to find the launcher's proxy process")}
	}
	pid, start, err := e.Proxy()
	if err != nil {
		return Identity{}, fmt.Errorf("mpich: find the hydra proxy: %w", err)
	}
	id.Job = fmt.Sprintf("mpich-%d-%d", pid, start)
	return id.check(nil)
}

func slurm(e Environment) (Identity, error) {
	r := reader{launcher: Slurm, get: e.Getenv}
	id := Identity{Launcher: Slurm, Node: e.Hostname,
		Rank: r.int("SLURM_PROCID"), LocalRank: r.int("SLURM_LOCALID")}
	if e.Getenv("SLURM_STEP_NUM_TASKS") != "" {
		id.Size = r.int("SLURM_STEP_NUM_TASKS")
	} else {
		id.Size = r.int("SLURM_NTASKS")
	}
	node := r.int("SLURM_NODEID")
	id.Job = "slurm-" + r.str("SLURM_JOB_ID") + "." + r.str("SLURM_STEP_ID")
	if r.err != nil {
		return Identity{}, r.err
	}
	tpn := e.Getenv("SLURM_STEP_TASKS_PER_NODE")
	if tpn == "" {
		tpn = e.Getenv("SLURM_TASKS_PER_NODE")
	}
	counts, err := TasksPerNode(tpn)
	if err != nil {
		return Identity{}, &EnvError{Launcher: Slurm, Var: "SLURM_STEP_TASKS_PER_NODE", Value: tpn, Err: err}
	}
	if node >= len(counts) {
		return Identity{}, &EnvError{Launcher: Slurm, Var: "SLURM_NODEID", Value: strconv.Itoa(node),
			Err: fmt.Errorf("beyond the %d nodes of SLURM_STEP_TASKS_PER_NODE=%q", len(counts), tpn)}
	}
	id.LocalSize = counts[node]
	return id.check(nil)
}

// check rejects ranks outside their sizes.
func (id Identity) check(err error) (Identity, error) {
	switch {
	case err != nil:
		return Identity{}, err
	case id.Rank >= id.Size:
		return Identity{}, fmt.Errorf("%s: rank %d is not below the job size %d", id.Launcher, id.Rank, id.Size)
	case id.LocalSize > 0 && id.LocalRank >= id.LocalSize:
		return Identity{}, fmt.Errorf("%s: local rank %d is not below the local size %d", id.Launcher, id.LocalRank, id.LocalSize)
	}
	return id, nil
}

// TasksPerNode expands Slurm's compressed task counts per node: "2(x2),1"
// is [2 2 1].
func TasksPerNode(s string) ([]int, error) {
	if s == "" {
		return nil, errors.New("empty")
	}
	var out []int
	for _, part := range strings.Split(s, ",") {
		count, times := part, "1"
		if i := strings.IndexByte(part, '('); i >= 0 {
			if !strings.HasPrefix(part[i:], "(x") || !strings.HasSuffix(part, ")") {
				return nil, fmt.Errorf("%q: want N or N(xM)", part)
			}
			count, times = part[:i], part[i+2:len(part)-1]
		}
		n, err := strconv.Atoi(count)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("%q: want N or N(xM)", part)
		}
		m, err := strconv.Atoi(times)
		if err != nil || m < 1 || m > 1<<20 {
			return nil, fmt.Errorf("%q: want N or N(xM)", part)
		}
		for range m {
			out = append(out, n)
		}
	}
	return out, nil
}

// String is "rank R/N (local L/M) on NODE, job J".
func (id Identity) String() string {
	return fmt.Sprintf("%s rank %d/%d (local %d/%d) on %s, job %s", id.Launcher, id.Rank, id.Size, id.LocalRank, id.LocalSize, id.Node, id.Job)
}
