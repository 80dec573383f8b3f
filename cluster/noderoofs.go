package cluster

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/rprof/rprof/roofline"
)

// NodeType is the roofs of the nodes of one type (the same CPU and
// topology), measured on each node of a job.
type NodeType struct {
	// Key names the type: CPU model and topology.
	Key   string
	Nodes []string
	// Roofs holds each ceiling measured on every node of the type, at the
	// lowest value any node reached (the ceiling every node attains).
	Roofs roofline.Roofs
}

// ErrNoRoofs: no roofs documents to merge.
var ErrNoRoofs = errors.New("no roofs documents")

// nodeTypeKey groups machines by CPU and topology.
func nodeTypeKey(m roofline.Machine) string {
	return fmt.Sprintf("%s %s family %d model %d, %d sockets, %d cores, %d threads",
		m.CPU.Vendor, m.CPU.ModelName, m.CPU.Family, m.CPU.Model, m.Sockets, m.Cores, m.Threads)
}

// MergeRoofs groups the nodes' roofs documents by node type and makes one
// document per type. Nodes of a type whose ceilings differ by more than 5%
// are flagged on the type's document. With a single node type, job is
// that type's roofs × the nodes (JobRoofs); with several it is nil: the
// ceilings of different nodes are measured at different thread scopes,
// and rprof does not pretend they add up.
func MergeRoofs(docs []roofline.Roofs) (types []NodeType, job *roofline.Roofs, err error) {
	if len(docs) == 0 {
		return nil, nil, ErrNoRoofs
	}
	byKey := map[string][]roofline.Roofs{}
	var keys []string
	for _, d := range docs {
		k := nodeTypeKey(d.Machine)
		if _, ok := byKey[k]; !ok {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], d)
	}
	sort.Strings(keys)
	for _, k := range keys {
		types = append(types, nodeType(k, byKey[k]))
	}
	if len(types) == 1 {
		job = JobRoofs(&types[0].Roofs, len(docs))
	}
	return types, job, nil
}

func nodeType(key string, docs []roofline.Roofs) NodeType {
	t := NodeType{Key: key}
	r := docs[0]
	r.Machine.Hostname = ""
	r.Flags = slices.Clone(r.Flags)
	for _, d := range docs {
		t.Nodes = append(t.Nodes, d.Machine.Hostname)
	}
	spread := func(what string, vals []float64, nodes []string) {
		lo, hi := slices.Min(vals), slices.Max(vals)
		if hi > 1.05*lo {
			r.Flags = append(r.Flags, roofline.Flag{Code: roofline.FlagUnequalRoofs, Message: fmt.Sprintf("%s differs between the nodes of this type: %.4g on %s to %.4g on %s; the document keeps the lowest",
				what, lo, nodes[slices.Index(vals, lo)], hi, nodes[slices.Index(vals, hi)])})
		}
	}
	r.Compute = nil
	for _, c := range docs[0].Compute {
		vals, ok := everyDoc(docs, func(d roofline.Roofs) (float64, bool) {
			i := slices.IndexFunc(d.Compute, func(o roofline.ComputeRoof) bool { return o.Name == c.Name && o.Threads == c.Threads })
			if i < 0 {
				return 0, false
			}
			return d.Compute[i].GFlops, true
		})
		if !ok {
			continue
		}
		low := c
		for _, d := range docs {
			if i := slices.IndexFunc(d.Compute, func(o roofline.ComputeRoof) bool { return o.Name == c.Name && o.Threads == c.Threads }); d.Compute[i].GFlops < low.GFlops {
				low = d.Compute[i]
			}
		}
		spread(fmt.Sprintf("%s on %d threads (GFLOP/s)", c.Name, c.Threads), vals, t.Nodes)
		r.Compute = append(r.Compute, low)
	}
	r.Bandwidth = nil
	for _, b := range docs[0].Bandwidth {
		same := func(o roofline.BandwidthRoof) bool {
			return o.Level == b.Level && o.Kernel == b.Kernel && o.Threads == b.Threads
		}
		vals, ok := everyDoc(docs, func(d roofline.Roofs) (float64, bool) {
			i := slices.IndexFunc(d.Bandwidth, same)
			if i < 0 {
				return 0, false
			}
			return d.Bandwidth[i].GBytesPerS, true
		})
		if !ok {
			continue
		}
		low := b
		for _, d := range docs {
			if o := d.Bandwidth[slices.IndexFunc(d.Bandwidth, same)]; o.GBytesPerS < low.GBytesPerS {
				low = o
			}
		}
		spread(fmt.Sprintf("%s %s on %d threads (GB/s)", b.Level, b.Kernel, b.Threads), vals, t.Nodes)
		r.Bandwidth = append(r.Bandwidth, low)
	}
	r.DGEMM = nil
	if vals, ok := everyDoc(docs, func(d roofline.Roofs) (float64, bool) {
		if d.DGEMM == nil {
			return 0, false
		}
		return d.DGEMM.GFlops, true
	}); ok {
		low := *docs[slices.Index(vals, slices.Min(vals))].DGEMM
		spread("DGEMM (GFLOP/s)", vals, t.Nodes)
		r.DGEMM = &low
	}
	t.Roofs = r
	return t
}

// everyDoc is get over every document, ok only when every one has it.
func everyDoc(docs []roofline.Roofs, get func(roofline.Roofs) (float64, bool)) ([]float64, bool) {
	vals := make([]float64, len(docs))
	for i, d := range docs {
		v, ok := get(d)
		if !ok || math.IsNaN(v) {
			return nil, false
		}
		vals[i] = v
	}
	return vals, true
}
