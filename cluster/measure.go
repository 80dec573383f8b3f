package cluster

import (
	"context"
	"errors"
	"slices"

	"github.com/rprof/rprof/internal/lock"
	"github.com/rprof/rprof/internal/rundir"
	"github.com/rprof/rprof/measure"
	"github.com/rprof/rprof/roofline"
)

// Run is how a process measures its target on a node: a rank of a
// parallel job (Rank) first enters its node's traffic-owner election in
// LockDir, then every process takes the machine lock (Machine, Notes) and
// Measure counts (measure.Run, or a fake in tests).
type Run struct {
	Identity Identity
	Rank     bool
	LockDir  string
	Machine  lock.Request
	Notes    lock.Notes
	// Bystander is told why a rank cannot take part in the election (a
	// *LockDirError or *MixedUsersError): it counts W and T, no traffic.
	Bystander func(error)
	Measure   func(context.Context, measure.Config) (*roofline.Point, error)
	// OrTime, when set, is for a caller that can judge on time alone
	// (rprof gate): where neither counters nor analytic values can give W
	// and Q (a *measure.NoCountersError), the target runs again counting
	// only task-clock (a software event every Linux kernel has), and
	// OrTime is told why.
	OrTime func(*measure.NoCountersError)
	// Roofs and Version describe a rank's point (Describe).
	Roofs   *roofline.Roofs
	Version string
}

// ElectionError: the rank could not enter its node's election; nothing
// was measured.
type ElectionError struct{ Err error }

func (e *ElectionError) Error() string { return e.Err.Error() }
func (e *ElectionError) Unwrap() error { return e.Err }

// MachineError: the machine lock's wait was interrupted or timed out
// (lock.Hold); nothing was measured.
type MachineError struct{ Err error }

func (e *MachineError) Error() string { return e.Err.Error() }
func (e *MachineError) Unwrap() error { return e.Err }

// Measure is one process's measurement of cfg's target on this node:
// election, machine lock, count (or time alone: OrTime), and a rank's
// place in its job. Errors
// other than *ElectionError and *MachineError are Measure's own.
func Measure(ctx context.Context, cfg measure.Config, r Run) (*roofline.Point, error) {
	var node Node
	if r.Rank {
		// An unknown backend is refused by Measure, as for a lone process.
		caps, known := measure.BackendCapabilities(cfg.Counting.Backend)
		n, err := Enter(r.LockDir, r.Identity, known != nil || caps.SharedTraffic)
		var lde *LockDirError
		var mixed *MixedUsersError
		switch {
		case errors.As(err, &lde), errors.As(err, &mixed):
			if r.Bystander != nil {
				r.Bystander(err)
			}
		case err != nil:
			return nil, &ElectionError{Err: err}
		}
		node = n
		defer node.Close()
		cfg.Counting.Node = node
	}
	release, err := lock.Hold(ctx, rundir.Default(), r.Machine, r.Notes)
	if err != nil {
		return nil, &MachineError{Err: err}
	}
	p, err := r.Measure(ctx, cfg)
	var nc *measure.NoCountersError
	if r.OrTime != nil && errors.As(err, &nc) {
		r.OrTime(nc)
		// A fresh slice: appending to the caller's could write into its
		// spare capacity.
		cfg.Counting.Events = append(slices.Clip(cfg.Counting.Events), "task-clock")
		p, err = r.Measure(ctx, cfg)
	}
	release()
	if err != nil {
		return nil, err
	}
	if r.Rank {
		Describe(p, r.Identity, node, r.Roofs, r.Version)
	}
	return p, nil
}
