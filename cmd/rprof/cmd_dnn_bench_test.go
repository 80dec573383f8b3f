package main

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/rprof/rprof/cmd/rprof/internal/render"
	"github.com/rprof/rprof/dnn"
	"github.com/rprof/rprof/dnnbench"
	"github.com/rprof/rprof/internal/docfile"
	"github.com/rprof/rprof/internal/stats"
	"github.com/rprof/rprof/internal/unit"
	"github.com/rprof/rprof/machine"
	"github.com/rprof/rprof/roofline"
)

// benchResult is a result of a 128x1024:1024x1024 fp32 matmul (268 MFLOP)
// with these samples (s), summarised as bench summarises them.
func benchResult(t *testing.T, samples ...float64) dnnbench.Result {
	t.Helper()
	rec, ok, err := dnn.ParseLine("onednn_verbose,exec,cpu,matmul,brg:avx512_core,undef,src_f32::blocked:ab:f0 wei_f32::blocked:ab:f0 dst_f32::blocked:ab:f0,,,128x1024:1024x1024:128x1024,1")
	if err != nil || !ok {
		t.Fatal(err)
	}
	est := dnnbench.Method.Estimate(samples, 0.95)
	return dnnbench.Result{Implementation: rec.Implementation, Threads: 1, Record: rec, Model: dnn.Model(&rec),
		Seconds: &stats.Inner{Samples: samples, Estimate: est}}
}

// A row's time, share of peak and fraction of the roof come from one
// statistic, the median: skewed samples (a busy machine) move the mean,
// not the row. Too fast a time puts the point above its roof, flagged.
func TestBenchRowUsesTheMedianForEveryColumn(t *testing.T) {
	roofs, err := docfile.ReadRoofs(roofsFixture)
	if err != nil {
		t.Fatal(err)
	}
	peak, ok := roofs.PeakCompute(1, roofline.Single)
	if !ok {
		t.Fatal("no fp32 peak for 1 thread in the fixture")
	}
	work := 2 * 128 * 1024 * 1024.0
	// Half the peak at the median; the slow tail would put the mean at a
	// third of it.
	med := work / (peak.GFlops / 2 * 1e9)
	skewed := []float64{med, med, med, med, med, med, med, 4 * med, 4 * med, 4 * med}
	// Twice the peak: beyond any interval.
	fast := []float64{med / 4, med / 4, med / 4, med / 4, med / 4, med / 4, med / 4}
	results := []dnnbench.Result{benchResult(t, skewed...), benchResult(t, fast...)}
	points := benchPoints(results, roofs, "roofs.json", 0.95, machine.LiveHost().Describe())
	if p := points[0]; p.Seconds != med || p.FractionOfAttainable == nil || math.Abs(*p.GFlops / *p.AttainableGFlops - *p.FractionOfAttainable) > 1e-12 {
		t.Errorf("skewed: %g s, GFLOP/s %v, fraction %v; want the median %g s and the fraction of its GFLOP/s", p.Seconds, p.GFlops, p.FractionOfAttainable, med)
	}
	if !slices.ContainsFunc(points[1].Flags, func(f roofline.Flag) bool { return f.Code == roofline.FlagAboveRoof }) {
		t.Errorf("twice the peak: flags %v, want above-roof", points[1].Flags)
	}
	var b bytes.Buffer
	render.WriteBenchTable(&b, dnnbench.Version{Major: 3, CPURuntime: "OpenMP"}, dnnbench.Binding{How: "bound to CPU 0"}, results, points, roofs)
	rows := strings.Split(b.String(), "\n")
	var row string
	for _, r := range rows {
		if strings.Contains(r, "brg:avx512_core") {
			row = r
			break
		}
	}
	frac := fmt.Sprintf("%.1f", 100**points[0].FractionOfAttainable)
	share := fmt.Sprintf("%.1f", 100**points[0].GFlops/peak.GFlops)
	if !strings.Contains(row, " "+unit.Value(med*1e3)+" ") || !strings.Contains(row, " "+frac+" ") || !strings.Contains(row, " "+share+" ") {
		t.Errorf("row %q: want the median %s ms, %s%% of peak and %s%% of the roof", row, unit.Value(med*1e3), share, frac)
	}
	if !strings.Contains(b.String(), roofline.FlagAboveRoof+": ") {
		t.Errorf("table without the above-roof note:\n%s", b.String())
	}
}

// A bare 'rprof dnn bench', as the README shows it, lists the experiments.
func TestBareDNNBenchListsTheExperiments(t *testing.T) {
	code, stdout, stderr := rprofDNN(t, context.Background(), "bench")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, x := range dnnbench.Experiments {
		if !strings.Contains(string(stdout), x.Name) {
			t.Errorf("no %s in:\n%s", x.Name, stdout)
		}
	}
}
