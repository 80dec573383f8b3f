package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/rprof/rprof/dnn"
	"github.com/rprof/rprof/dnnbench"
	"github.com/rprof/rprof/internal/stats"
	"github.com/rprof/rprof/internal/unit"
	"github.com/rprof/rprof/roofline"
)

func TestBenchBindingBindsTheAllowedCPUsUnlessTheUserDid(t *testing.T) {
	tests := []struct {
		name       string
		allowed    []int
		allowedErr error
		threads    int
		env        map[string]string
		wantEnv    []string
		wantHow    string
	}{
		{"two threads on the guest's two CPUs", []int{0, 1}, nil, 2, nil,
			[]string{"OMP_PROC_BIND=close", "OMP_PLACES={0},{1}"},
			"bound one to each of CPUs 0,1 (OMP_PROC_BIND=close, OMP_PLACES={0},{1})"},
		{"the library's own count: every allowed CPU", []int{0, 1}, nil, 0, nil,
			[]string{"OMP_PROC_BIND=close", "OMP_PLACES={0},{1}"},
			"bound one to each of CPUs 0,1 (OMP_PROC_BIND=close, OMP_PLACES={0},{1})"},
		{"one thread takes the first allowed CPU", []int{0, 1}, nil, 1, nil,
			[]string{"OMP_PROC_BIND=close", "OMP_PLACES={0}"},
			"bound to CPU 0 (OMP_PROC_BIND=close, OMP_PLACES={0})"},
		{"a cpuset without CPU 0", []int{1, 3}, nil, 2, nil,
			[]string{"OMP_PROC_BIND=close", "OMP_PLACES={1},{3}"},
			"bound one to each of CPUs 1,3 (OMP_PROC_BIND=close, OMP_PLACES={1},{3})"},
		{"more threads than allowed CPUs share them", []int{1}, nil, 2, nil,
			[]string{"OMP_PROC_BIND=close", "OMP_PLACES={1}"},
			"bound to and sharing the allowed CPU 1 (OMP_PROC_BIND=close, OMP_PLACES={1})"},
		{"the user's OMP_PROC_BIND is kept", []int{0, 1}, nil, 2, map[string]string{"OMP_PROC_BIND": "false"},
			nil, "placed as the environment says (OMP_PROC_BIND=false)"},
		{"the user's places are kept", []int{0, 1}, nil, 2, map[string]string{"OMP_PLACES": "{1},{0}"},
			nil, "placed as the environment says (OMP_PLACES={1},{0})"},
		{"libgomp's GOMP_CPU_AFFINITY is kept", []int{0, 1}, nil, 2, map[string]string{"GOMP_CPU_AFFINITY": "1 0"},
			nil, "placed as the environment says (GOMP_CPU_AFFINITY=1 0)"},
		{"unknown affinity leaves the threads unbound", nil, errors.New("read cpu affinity: not supported"), 2, nil,
			nil, "unbound (allowed CPUs unknown: read cpu affinity: not supported)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := benchBinding(tt.allowed, tt.allowedErr, tt.threads, func(k string) string { return tt.env[k] })
			if !slices.Equal(b.env, tt.wantEnv) || b.how != tt.wantHow {
				t.Errorf("benchBinding = %q, %q; want %q, %q", b.env, b.how, tt.wantEnv, tt.wantHow)
			}
		})
	}
}

// benchResult is a result of a 128x1024:1024x1024 fp32 matmul (268 MFLOP)
// with these samples (s), summarised as bench summarises them.
func benchResult(t *testing.T, samples ...float64) dnnbench.Result {
	t.Helper()
	rec, ok, err := dnn.ParseLine("onednn_verbose,exec,cpu,matmul,brg:avx512_core,undef,src_f32::blocked:ab:f0 wei_f32::blocked:ab:f0 dst_f32::blocked:ab:f0,,,128x1024:1024x1024:128x1024,1")
	if err != nil || !ok {
		t.Fatal(err)
	}
	est := benchMethod.Estimate(samples, 0.95)
	return dnnbench.Result{Implementation: rec.Implementation, Threads: 1, Record: rec, Model: dnn.Model(&rec),
		Seconds: &stats.Inner{Samples: samples, Estimate: est}}
}

// A row's time, share of peak and fraction of the roof come from one
// statistic, the median: skewed samples (a busy machine) move the mean,
// not the row. Too fast a time puts the point above its roof, flagged.
func TestBenchRowUsesTheMedianForEveryColumn(t *testing.T) {
	roofs, err := roofline.ReadRoofs(roofsFixture)
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
	points := benchPoints(results, roofs, "roofs.json", 0.95)
	if p := points[0]; p.Seconds != med || p.FractionOfAttainable == nil || math.Abs(*p.GFlops / *p.AttainableGFlops - *p.FractionOfAttainable) > 1e-12 {
		t.Errorf("skewed: %g s, GFLOP/s %v, fraction %v; want the median %g s and the fraction of its GFLOP/s", p.Seconds, p.GFlops, p.FractionOfAttainable, med)
	}
	if !slices.ContainsFunc(points[1].Flags, func(f roofline.Flag) bool { return f.Code == roofline.FlagAboveRoof }) {
		t.Errorf("twice the peak: flags %v, want above-roof", points[1].Flags)
	}
	var b bytes.Buffer
	writeBenchTable(&b, dnnbench.Version{Major: 3, CPURuntime: "OpenMP"}, ompBinding{how: "bound to CPU 0"}, results, points, roofs)
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
