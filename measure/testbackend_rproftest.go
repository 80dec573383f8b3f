//go:build rproftest

package measure

import (
	"context"
	"os"
	"strconv"
	"time"

	"github.com/rprof/rprof/internal/launch"
	"github.com/rprof/rprof/machine"
	"github.com/rprof/rprof/pmu"
	"github.com/rprof/rprof/roofline"
)

// The rproftest backend (`rprof run --count rproftest`) has counts that
// are known, for end-to-end tests of parallel jobs on machines without a
// PMU. It is compiled only into binaries built with -tags rproftest,
// never into rprof itself.
//
// The target really runs (launch.Run, with the node's hooks); its W is
// RPROF_TEST_WORK_FLOPS (fp64) per process, and a process that opens the
// Background traffic counter (only a node's elected owner does, as with
// the pmu backend's memory controllers) counts
// RPROF_TEST_NODE_TRAFFIC_BYTES: a fixed node-level Q per open. A job's Q
// must then be nodes × that, not ranks × it.
func init() { Register("rproftest", func(*machine.Host) Backend { return &rproftestBackend{} }) }

const (
	testWorkEnv    = "RPROF_TEST_WORK_FLOPS"
	testTrafficEnv = "RPROF_TEST_NODE_TRAFFIC_BYTES"
)

type rproftestBackend struct{ counters []Counter }

func (b *rproftestBackend) Resolve(ctx context.Context, cfg Config) (Resolved, error) {
	b.counters = []Counter{{Name: "rproftest/work/", Kind: KindWork, Weight: 1, Precision: roofline.Double}}
	owner, notes, err := ownsTraffic(ctx, cfg)
	if err != nil {
		return Resolved{}, err
	}
	if owner {
		b.counters = append(b.counters, Counter{Name: "rproftest/node-traffic/", Kind: KindTraffic, Weight: 1,
			Direction: pmu.Total, Level: roofline.LevelDRAM, Background: true})
	}
	host, _ := os.Hostname()
	notes = append(notes, roofline.Flag{Code: roofline.FlagUnverified,
		Message: "counted by the rproftest backend: a fixed W per process and a fixed Q per opening of the traffic counters, not a measurement"})
	return Resolved{Source: roofline.SourceCounters, Counters: b.counters, Notes: notes,
		Machine: roofline.Machine{Hostname: host}}, nil
}

func (b *rproftestBackend) Count(ctx context.Context, target launch.Spec) (Outcome, error) {
	r, err := launch.Run(ctx, target)
	if err != nil {
		return Outcome{}, err
	}
	o := Outcome{Wall: r.Wall, CPU: r.CPU, ExitCode: r.ExitCode, Signal: r.Signal}
	for _, c := range b.counters {
		v := envCount(testWorkEnv, 1e9)
		if c.Kind == KindTraffic {
			v = envCount(testTrafficEnv, 1e9)
		}
		o.Counts = append(o.Counts, pmu.Count{Raw: v, Enabled: 1, Running: 1})
	}
	return o, nil
}

// Capabilities: its Background counter stands for the node's traffic, as
// the pmu backend's memory controllers.
func (b *rproftestBackend) Capabilities() Capabilities { return Capabilities{SharedTraffic: true} }

func (b *rproftestBackend) Idle(ctx context.Context, d time.Duration) (Outcome, error) {
	return Outcome{Wall: d, Counts: make([]pmu.Count, len(b.counters))}, nil
}

func envCount(name string, def uint64) uint64 {
	if v, err := strconv.ParseUint(os.Getenv(name), 10, 64); err == nil {
		return v
	}
	return def
}
