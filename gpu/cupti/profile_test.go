package cupti

import (
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/rprof/rprof/gpu/metrics"
	"github.com/rprof/rprof/roofline"
)

func TestParseReadsTheRangeProfilersRecords(t *testing.T) {
	in := "rprof-cupti\t1\t7\nprofiling\n" +
		"range\t1\t" + metrics.Work("d", "fma") + "=1e6," + metrics.DRAM + "=2.5e5\ttriad\n" +
		"range\t0\t\tempty\n" +
		"profiler-off\tcuptiProfilerInitialize\t35\tCUPTI_ERROR_INSUFFICIENT_PRIVILEGES\n"
	p, err := Parse(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []Range{{Name: "triad", Device: 1, Values: map[string]float64{metrics.Work("d", "fma"): 1e6, metrics.DRAM: 2.5e5}},
		{Name: "empty", Device: 0, Values: map[string]float64{}}}
	if !p.Profiling || !reflect.DeepEqual(p.Ranges, want) || p.ProfilerOff == nil || *p.ProfilerOff != (CallError{"cuptiProfilerInitialize", 35, "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES"}) {
		t.Errorf("got profiling %v, ranges %+v, off %+v", p.Profiling, p.Ranges, p.ProfilerOff)
	}
	for in, want := range map[string]string{
		"range\t0\tdram__bytes.sum\tk\n":        `"dram__bytes.sum": want METRIC=VALUE`,
		"range\t0\tdram__bytes.sum=lots\tk\n":   `invalid syntax`,
		"range\tx\tdram__bytes.sum=1\tk\n":      `range: strconv.Atoi: parsing "x"`,
		"profiler-off\tcuptiProfilerInit\t35\n": "profiler-off has 2 fields, want 3",
	} {
		if _, err := Parse(strings.NewReader("rprof-cupti\t1\t7\n" + in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want %q", in, err, want)
		}
	}
}

// ranges are n launches of kernel k on device 0, each with values.
func ranges(k string, n int, values map[string]float64) []Range {
	out := make([]Range, n)
	for i := range out {
		out[i] = Range{Name: k, Values: values}
	}
	return out
}

func TestProfileHasFiguresOnlyWhenEveryLaunchWasMeasuredWithItsMetrics(t *testing.T) {
	// One launch: 1000 fp64 FMA, 200 fp32 adds, 50 fp16 multiplies;
	// 4096 bytes from DRAM, 8192 from L2, 16384 from L1.
	full := map[string]float64{metrics.Work("d", "add"): 0, metrics.Work("d", "mul"): 0, metrics.Work("d", "fma"): 1000,
		metrics.Work("f", "add"): 200, metrics.Work("f", "mul"): 0, metrics.Work("f", "fma"): 0,
		metrics.Work("h", "add"): 0, metrics.Work("h", "mul"): 50, metrics.Work("h", "fma"): 0,
		metrics.DRAM: 4096, metrics.L2: 8192, metrics.L1: 16384}
	without := func(drop string, v float64) map[string]float64 {
		out := map[string]float64{}
		for m, x := range full {
			out[m] = x
		}
		if math.IsNaN(v) {
			out[drop] = v
		} else {
			delete(out, drop)
		}
		return out
	}
	refused := &CallError{"cuptiProfilerInitialize", ResultInsufficientPrivileges, "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES"}
	g := Group{Name: "triad", Device: 0, Launches: 2}
	tests := []struct {
		name      string
		processes []Process
		want      *metrics.Figures
		why       string
	}{
		{"every launch: W with FMA twice per precision, bytes by level, summed",
			[]Process{{PID: 7, Profiling: true, Ranges: append(ranges("triad", 2, full), Range{Name: "triad", Device: 1, Values: full}, Range{Name: "other", Values: full})}},
			&metrics.Figures{Flops: 2 * (2000 + 200 + 50), ByPrecision: map[string]float64{"fp64": 4000, "fp32": 400, "fp16": 100},
				LevelBytes: map[string]float64{roofline.LevelDRAM: 8192, roofline.LevelL2: 16384, roofline.LevelL1: 32768}}, ""},
		{"launches split over two processes",
			[]Process{{PID: 7, Profiling: true, Ranges: ranges("triad", 1, full)}, {PID: 8, Profiling: true, Ranges: ranges("triad", 1, full)}},
			&metrics.Figures{Flops: 4500, ByPrecision: map[string]float64{"fp64": 4000, "fp32": 400, "fp16": 100},
				LevelBytes: map[string]float64{roofline.LevelDRAM: 8192, roofline.LevelL2: 16384, roofline.LevelL1: 32768}}, ""},
		{"a launch without L1 bytes: the level is left out",
			[]Process{{PID: 7, Profiling: true, Ranges: append(ranges("triad", 1, full), ranges("triad", 1, without(metrics.L1, 0))...)}},
			&metrics.Figures{Flops: 4500, ByPrecision: map[string]float64{"fp64": 4000, "fp32": 400, "fp16": 100},
				LevelBytes: map[string]float64{roofline.LevelDRAM: 8192, roofline.LevelL2: 16384}}, ""},
		{"a launch without DRAM bytes",
			[]Process{{PID: 7, Profiling: true, Ranges: append(ranges("triad", 1, full), ranges("triad", 1, without(metrics.DRAM, 0))...)}},
			nil, "kernel times only (tier c): CUPTI's range profiler gave dram__bytes.sum for 1 of its 2 launches"},
		{"a value that is not a number counts as missing",
			[]Process{{PID: 7, Profiling: true, Ranges: append(ranges("triad", 1, full), ranges("triad", 1, without(metrics.Work("d", "fma"), math.NaN()))...)}},
			nil, "kernel times only (tier c): CUPTI's range profiler gave sm__sass_thread_inst_executed_op_dfma_pred_on.sum for 1 of its 2 launches"},
		{"a launch not measured",
			[]Process{{PID: 7, Profiling: true, Ranges: ranges("triad", 1, full)}},
			nil, "kernel times only (tier c): CUPTI's range profiler measured 1 of its 2 launches"},
		{"refused in one process of two",
			[]Process{{PID: 7, Profiling: true, Ranges: ranges("triad", 1, full)}, {PID: 8, ProfilerOff: refused}},
			nil, "kernel times only (tier c): CUPTI's range profiler measured 1 of its 2 launches; the range profiler failed in process 8: cuptiProfilerInitialize: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES (35): profiling is restricted to administrators"},
		{"refused",
			[]Process{{PID: 7, ProfilerOff: refused}},
			nil, "kernel times only (tier c): CUPTI's range profiler measured 0 of its 2 launches; the range profiler failed in process 7: cuptiProfilerInitialize: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES (35): profiling is restricted to administrators"},
		{"another failure",
			[]Process{{PID: 7, ProfilerOff: &CallError{"NVPW_CUDA_MetricsContext_Create", 1, "NVPA_STATUS_ERROR"}}},
			nil, "kernel times only (tier c): CUPTI's range profiler measured 0 of its 2 launches; the range profiler failed in process 7: NVPW_CUDA_MetricsContext_Create: NVPA_STATUS_ERROR (1)"},
		{"no process ran the profiler", []Process{{PID: 7}}, nil, TimesOnly},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Recording{Processes: tt.processes}.Profile(g)
			if !reflect.DeepEqual(got.Figures, tt.want) || got.Why != tt.why {
				t.Errorf("Profile = %+v, %q\nwant %+v, %q", got.Figures, got.Why, tt.want, tt.why)
			}
		})
	}
}

func TestProfiledPointHasWorkAndTrafficFromTheProfilerAndTimeFromActivity(t *testing.T) {
	g := Group{Name: "_Z5triadPdS_S_d", Device: 0, Launches: 2, Nanoseconds: 4000}
	f := metrics.Figures{Flops: 8e6, ByPrecision: map[string]float64{"fp64": 8e6}, LevelBytes: map[string]float64{roofline.LevelDRAM: 2e6, roofline.LevelL2: 4e6}}
	p := g.Point(nil, Profile{Figures: &f}, roofline.Machine{}, time.Unix(0, 0))
	if p.Source != roofline.SourceCounters || p.GPU.Tool != ToolProfiler || len(p.Flags) != 0 || p.Seconds != 4e-6 ||
		*p.WorkFlops != 8e6 || *p.TrafficBytes != 2e6 || *p.Intensity != 4 || *p.GFlops != 2000 || p.GPU.LevelBytes[roofline.LevelL2] != 4e6 {
		t.Errorf("point: %+v, kernel %+v", p, p.GPU)
	}
}
