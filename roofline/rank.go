package roofline

import (
	"slices"
	"time"
)

// Flag codes of parallel jobs.
const (
	// FlagTrafficElsewhere: this rank did not count DRAM traffic; its
	// node's traffic owner did, for every local rank.
	FlagTrafficElsewhere = "traffic-elsewhere"
	// FlagSharedTraffic: another job counted the same memory controllers
	// during the run, so the node's Q includes its traffic.
	FlagSharedTraffic = "shared-traffic"
	// FlagMissingRank: ranks of the job have no point (a rank that died,
	// or a file not given to merge).
	FlagMissingRank = "missing-rank"
	// FlagTrafficOwner: a node has no traffic owner, or several.
	FlagTrafficOwner = "traffic-owner"
	// FlagRankTraffic: every rank modelled its own Q (--count emulate),
	// and the job's Q is their sum; no owner was elected.
	FlagRankTraffic = "traffic-per-rank"
	// FlagUnequalRoofs: the nodes' roofs differ.
	FlagUnequalRoofs = "unequal-roofs"
	// FlagJobRoofs: a job's roofs are a node's roofs times the nodes.
	FlagJobRoofs = "job-roofs"
)

// Rank is a point's place in a parallel job.
type Rank struct {
	// Job identifies the launch (e.g. "ompi-562626561", "slurm-12.0").
	Job      string `json:"job"`
	Launcher string `json:"launcher"` // openmpi, mpich, slurm
	Rank     int    `json:"rank"`
	Size     int    `json:"size"`
	// LocalRank and LocalSize place the rank among the job's ranks on its
	// node (LocalSize 0: the launcher did not say).
	LocalRank int    `json:"local_rank"`
	LocalSize int    `json:"local_size"`
	Node      string `json:"node"`
	// TrafficOwner: this process counted the node's memory-controller
	// traffic on every socket, over a window covering every local rank's
	// program; the point's Q is then the node's, not this rank's.
	TrafficOwner bool `json:"traffic_owner"`
	// Start and End bound the rank's program (for the owner, End is when
	// the node's last local rank ended).
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
	// Version is the rprof build that made the point; cluster.Merge
	// refuses to mix versions.
	Version string `json:"rprof_version"`
	// NodeRoofs summarises the roofs the point was placed under, so that
	// cluster.Merge can tell nodes with unequal roofs apart; nil without
	// roofs.
	NodeRoofs *NodeRoofs `json:"node_roofs,omitempty"`
}

// NodeRoofs is a roofs document in brief: its widest thread scope's best
// compute roof and DRAM roof.
type NodeRoofs struct {
	Created        time.Time `json:"created"`
	CPU            string    `json:"cpu"`
	Threads        int       `json:"threads"`
	GFlops         float64   `json:"gflops"`
	DRAMGBytesPerS float64   `json:"dram_gbytes_per_s"`
}

// SummarizeRoofs is the brief of r used in Rank.NodeRoofs; nil when r has
// no compute or DRAM roof at its widest scope.
func SummarizeRoofs(r *Roofs) *NodeRoofs {
	if r == nil {
		return nil
	}
	scopes := r.ThreadScopes()
	if len(scopes) == 0 {
		return nil
	}
	t := slices.Max(scopes)
	peak, ok := r.PeakCompute(t, "")
	mem, ok2 := r.BandwidthAt(LevelDRAM, t)
	if !ok || !ok2 {
		return nil
	}
	return &NodeRoofs{Created: r.Created, CPU: r.Machine.CPU.ModelName, Threads: t, GFlops: peak.GFlops, DRAMGBytesPerS: mem.GBytesPerS}
}

// Job describes a job point: which ranks and nodes it sums.
type Job struct {
	ID       string `json:"id"`
	Launcher string `json:"launcher"`
	// Ranks is the job's size; Missing lists the ranks with no point.
	Ranks   int       `json:"ranks"`
	Missing []int     `json:"missing_ranks,omitempty"`
	Nodes   []JobNode `json:"nodes"`
	// Start is the first rank's start, End the last rank's end; the job
	// point's Seconds is End - Start.
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
	// SlowestRank took SlowestSeconds, the longest of the ranks' own
	// times.
	SlowestRank    int     `json:"slowest_rank"`
	SlowestSeconds float64 `json:"slowest_rank_seconds"`
	Version        string  `json:"rprof_version"`
}

// JobNode is one node of a job.
type JobNode struct {
	Node  string `json:"node"`
	Ranks []int  `json:"ranks"`
	// Owners are the ranks that counted the node's traffic: exactly one
	// when all is well.
	Owners       []int    `json:"traffic_owners"`
	TrafficBytes *float64 `json:"traffic_bytes"`
}
