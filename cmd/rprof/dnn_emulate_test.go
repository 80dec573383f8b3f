package main

import (
	"bufio"
	"bytes"
	"os"
	"testing"

	"github.com/rprof/rprof/dnn"
	"github.com/rprof/rprof/internal/testutil"
	"github.com/rprof/rprof/machine"
	"github.com/rprof/rprof/measure"
	"github.com/rprof/rprof/measure/emulate"
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
// dnn/testdata/count-2.6.3-small (measure/emulate/testdata/calls-small).
func smallCalls() []emulate.Call {
	call := func(fp64, fp32, dram uint64) emulate.Call {
		return emulate.Call{Work: map[string]uint64{roofline.Double: fp64, roofline.Single: fp32}, DRAM: emulate.Traffic{Read: dram}}
	}
	return []emulate.Call{call(852, 74944, 1888256), call(12, 61952, 2816), call(12, 44688, 12160), call(12, 119168, 26048)}
}

// The tables of rprof dnn --count emulate on recorded runs: the native and
// emulated traces of allkinds small and the plugin's call records; then
// the same with a call missing, calls of two processes, and a run that
// never loaded the library.
func TestDNNCountEmulateTablesGolden(t *testing.T) {
	roofs, err := roofline.ReadRoofs(roofsFixture)
	if err != nil {
		t.Fatal(err)
	}
	wide := machine.CPUInfo{Vendor: "AuthenticAMD", Flags: []string{"avx2", "fma", "avx512f"}}
	model, _ := emulate.ParseCacheModel("48K/12,1M/16,32M/16")
	for _, tt := range []struct {
		name string
		res  emulate.Result
	}{
		{"joined", emulate.Result{Calls: smallCalls(), CallImages: 1, CallMapped: true}},
		{"a-call-missing", emulate.Result{Calls: smallCalls()[:3], CallImages: 1, CallMapped: true}},
		{"two-processes", emulate.Result{Calls: smallCalls(), CallImages: 2, CallMapped: true}},
		{"library-not-loaded", emulate.Result{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			native := traceOf(t, "../../dnn/testdata/count-2.6.3-small/native.txt")
			emulated := traceOf(t, "../../dnn/testdata/count-2.6.3-small/emulated.txt")
			em := &emulatedDNN{trace: emulated, probe: regions.Probe{Path: "/usr/lib/x86_64-linux-gnu/libdnnl.so.2.6"},
				emulation: roofline.Emulation{Emulator: "qemu-x86_64 7.2.22", PluginAPI: 1, ISA: measure.EmulatedISA,
					CacheModel: model.String(), CacheModelSource: "cpuid", Seconds: 3.7},
				notes: measure.EmulationNotes(wide, model)}
			em.join(tt.res)
			r := dnnRun{trace: native, groups: native.Groups(), emulated: em}
			o := dnnOptions{command: []string{"./allkinds", "small"}, confidence: 0.95}
			points := r.points(o, roofsDoc{roofs: roofs, path: "roofs.json"}, roofs.Machine)
			var b bytes.Buffer
			writeDNNTable(&b, o.command, native, r.groups, points, 0)
			writeDNNEmulated(&b, em, r.groups, 0)
			testutil.Golden(t, "testdata/dnn/emulated-"+tt.name+".golden", b.Bytes())
		})
	}
}
