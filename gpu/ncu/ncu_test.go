package ncu

import (
	"errors"
	"math"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/rprof/rprof/gpu/metrics"
	"github.com/rprof/rprof/roofline"
)

func fixture(t *testing.T) []Kernel {
	t.Helper()
	f, err := os.Open("testdata/h100-raw.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ls, err := Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(ls) != 4 {
		t.Fatalf("%d launches, want 4", len(ls))
	}
	return Kernels(ls)
}

func near(got, want float64) bool { return math.Abs(got-want) <= 1e-9*math.Abs(want) }

// The fixture's figures, worked by hand in testdata/README.md.
func TestKernelsFromTheRawPage(t *testing.T) {
	ks := fixture(t)
	var names []string
	for _, k := range ks {
		names = append(names, k.Name)
	}
	want := []string{"triad(double*, const double*, const double*, double)", "dgemm_tile(int, int, int, const double*, const double*, double*)", "reduce_sum(const double*, double*, int)"}
	if !reflect.DeepEqual(names, want) {
		t.Fatalf("kernels %q", names)
	}
	here := roofline.Machine{Hostname: "gpu-host"}
	created := time.Date(2026, 11, 27, 7, 0, 0, 0, time.UTC)
	triad := ks[0].Point(here, created)
	g := triad.GPU
	if len(ks[0].Lacks()) != 0 || triad.Label != "triad" || g.Launches != 2 || g.DeviceName != "NVIDIA H100 80GB HBM3" || g.ComputeCapability != "9.0" {
		t.Errorf("triad %+v, lacks %v", g, ks[0].Lacks())
	}
	if !near(*triad.WorkFlops, 2*2*33554432) || !near(*triad.TrafficBytes, 2*805.31e6) || !near(triad.Seconds, 540e-6) {
		t.Errorf("triad W %g, Q %g, T %g", *triad.WorkFlops, *triad.TrafficBytes, triad.Seconds)
	}
	// The SM clock weighted by each launch's time.
	if sm := (1.98e9*270.14e-6 + 1.96e9*269.86e-6) / 540e-6 / 1e6; !near(g.SMClockMHz, sm) || !near(g.MemClockMHz, 2620) {
		t.Errorf("clocks %g, %g MHz; want %g, 2620", g.SMClockMHz, g.MemClockMHz, sm)
	}
	if !near(g.LevelBytes["L2"], 2*810.02e6) || !near(g.LevelBytes["L1"], 2*805.31e6) || !near(g.LevelBytes["DRAM"], 2*805.31e6) {
		t.Errorf("levels %v", g.LevelBytes)
	}
	if triad.Threads != roofline.GPUThreads || triad.Source != roofline.SourceCounters || *triad.Intensity != *triad.WorkFlops / *triad.TrafficBytes {
		t.Errorf("triad point %+v", triad)
	}
	gemm := ks[1].Point(here, created)
	if !near(*gemm.WorkFlops, 2*1073741824+4194304) || gemm.WorkByPrecision["fp64"] != *gemm.WorkFlops || len(gemm.WorkByPrecision) != 1 {
		t.Errorf("dgemm W %g by precision %v", *gemm.WorkFlops, gemm.WorkByPrecision)
	}
	if err := roofline.ValidatePoint("triad", &triad); err != nil {
		t.Error(err)
	}
	lacks := ks[2].Lacks()
	if len(lacks) != 1 || lacks[0] != "dram__bytes.sum (launch 3: not collected (n/a))" {
		t.Errorf("reduce_sum lacks %q", lacks)
	}
}

// The details page's long form (one metric a row) from another ncu
// version: its kernels are read alike; a metric missing from the report
// is named.
func TestLongFormAndMissingMetrics(t *testing.T) {
	const long = `"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"
"0","1","app","host","saxpy","1","7","(256, 1, 1)","(4096, 1, 1)","0","8.0","Command line profiler metrics","gpu__time_duration.sum","nsecond","12,500"
"0","1","app","host","saxpy","1","7","(256, 1, 1)","(4096, 1, 1)","0","8.0","Command line profiler metrics","dram__bytes.sum","Kbyte","12,582.91"
"0","1","app","host","saxpy","1","7","(256, 1, 1)","(4096, 1, 1)","0","8.0","Command line profiler metrics","sm__sass_thread_inst_executed_op_ffma_pred_on.sum","Minst","1.05"
"0","1","app","host","saxpy","1","7","(256, 1, 1)","(4096, 1, 1)","0","8.0","Command line profiler metrics","lts__t_bytes.sum","parsec","1"
`
	ls, err := Parse(strings.NewReader(long))
	if err != nil {
		t.Fatal(err)
	}
	if len(ls) != 1 || !near(ls[0].Values[MetricTime], 12.5e-6) || !near(ls[0].Values[metrics.DRAM], 12582.91e3) || !near(ls[0].Values[metrics.Work("f", "fma")], 1.05e6) {
		t.Fatalf("launches %+v", ls)
	}
	if ls[0].Problems[metrics.L2] != `unit "parsec" not understood` {
		t.Errorf("problems %v", ls[0].Problems)
	}
	k := Kernels(ls)[0]
	lacks := k.Lacks()
	if len(lacks) != 8 || lacks[0] != "sm__sass_thread_inst_executed_op_dadd_pred_on.sum (not in the report)" {
		t.Errorf("lacks %q", lacks)
	}
}

func TestNotAnExport(t *testing.T) {
	for _, in := range []string{"", "hello\nworld\n", `"a","b"` + "\n1,2\n"} {
		if _, err := Parse(strings.NewReader(in)); !errors.Is(err, ErrFormat) {
			t.Errorf("%q: err = %v", in, err)
		}
	}
}

func TestValues(t *testing.T) {
	for _, tc := range []struct {
		text, unit string
		want       float64
		ok         bool
	}{
		{"1,234.5", "byte", 1234.5, true}, {"2.5", "Gbyte", 2.5e9, true}, {"1.98", "cycle/nsecond", 1.98e9, true},
		{"7", "usecond", 7e-6, true}, {"n/a", "byte", 0, false}, {"-3", "byte", 0, false}, {"x", "byte", 0, false},
	} {
		v, err := value(tc.text, tc.unit)
		if (err == nil) != tc.ok || tc.ok && !near(v, tc.want) {
			t.Errorf("value(%q, %q) = %g, %v", tc.text, tc.unit, v, err)
		}
	}
}
