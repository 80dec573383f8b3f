package machine

import (
	"slices"
	"strings"
	"testing"
)

func TestIdentifyTakesTheFeaturesWhereTheyContradictTheModel(t *testing.T) {
	tests := []struct {
		name    string
		machine string         // a fake tree, or
		cpu     func(*CPUInfo) // a change to it
		uarch   string         // want
		source  string         // want
		note    []string       // words the note must have
	}{
		// The Intel guest: model 0xA7 is Rocket Lake, a client
		// part without AMX.
		{name: "Intel guest with a Rocket Lake model and AMX", machine: "vm-intel-amx",
			uarch: "sapphirerapids", source: IdentityFeatures, note: []string{"rocketlake", "amx_tile", "Sapphire Rapids or later"}},
		{name: "real Rocket Lake (no AMX)", machine: "vm-intel-amx", cpu: without("amx_tile", "amx_bf16", "amx_int8", "avx512_fp16"),
			uarch: "rocketlake", source: IdentityModel},
		{name: "Sapphire Rapids by its model", machine: "sapphirerapids", uarch: "sapphirerapids", source: IdentityModel},
		// Granite Rapids has AMX and AVX512_FP16 too: its model stands.
		{name: "Granite Rapids by its model", machine: "graniterapids-newkernel", uarch: "graniterapids", source: IdentityModel},
		{name: "unknown Intel model with AMX_FP16", machine: "graniterapids-newkernel", cpu: func(c *CPUInfo) { c.Model = 0xFE },
			uarch: "graniterapids", source: IdentityFeatures, note: []string{"not in rprof's tables", "Granite Rapids or later"}},
		{name: "Skylake-SP model with AMX", machine: "skylake-sp", cpu: with("amx_tile", "avx512_fp16"),
			uarch: "sapphirerapids", source: IdentityFeatures, note: []string{"skylakex"}},
		// A hypervisor may hide features: their absence proves nothing.
		{name: "Sapphire Rapids model with AMX hidden", machine: "sapphirerapids", cpu: without("amx_tile"),
			uarch: "sapphirerapids", source: IdentityModel},
		{name: "Zen 4 by its model", machine: "zen4", uarch: "amdzen4", source: IdentityModel},
		{name: "Zen 5 by its family", machine: "zen5", uarch: "amdzen5", source: IdentityModel},
		{name: "Zen 5 guest", machine: "vm-zen5-firecracker", uarch: "amdzen5", source: IdentityModel},
		{name: "Zen 3 model with AVX-512 (a Zen 4 host's guest)", machine: "zen3", cpu: with("avx512f"),
			uarch: "amdzen4", source: IdentityFeatures, note: []string{"amdzen3", "avx512f", "Zen 4"}},
		{name: "Zen 4 model with AVX-512 hidden", machine: "zen4", cpu: without("avx512f"), uarch: "amdzen4", source: IdentityModel},
		{name: "Zen 5 family is not read as Zen 4 by its AVX-512", machine: "zen5", uarch: "amdzen5", source: IdentityModel},
		{name: "Neoverse by its MIDR", machine: "neoverse-v2", uarch: "neoverse-n2-v2", source: IdentityModel},
		{name: "unknown CPU without telling features", machine: "zen4", cpu: func(c *CPUInfo) { c.Vendor = "HygonGenuine" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, procfs := machineFS(t, tt.machine)
			c, err := ReadCPU(procfs)
			if err != nil {
				t.Fatal(err)
			}
			if tt.cpu != nil {
				tt.cpu(&c)
			}
			id := Identify(c)
			if id.Microarch != tt.uarch || id.Source != tt.source {
				t.Errorf("Identify = %q from %q, want %q from %q (note %q)", id.Microarch, id.Source, tt.uarch, tt.source, id.Note)
			}
			if got := Microarch(c); got != id.Microarch {
				t.Errorf("Microarch = %q, Identify %q: one meaning", got, id.Microarch)
			}
			if (id.Note != "") != id.Inferred() {
				t.Errorf("note %q with source %q: only features need one", id.Note, id.Source)
			}
			for _, w := range tt.note {
				if !strings.Contains(id.Note, w) {
					t.Errorf("note %q lacks %q", id.Note, w)
				}
			}
		})
	}
}

func with(flags ...string) func(*CPUInfo) {
	return func(c *CPUInfo) { c.Flags = append(slices.Clone(c.Flags), flags...) }
}

func without(flags ...string) func(*CPUInfo) {
	return func(c *CPUInfo) {
		c.Flags = slices.DeleteFunc(slices.Clone(c.Flags), func(f string) bool { return slices.Contains(flags, f) })
	}
}
