//go:build rproftest

package measure

import (
	"context"
	"os"
	"strconv"

	"github.com/rprof/rprof/pmu"
	"github.com/rprof/rprof/roofline"
)

// A counting backend whose counts are known, for end-to-end tests of
// parallel jobs on machines without a PMU. It is compiled only into
// binaries built with -tags rproftest, never into rprof itself.
//
// Each run's target really runs (through Execute, with the node hooks);
// its W is RPROF_TEST_WORK_FLOPS (fp64) per process, and whoever opens the
// traffic "counters" (a system-wide spec, so only a node's elected owner
// does) counts RPROF_TEST_NODE_TRAFFIC_BYTES: a fixed node-level Q per
// open, as a memory controller would give once per node. A job's Q must
// then be nodes × that, not ranks × it.
func init() { depsOverride = fixedCounts }

const (
	testWorkEnv    = "RPROF_TEST_WORK_FLOPS"
	testTrafficEnv = "RPROF_TEST_NODE_TRAFFIC_BYTES"
)

func fixedCounts(d deps) deps {
	work, traffic := envCount(testWorkEnv, 1e9), envCount(testTrafficEnv, 1e9)
	d.resolve = func(cfg Config) (resolved, error) {
		host, _ := os.Hostname()
		return resolved{source: roofline.SourceCounters,
			specs: []counterSpec{
				{event: pmu.Event{Name: "rproftest/work/"}, kind: kindWork, weight: 1, class: roofline.Double, group: 0},
				{event: pmu.Event{Name: "rproftest/node-traffic/", CPUs: []int{0}}, kind: kindTraffic, weight: 1, class: pmu.Total, group: -1},
			},
			notes: []roofline.Flag{{Code: roofline.FlagUnverified,
				Message: "counted by the rproftest backend: a fixed W per process and a fixed Q per opening of the traffic counters, not a measurement"}},
			machine: roofline.Machine{Hostname: host}}, nil
	}
	d.exec = func(ctx context.Context, cfg Config, argv []string, specs []counterSpec, userOnly bool) (outcome, error) {
		x, err := Execute(ctx, execSpec(cfg, argv, userOnly))
		if err != nil {
			return outcome{}, err
		}
		o := outcome{wall: x.Wall, exit: x.ExitCode, signal: x.Signal}
		for _, s := range specs {
			v := work
			if s.kind == kindTraffic {
				v = traffic
			}
			o.counts = append(o.counts, pmu.Count{Raw: v, Enabled: uint64(x.Wall), Running: uint64(x.Wall)})
		}
		return o, nil
	}
	return d
}

func envCount(name string, def uint64) uint64 {
	if v, err := strconv.ParseUint(os.Getenv(name), 10, 64); err == nil {
		return v
	}
	return def
}
