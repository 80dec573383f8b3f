package cupti

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/rprof/rprof/gpu/cupti/cuptitest"
	"github.com/rprof/rprof/gpu/metrics"
	"github.com/rprof/rprof/roofline"
)

// triad is two launches of one kernel, as the activity API records them.
const triad = "FAKE_CUPTI_KERNELS=0,1000,5000,_Z5triadPdS_S_d;0,6000,9000,_Z5triadPdS_S_d"

// triadRanges are the profiler's two ranges of triad: per launch 1000
// fp64 FMA and 200 fp32 adds, 4096 bytes from DRAM, 8192 from L2 and
// 16384 from L1 (the other metrics 0); without drops the metric left out.
func triadRanges(without string) string {
	values := map[string]float64{metrics.Work("d", "fma"): 1000, metrics.Work("f", "add"): 200,
		metrics.DRAM: 4096, metrics.L2: 8192, metrics.L1: 16384}
	var kv []string
	for _, m := range metrics.All() {
		if m != without {
			kv = append(kv, fmt.Sprintf("%s=%g", m, values[m]))
		}
	}
	return "FAKE_PROFILER_RANGES=2*_Z5triadPdS_S_d:" + strings.Join(kv, ",")
}

func TestInjectionProfilesEveryLaunchOfAContextIntoWAndQ(t *testing.T) {
	lib, target := cuptitest.Build(t)
	// "context": the session ends at exit; "destroy": when the context
	// is destroyed.
	for _, when := range []string{"context", "destroy"} {
		t.Run(when, func(t *testing.T) {
			r := record(t, lib, []string{triad, triadRanges("")}, target, when)
			p := r.Processes[0]
			if !p.Profiling || p.ProfilerOff != nil || len(p.Ranges) != 2 || len(p.Errors) != 0 || !p.Complete {
				t.Fatalf("process: %+v", p)
			}
			ks, err := r.Launches()
			if err != nil {
				t.Fatal(err)
			}
			g := Groups(ks)
			if len(g) != 1 {
				t.Fatalf("groups: %+v", g)
			}
			pt := g[0].Point(nil, r.Profile(g[0]), roofline.Machine{}, time.Unix(0, 0))
			// W: 2 launches × (2×1000 + 200); Q: 2 × 4096 bytes; T: 7 µs.
			if pt.Source != roofline.SourceCounters || pt.GPU.Tool != ToolProfiler || len(pt.Flags) != 0 || *pt.WorkFlops != 4400 ||
				*pt.TrafficBytes != 8192 || pt.Seconds != 7e-6 || pt.GPU.LevelBytes[roofline.LevelL1] != 32768 ||
				!reflect.DeepEqual(pt.WorkByPrecision, map[string]float64{"fp64": 4000, "fp32": 400}) {
				t.Errorf("point: %+v, kernel %+v", pt, pt.GPU)
			}
		})
	}
}

func TestInjectionKeepsKernelTimesWhenTheProfilerFails(t *testing.T) {
	lib, target := cuptitest.Build(t)
	alone := filepath.Join(t.TempDir(), "libcupti.so")
	b, err := os.ReadFile(lib)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(alone, b, 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, library string
		fake          []string
		off           string // the profiler-off line's call and name
		why           string
	}{
		{"refused", lib, []string{"FAKE_PROFILER_FAIL=cuptiProfilerInitialize=35"},
			"cuptiProfilerInitialize CUPTI_ERROR_INSUFFICIENT_PRIVILEGES", "profiling is restricted to administrators"},
		{"an evaluation fails", lib, []string{"FAKE_PROFILER_FAIL=NVPW_MetricsContext_EvaluateToGpuValues=1"},
			"NVPW_MetricsContext_EvaluateToGpuValues NVPA_STATUS_ERROR", "measured 0 of its 2 launches"},
		{"the session cannot begin", lib, []string{"FAKE_PROFILER_FAIL=cuptiProfilerBeginSession=27"},
			"cuptiProfilerBeginSession CUPTI_ERROR_UNKNOWN", "measured 0 of its 2 launches"},
		{"the configuration is refused", lib, []string{"FAKE_PROFILER_FAIL=cuptiProfilerSetConfig=1"},
			"cuptiProfilerSetConfig CUPTI_ERROR_UNKNOWN", "measured 0 of its 2 launches"},
		{"no NVPW host library beside libcupti", alone, nil, "dlopen libnvperf_host.so: cannot open shared object file", "measured 0 of its 2 launches"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := record(t, tt.library, append(tt.fake, triad, triadRanges("")), target, "context")
			p := r.Processes[0]
			if p.ProfilerOff == nil || !strings.HasPrefix(p.ProfilerOff.Call+" "+p.ProfilerOff.Name, tt.off) || len(p.Ranges) != 0 {
				t.Fatalf("profiler off %+v, %d ranges; want %q", p.ProfilerOff, len(p.Ranges), tt.off)
			}
			ks, err := r.Launches()
			if err != nil || len(ks) != 2 || !p.Complete {
				t.Fatalf("the activity API's launches: %+v, %v", ks, err)
			}
			if why := r.Profile(Groups(ks)[0]).Why; !strings.Contains(why, tt.why) {
				t.Errorf("why %q, want %q", why, tt.why)
			}
		})
	}
}

func TestInjectionSaysWhichMetricARangeLacks(t *testing.T) {
	lib, target := cuptitest.Build(t)
	r := record(t, lib, []string{triad, triadRanges(metrics.DRAM)}, target, "context")
	ks, err := r.Launches()
	if err != nil {
		t.Fatal(err)
	}
	want := "kernel times only (tier c): CUPTI's range profiler gave dram__bytes.sum for 0 of its 2 launches"
	if why := r.Profile(Groups(ks)[0]).Why; why != want {
		t.Errorf("why %q, want %q", why, want)
	}
}

func TestInjectionReportsLaunchesPastTheRangesASessionHolds(t *testing.T) {
	lib, target := cuptitest.Build(t)
	r := record(t, lib, []string{"FAKE_PROFILER_RANGES=4100*k:" + metrics.DRAM + "=1"}, target, "context")
	if p := r.Processes[0]; len(p.Ranges) != 4096 || p.RangesDropped != 4 || p.ProfilerOff != nil {
		t.Errorf("%d ranges, %d dropped, off %+v", len(p.Ranges), p.RangesDropped, p.ProfilerOff)
	}
}
