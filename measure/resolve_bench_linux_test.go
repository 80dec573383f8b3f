package measure

import (
	"context"
	"testing"
	"time"

	"github.com/rprof/rprof/internal/stats"
	"github.com/rprof/rprof/machine"
)

// BenchmarkResolveStartup reports the part of rprof run's start-up that
// comes before Execute: diagnosing the machine (reading sysfs and procfs,
// opening each catalogue event once) and parsing -e events. Together with
// BenchmarkExecuteStartup it is rprof's time before the target's exec.
//
//	go test ./measure -run '^$' -bench ResolveStartup -benchtime 20x
func BenchmarkResolveStartup(b *testing.B) {
	cfg := Config{Target: Target{Command: []string{"true"}}, Counting: Counting{Events: []string{"page-faults", "task-clock"}}}
	var ms []float64
	for b.Loop() {
		start := time.Now()
		if _, err := newPMUBackend(machine.LiveHost()).Resolve(context.Background(), cfg); err != nil {
			b.Fatal(err)
		}
		ms = append(ms, time.Since(start).Seconds()*1e3)
	}
	e := stats.MedianCI(ms, 0.95)
	b.ReportMetric(e.Value, "resolve-ms")
	b.Logf("resolve (diagnosis with probes, -e parsing): %.2f ms [%.2f, %.2f] (median, 95%% interval, n=%d)", e.Value, e.Lo, e.Hi, e.N)
}
