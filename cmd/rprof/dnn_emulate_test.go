package main

import (
	"bufio"
	"bytes"
	"os"
	"testing"

	"github.com/rprof/rprof/cmd/rprof/internal/render"
	"github.com/rprof/rprof/dnn"
	"github.com/rprof/rprof/dnnrun"
	"github.com/rprof/rprof/internal/docfile"
	"github.com/rprof/rprof/internal/testutil"
	"github.com/rprof/rprof/machine"
	"github.com/rprof/rprof/measure"
	"github.com/rprof/rprof/regions"
	"github.com/rprof/rprof/roofline"
)

// traceOf reads a recorded oneDNN trace.
func traceOf(t *testing.T, path string) *dnn.Trace {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr := &dnn.Trace{Ordered: true}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		tr.Add(sc.Text())
	}
	return tr
}

// smallCalls are the plugin's call records of the emulated run in
// dnn/testdata/count-2.6.3-small (measure/emulate/testdata/calls-small):
// fp64 and fp32 FLOPs, DRAM bytes read.
func smallCalls() []dnn.CallCount {
	call := func(fp64, fp32, dram float64) dnn.CallCount {
		return dnn.CallCount{WorkByPrecision: map[string]float64{roofline.Double: fp64, roofline.Single: fp32}, TrafficBytes: &dram}
	}
	return []dnn.CallCount{call(852, 74944, 1888256), call(12, 61952, 2816), call(12, 44688, 12160), call(12, 119168, 26048)}
}

// The tables of rprof dnn --count emulate on recorded runs: the native and
// emulated traces of allkinds small and the plugin's call records; then
// the same with a call missing, calls of two processes, and a run that
// never loaded the library.
func TestDNNCountEmulateTablesGolden(t *testing.T) {
	roofs, err := docfile.ReadRoofs(roofsFixture)
	if err != nil {
		t.Fatal(err)
	}
	wide := machine.CPUInfo{Vendor: "AuthenticAMD", Flags: []string{"avx2", "fma", "avx512f"}}
	model, _ := measure.ParseCacheModel("48K/12,1M/16,32M/16")
	for _, tt := range []struct {
		name    string
		counted dnnrun.CountedCalls
	}{
		{"joined", dnnrun.CountedCalls{Calls: smallCalls(), Images: 1, Mapped: true}},
		{"a-call-missing", dnnrun.CountedCalls{Calls: smallCalls()[:3], Images: 1, Mapped: true}},
		{"two-processes", dnnrun.CountedCalls{Calls: smallCalls(), Images: 2, Mapped: true}},
		{"library-not-loaded", dnnrun.CountedCalls{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			native := traceOf(t, "../../dnn/testdata/count-2.6.3-small/native.txt")
			emulated := traceOf(t, "../../dnn/testdata/count-2.6.3-small/emulated.txt")
			em := &dnnrun.Emulated{Trace: emulated, Probe: regions.Probe{Path: "/usr/lib/x86_64-linux-gnu/libdnnl.so.2.6"},
				Emulation: roofline.Emulation{Emulator: "qemu-x86_64 7.2.22", PluginAPI: 1, ISA: measure.EmulatedISA,
					CacheModel: model.String(), CacheModelSource: "cpuid", Seconds: 3.7},
				Notes: measure.EmulationNotes(wide, model)}
			em.Join(tt.counted)
			r := &dnnrun.Result{Trace: native, Groups: native.Groups(), Emulated: em}
			command := []string{"./allkinds", "small"}
			points := r.Place(dnnrun.Options{Command: command, Confidence: 0.95, Roofs: roofs, RoofsPath: "roofs.json", Machine: roofs.Machine})
			var b bytes.Buffer
			render.WriteDNNTable(&b, command, native, r.Groups, points, 0)
			render.WriteDNNEmulated(&b, em, r.Groups, 0)
			testutil.Golden(t, "testdata/dnn/emulated-"+tt.name+".golden", b.Bytes())
		})
	}
}
