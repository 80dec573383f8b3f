package roofs

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/rprof/rprof/internal/affinity"
	"github.com/rprof/rprof/internal/stats"
	"github.com/rprof/rprof/machine"
	"github.com/rprof/rprof/roofline"
	"github.com/rprof/rprof/roofs/kernels"
)

// record re-records the sweeps under testdata/sweep on this machine:
// go test ./roofs -run TestRecordSweep -record (about a minute).
var record = flag.Bool("record", false, "record bandwidth sweeps on this machine into testdata/sweep")

// recordedSweep is a sweep measured on a real machine, kept as test input
// for plateau detection.
type recordedSweep struct {
	Machine string       `json:"machine"`
	Method  string       `json:"method"`
	Kernel  string       `json:"kernel"`
	ISA     string       `json:"isa"`
	CPUs    []int        `json:"cpus"`
	Levels  []cacheLevel `json:"levels"`
	Points  []sweepPoint `json:"points"`
}

const recordMethod = "median of 15 samples of >= 8 MiB moved (one pass at least), 95% order-statistic interval; pinned threads, arrays first-touched by their thread"

func TestRecordSweep(t *testing.T) {
	if !*record {
		t.Skip("records only with -record")
	}
	topo, err := machine.ReadTopology(os.DirFS("/sys"))
	if err != nil {
		t.Fatal(err)
	}
	allowed, err := affinity.Allowed()
	if err != nil {
		t.Fatal(err)
	}
	cpuinfo, _ := os.ReadFile("/proc/cpuinfo")
	field := map[string]string{}
	for _, line := range strings.Split(string(cpuinfo), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			if k = strings.TrimSpace(k); field[k] == "" {
				field[k] = strings.TrimSpace(v)
			}
		}
	}
	machine := fmt.Sprintf("%s family %s model %s, %d CPUs, shared busy VM", field["model name"], field["cpu family"], field["model"], runtime.NumCPU())
	bw, _ := kernels.BandwidthKernels()
	for _, want := range []struct {
		name, isa string
		threads   int
	}{{"triad", "avx2", 1}, {"load", "avx2", 1}, {"triad", "avx2", len(allowed)}} {
		var k kernels.Bandwidth
		for _, b := range bw {
			if b.Name == want.name && b.ISA == want.isa {
				k = b
			}
		}
		if k.Run == nil {
			t.Fatalf("no %s %s kernel here", want.isa, want.name)
		}
		cpus := allowed[:want.threads]
		// Only sysfs's sizes are recorded as levels; without them the
		// sweep spans 4 KiB per thread to 1 GiB, as rprof roofs sweeps.
		levels := scopeCaches(topo.Caches, cpus)
		lo, hi, err := sweepSpan(knownCaches{Levels: levels, Complete: len(levels) > 0}, len(cpus))
		if err != nil {
			t.Fatal(err)
		}
		quantum := int64(64*k.BytesPerElement) * int64(len(cpus))
		sizes, err := sweepSizes(lo, hi, defaultPerOctave, quantum)
		if err != nil {
			t.Fatal(err)
		}
		sizes = withDRAMSizes(sizes, quantum)
		pts, err := sweep(context.Background(), sizes, recordEvaluator(k, cpus), nil)
		if err != nil {
			t.Fatal(err)
		}
		rec := recordedSweep{Machine: machine, Method: recordMethod, Kernel: k.Name, ISA: k.ISA, CPUs: cpus, Levels: levels, Points: pts}
		b, err := json.MarshalIndent(rec, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join("testdata", "sweep", fmt.Sprintf("epyc-f%sm%s-vm-%s-%s-%dt.json", field["cpu family"], field["model"], k.ISA, k.Name, len(cpus)))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s (%d points)", path, len(pts))
	}
}

func recordEvaluator(k kernels.Bandwidth, cpus []int) sweepEvaluator {
	return func(ctx context.Context, ws int64) (float64, roofline.Interval, error) {
		n := int(float64(ws) / float64(len(cpus)) / k.BytesPerElement)
		ops := make([][3][]float64, len(cpus))
		if err := affinity.RunPinned(cpus, func(w int) {
			ops[w] = [3][]float64{fill(kernels.Alloc(n), 0), fill(kernels.Alloc(n), 1), fill(kernels.Alloc(n), 2)}
		}, func(int) {}); err != nil {
			return 0, roofline.Interval{}, err
		}
		bytes := k.BytesPerElement * float64(len(ops[0][0])) * float64(len(cpus))
		reps := max(1, int((8<<20)/bytes))
		body := func(w int) {
			for range reps {
				k.Run(ops[w][0], ops[w][1], ops[w][2], 3, 1)
			}
		}
		var xs []float64
		err := affinity.RunGang(cpus, func(g *affinity.Gang) error {
			for i := range 16 {
				d := g.Run(body)
				if i > 0 { // the first pass warms caches and pages
					xs = append(xs, bytes*float64(reps)/d.Seconds()/1e9)
				}
			}
			return nil
		})
		if err != nil {
			return 0, roofline.Interval{}, err
		}
		e := stats.MedianCI(xs, 0.95)
		return e.Value, roofline.Interval{Lo: e.Lo, Hi: e.Hi}, ctx.Err()
	}
}
