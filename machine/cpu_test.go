package machine

import (
	"errors"
	"io/fs"
	"os"
	"testing"
	"testing/fstest"

	"github.com/rprof/rprof/internal/testutil"
)

// machineFS returns the sysfs and procfs roots of a fake machine tree.
func machineFS(t testing.TB, name string) (sysfs, procfs fs.FS) {
	t.Helper()
	return testutil.MachineFS(t, name)
}

func TestReadCPUIdentifiesEveryMachine(t *testing.T) {
	tests := []struct {
		machine    string
		key        string
		uarch      string
		hypervisor bool
		flag       string // a flag the machine must have
	}{
		{"skylake-sp", "GenuineIntel-6-55-4", "skylakex", false, "avx512f"},
		{"icelake-sp", "GenuineIntel-6-6A-6", "icelakex", false, "avx512_vnni"},
		{"sapphirerapids", "GenuineIntel-6-8F-8", "sapphirerapids", false, "amx_tile"},
		{"graniterapids-oldkernel", "GenuineIntel-6-AD-1", "graniterapids", false, "amx_fp16"},
		{"graniterapids-newkernel", "GenuineIntel-6-AD-1", "graniterapids", false, "amx_fp16"},
		{"alderlake", "GenuineIntel-6-97-2", "alderlake", false, "hybrid_cpu"},
		{"zen3", "AuthenticAMD-25-1-1", "amdzen3", false, "perfctr_nb"},
		{"zen4", "AuthenticAMD-25-11-1", "amdzen4", false, "perfmon_v2"},
		{"zen5", "AuthenticAMD-26-2-1", "amdzen5", false, "avx512f"},
		{"neoverse-v2", "0x00000000410fd4f0", "neoverse-n2-v2", false, "sve2"},
		// The dev VM's CPUID claims an EPYC 9004 (see its README).
		{"vm-zen5", "AuthenticAMD-25-11-1", "amdzen4", true, "avx512f"},
		{"vm-zen5-firecracker", "AuthenticAMD-26-2-1", "amdzen5", true, "avx512f"},
		// Model 0xA7 (Rocket Lake) with AMX: taken for what its features
		// prove (TestIdentify).
		{"vm-intel-amx", "GenuineIntel-6-A7-0", "sapphirerapids", true, "amx_tile"},
	}
	for _, tt := range tests {
		t.Run(tt.machine, func(t *testing.T) {
			_, procfs := machineFS(t, tt.machine)
			c, err := ReadCPU(procfs)
			if err != nil {
				t.Fatal(err)
			}
			if got := c.PerfKey(); got != tt.key {
				t.Errorf("PerfKey() = %q, want %q", got, tt.key)
			}
			if got := Microarch(c); got != tt.uarch {
				t.Errorf("Microarch() = %q, want %q", got, tt.uarch)
			}
			if got := c.Hypervisor(); got != tt.hypervisor {
				t.Errorf("Hypervisor() = %v, want %v", got, tt.hypervisor)
			}
			if !c.HasFlag(tt.flag) {
				t.Errorf("HasFlag(%q) = false", tt.flag)
			}
			if c.HasFlag("no-such-flag") {
				t.Error(`HasFlag("no-such-flag") = true`)
			}
		})
	}
	if len(tests) != len(testutil.Machines) {
		t.Errorf("%d machines tested, %d in testdata", len(tests), len(testutil.Machines))
	}
}

func TestReadCPULive(t *testing.T) {
	if _, err := os.Stat("/proc/cpuinfo"); err != nil {
		t.Skipf("no Linux procfs here: %v", err)
	}
	c, err := ReadCPU(os.DirFS("/proc"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Vendor == "" || !c.Arm && c.Family == 0 || c.Arm && c.Implementer == 0 || len(c.Flags) == 0 {
		t.Errorf("live cpuinfo read as %+v", c)
	}
}

func TestReadCPUArmFields(t *testing.T) {
	_, procfs := machineFS(t, "neoverse-v2")
	c, err := ReadCPU(procfs)
	if err != nil {
		t.Fatal(err)
	}
	want := CPUInfo{Vendor: "ARM", Implementer: 0x41, Part: 0xd4f, Arm: true}
	if c.Vendor != want.Vendor || c.Implementer != want.Implementer || c.Part != want.Part || !c.Arm ||
		c.Family != 0 || c.Model != 0 {
		t.Errorf("got %+v, want the fields of %+v", c, want)
	}
}

func TestMicroarchFollowsPerfMapfile(t *testing.T) {
	intel := func(model, stepping int) CPUInfo {
		return CPUInfo{Vendor: "GenuineIntel", Family: 6, Model: model, Stepping: stepping}
	}
	amd := func(family, model int) CPUInfo { return CPUInfo{Vendor: "AuthenticAMD", Family: family, Model: model} }
	arm := func(impl, part int) CPUInfo { return CPUInfo{Arm: true, Implementer: impl, Part: part} }
	tests := []struct {
		name string
		cpu  CPUInfo
		want string
	}{
		{"SKX last stepping", intel(0x55, 4), "skylakex"},
		{"CLX first stepping", intel(0x55, 5), "cascadelakex"},
		{"Cooper Lake stepping", intel(0x55, 11), "cascadelakex"},
		{"SKX stepping 0", intel(0x55, 0), "skylakex"},
		{"Haswell client", intel(0x3C, 3), "haswell"},
		{"Haswell-EP", intel(0x3F, 2), "haswellx"},
		{"Broadwell-DE", intel(0x56, 3), "broadwellde"},
		{"Skylake client", intel(0x5E, 3), "skylake"},
		{"Coffee Lake maps to skylake", intel(0x9E, 10), "skylake"},
		{"Ice Lake-SP D", intel(0x6C, 1), "icelakex"},
		{"Tiger Lake", intel(0x8C, 1), "tigerlake"},
		{"Rocket Lake", intel(0xA7, 1), "rocketlake"},
		{"Emerald Rapids", intel(0xCF, 2), "emeraldrapids"},
		{"Granite Rapids D", intel(0xAE, 1), "graniterapids"},
		{"Sierra Forest", intel(0xAF, 3), "sierraforest"},
		{"Raptor Lake maps to alderlake", intel(0xB7, 1), "alderlake"},
		{"Alder Lake-N", intel(0xBE, 0), "alderlaken"},
		{"Meteor Lake", intel(0xAA, 4), "meteorlake"},
		{"Lunar Lake", intel(0xBD, 1), "lunarlake"},
		{"Arrow Lake", intel(0xC6, 2), "arrowlake"},
		{"unknown Intel model", intel(0x01, 0), ""},
		{"Intel family 15", CPUInfo{Vendor: "GenuineIntel", Family: 15, Model: 6}, ""},
		{"Nova Lake", CPUInfo{Vendor: "GenuineIntel", Family: 18, Model: 1}, "novalake"},
		{"Zen 1 model 0x01", amd(0x17, 0x01), "amdzen1"},
		{"Zen 1 upper bound 0x2F", amd(0x17, 0x2F), "amdzen1"},
		{"Zen 2 model 0x31", amd(0x17, 0x31), "amdzen2"},
		{"Zen 2 model 0x71", amd(0x17, 0x71), "amdzen2"},
		{"Zen 3 model 0x0F", amd(0x19, 0x0F), "amdzen3"},
		{"Zen 4 model 0x10", amd(0x19, 0x10), "amdzen4"},
		{"Zen 3 model 0x21", amd(0x19, 0x21), "amdzen3"},
		{"Zen 4 model 0x30", amd(0x19, 0x30), "amdzen4"},
		{"Zen 3 model 0x50", amd(0x19, 0x50), "amdzen3"},
		{"Zen 4 model 0x61", amd(0x19, 0x61), "amdzen4"},
		{"Zen 4 model 0xA0", amd(0x19, 0xA0), "amdzen4"},
		{"Zen 5 model 0x44", amd(0x1A, 0x44), "amdzen5"},
		{"AMD family 0x16", amd(0x16, 0x30), ""},
		{"Hygon is not mapped", CPUInfo{Vendor: "HygonGenuine", Family: 0x18}, ""},
		{"Neoverse V1", arm(0x41, 0xd40), "neoverse-v1"},
		{"Neoverse N2", arm(0x41, 0xd49), "neoverse-n2-v2"},
		{"Neoverse N1", arm(0x41, 0xd0c), "cortex-a76-n1"},
		{"unknown Arm part", arm(0x41, 0xd03), ""},
		{"other implementer", arm(0x4e, 0xd4f), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Microarch(tt.cpu); got != tt.want {
				t.Errorf("Microarch(%s) = %q, want %q", tt.cpu.PerfKey(), got, tt.want)
			}
		})
	}
}

func TestPerfKeyFormatsFamilyDecimalModelHex(t *testing.T) {
	tests := []struct {
		cpu  CPUInfo
		want string
	}{
		{CPUInfo{Vendor: "GenuineIntel", Family: 6, Model: 143, Stepping: 8}, "GenuineIntel-6-8F-8"},
		{CPUInfo{Vendor: "GenuineIntel", Family: 6, Model: 85, Stepping: 11}, "GenuineIntel-6-55-B"},
		{CPUInfo{Vendor: "AuthenticAMD", Family: 26, Model: 68, Stepping: 0}, "AuthenticAMD-26-44-0"},
		{CPUInfo{Arm: true, Implementer: 0x41, Variant: 1, Part: 0xd40, Revision: 1}, "0x00000000411fd401"},
	}
	for _, tt := range tests {
		if got := tt.cpu.PerfKey(); got != tt.want {
			t.Errorf("PerfKey(%+v) = %q, want %q", tt.cpu, got, tt.want)
		}
	}
}

func TestReadCPURejectsMalformedCpuinfo(t *testing.T) {
	tests := []struct {
		name    string
		cpuinfo string
		absent  bool
	}{
		{name: "missing file", absent: true},
		{name: "empty", cpuinfo: ""},
		{name: "no vendor", cpuinfo: "processor\t: 0\nmodel\t: 85\n"},
		{name: "empty vendor", cpuinfo: "vendor_id:\ncpu family:0\nmodel:0\nstepping:0"},
		{name: "family not a number", cpuinfo: "vendor_id\t: GenuineIntel\ncpu family\t: six\nmodel\t: 85\nstepping\t: 4\n"},
		{name: "no model line", cpuinfo: "vendor_id\t: GenuineIntel\ncpu family\t: 6\nstepping\t: 4\n"},
		{name: "negative stepping", cpuinfo: "vendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t: 85\nstepping\t: -1\n"},
		{name: "arm part not a number", cpuinfo: "processor\t: 0\nCPU implementer\t: 0x41\nCPU part\t: zz\n"},
		{name: "arm without part", cpuinfo: "processor\t: 0\nCPU implementer\t: 0x41\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys := fstest.MapFS{}
			if !tt.absent {
				fsys["cpuinfo"] = &fstest.MapFile{Data: []byte(tt.cpuinfo)}
			}
			c, err := ReadCPU(fsys)
			if err == nil {
				t.Fatalf("ReadCPU = %+v, want an error", c)
			}
			if tt.absent != errors.Is(err, fs.ErrNotExist) || !tt.absent && !errors.Is(err, ErrMalformed) {
				t.Errorf("error %q: want ErrNotExist for a missing file, ErrMalformed otherwise", err)
			}
		})
	}
}

func TestReadCPUSkipsArmHeaderBlock(t *testing.T) {
	// Older arm64 kernels print a summary block before the processors.
	fsys := fstest.MapFS{"cpuinfo": &fstest.MapFile{Data: []byte(
		"Processor\t: AArch64 Processor rev 1 (aarch64)\n\n" +
			"processor\t: 0\nFeatures\t: fp asimd\nCPU implementer\t: 0x41\nCPU variant\t: 0x1\nCPU part\t: 0xd40\nCPU revision\t: 1\n\n" +
			"processor\t: 1\nCPU implementer\t: 0x42\nCPU part\t: 0x516\n")}}
	c, err := ReadCPU(fsys)
	if err != nil {
		t.Fatal(err)
	}
	if c.PerfKey() != "0x00000000411fd401" || Microarch(c) != "neoverse-v1" || !c.HasFlag("asimd") {
		t.Errorf("got %+v (key %s), want processor 0's Neoverse V1", c, c.PerfKey())
	}
}

func FuzzParseCPUInfo(f *testing.F) {
	for _, m := range []string{"skylake-sp", "neoverse-v2", "vm-zen5"} {
		_, procfs := machineFS(f, m)
		b, err := fs.ReadFile(procfs, "cpuinfo")
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Add("vendor_id: GenuineIntel\ncpu family: 6\nmodel: 0x55\nstepping: 4\n")
	f.Fuzz(func(t *testing.T, text string) {
		c, err := parseCPUInfo(text)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Errorf("error %v does not match ErrMalformed", err)
			}
			return
		}
		if c.Vendor == "" && !c.Arm {
			t.Errorf("parsed %+v without a vendor", c)
		}
		_ = c.PerfKey()
		_ = Microarch(c)
	})
}
