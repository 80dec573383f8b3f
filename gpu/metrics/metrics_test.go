package metrics

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/rprof/rprof/roofline"
)

func TestEvaluateCountsFMATwicePerPrecisionAndBytesByLevel(t *testing.T) {
	tests := []struct {
		name   string
		values map[string]float64
		want   Figures
	}{
		{"fp64 FMA only, all levels",
			map[string]float64{Work("d", "fma"): 1000, DRAM: 800, L2: 1600, L1: 3200},
			Figures{Flops: 2000, ByPrecision: map[string]float64{"fp64": 2000},
				LevelBytes: map[string]float64{roofline.LevelDRAM: 800, roofline.LevelL2: 1600, roofline.LevelL1: 3200}}},
		{"every precision and operation, DRAM alone",
			map[string]float64{Work("d", "add"): 1, Work("d", "mul"): 2, Work("d", "fma"): 3,
				Work("f", "add"): 10, Work("f", "mul"): 20, Work("f", "fma"): 30,
				Work("h", "add"): 100, Work("h", "mul"): 200, Work("h", "fma"): 300, DRAM: 64},
			Figures{Flops: 9 + 90 + 900, ByPrecision: map[string]float64{"fp64": 9, "fp32": 90, "fp16": 900},
				LevelBytes: map[string]float64{roofline.LevelDRAM: 64}}},
		{"no floating-point work: no precision",
			map[string]float64{DRAM: 4096, L2: 0},
			Figures{ByPrecision: map[string]float64{}, LevelBytes: map[string]float64{roofline.LevelDRAM: 4096, roofline.LevelL2: 0}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Evaluate(tt.values); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Evaluate = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestRequiredAreTheNineInstructionCountsAndDRAM(t *testing.T) {
	r := Required()
	if len(r) != 10 || r[0] != "sm__sass_thread_inst_executed_op_dadd_pred_on.sum" || r[8] != "sm__sass_thread_inst_executed_op_hfma_pred_on.sum" || r[9] != DRAM {
		t.Errorf("Required = %q", r)
	}
}

func TestSetGivesRatesAndIntensityOnlyWhereDefined(t *testing.T) {
	f := Figures{Flops: 4e9, ByPrecision: map[string]float64{"fp32": 4e9}, LevelBytes: map[string]float64{roofline.LevelDRAM: 1e9, roofline.LevelL2: 3e9}}
	p := roofline.Point{Seconds: 0.5, GPU: &roofline.GPUKernel{}}
	f.Set(&p)
	if p.Source != roofline.SourceCounters || *p.WorkFlops != 4e9 || *p.TrafficBytes != 1e9 || *p.Intensity != 4 || *p.GFlops != 8 || *p.GBytesPerS != 2 || p.GPU.LevelBytes[roofline.LevelL2] != 3e9 {
		t.Errorf("point = source %q W %v Q %v I %v GFLOP/s %v GB/s %v levels %v", p.Source, *p.WorkFlops, *p.TrafficBytes, *p.Intensity, *p.GFlops, *p.GBytesPerS, p.GPU.LevelBytes)
	}
	none := roofline.Point{GPU: &roofline.GPUKernel{}}
	Figures{Flops: 1, LevelBytes: map[string]float64{roofline.LevelDRAM: 0}}.Set(&none)
	if none.GFlops != nil || none.Intensity != nil {
		t.Errorf("no time and no bytes gave a rate %v or an intensity %v", none.GFlops, none.Intensity)
	}
}

func TestByKernelGroupsByDeviceAndNameInTheOrderOfFirstLaunch(t *testing.T) {
	type launch struct {
		device int
		name   string
		n      int
	}
	ls := []launch{{0, "b", 1}, {0, "a", 2}, {1, "b", 3}, {0, "b", 4}, {0, "a", 5}}
	got := ByKernel(ls, func(l launch) (int, string) { return l.device, l.name })
	want := [][]int{{1, 4}, {2, 5}, {3}}
	if len(got) != len(want) {
		t.Fatalf("%d groups, want %d: %v", len(got), len(want), got)
	}
	for i, g := range got {
		var ns []int
		for _, l := range g {
			ns = append(ns, l.n)
		}
		if fmt.Sprint(ns) != fmt.Sprint(want[i]) {
			t.Errorf("group %d = launches %v, want %v", i, ns, want[i])
		}
	}
}
