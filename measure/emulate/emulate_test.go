package emulate

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/rprof/rprof/machine"
)

func TestIdentifyAcceptsEveryVersionOfAPluginAPIRprofHasABuildFor(t *testing.T) {
	for _, tt := range []struct {
		text    string
		version string // "" when refused
		reason  string
	}{
		{"qemu-x86_64 version 7.2.22 (Debian 1:7.2+dfsg-7+deb12u18+b3)\nCopyright...", "7.2.22", ""},
		{"qemu-x86_64 version 6.0.0\n", "6.0.0", ""},
		{"qemu-x86_64 version 8.2.2 (Debian 1:8.2.2+ds-0ubuntu1)\n", "8.2.2", ""},
		{"qemu-x86_64 version 5.2.0\n", "", QEMUTooOld},
		{"qemu-x86_64 version 9.0.0\n", "9.0.0", ""},
		{"qemu-x86_64 version 10.0.13 (Debian 1:10.0.13+ds-0+deb13u1)\n", "10.0.13", ""},
		{"garbage", "", QEMUUnknownVersion},
	} {
		q, err := Identify("/usr/bin/qemu-x86_64", tt.text)
		if tt.version == "" {
			var ue *UnsupportedQEMUError
			if !errors.As(err, &ue) || ue.Reason != tt.reason || !strings.Contains(err.Error(), "rprof supports QEMU 6.0 to 8.x (plugin API 1), 9.0 and later (plugin API 2)") || strings.Contains(err.Error(), "\n") {
				t.Errorf("%q: err %v, want one line of reason %q naming what is supported", tt.text, err, tt.reason)
			}
			continue
		}
		api := 1
		if !strings.HasPrefix(tt.version, "6.") && !strings.HasPrefix(tt.version, "7.") && !strings.HasPrefix(tt.version, "8.") {
			api = 2
		}
		if err != nil || q.Version != tt.version || q.PluginAPI != api || len(q.plugin) == 0 {
			t.Errorf("%q: %+v, %v", tt.text, q, err)
		}
	}
}

func TestParseCacheModel(t *testing.T) {
	for _, tt := range []struct {
		in, out string // out "" for an error
	}{
		{"48K/12,1M/16,32M/16", "48K/12,1M/16,32M/16,line=64"},
		{"32K/8, 256K/4, line=128", "32K/8,256K/4,line=128"},
		{"none", "none"},
		{"32M", ""},
		{"32M/0", ""},
		{"1K/32", ""}, // 32 ways of 64 B do not fit in 1 KiB
		{"32K/8,line=48", ""},
		{"1K/1,1K/1,1K/1,1K/1,1K/1", ""},
	} {
		m, err := ParseCacheModel(tt.in)
		switch {
		case tt.out == "" && !errors.Is(err, ErrBadCacheModel):
			t.Errorf("%q: %v, %v; want ErrBadCacheModel", tt.in, m, err)
		case tt.out != "" && (err != nil || m.String() != tt.out):
			t.Errorf("%q: %v, %v; want %s", tt.in, m, err, tt.out)
		}
	}
}

func TestMachineCacheModel(t *testing.T) {
	inst := func(level int, typ string, size int64) machine.Cache {
		return machine.Cache{Level: level, Type: typ, SizeBytes: size, LineSize: 64}
	}
	for _, tt := range []struct {
		name string
		c    machine.Caches
		want string // "" when the machine gives nothing
		src  string
	}{
		{"sysfs, Zen 4", machine.Caches{Source: "sysfs", Complete: true, Instances: []machine.Cache{
			inst(1, "Data", 32<<10), inst(1, "Instruction", 32<<10), inst(1, "Data", 32<<10),
			inst(2, "Unified", 1<<20), inst(3, "Unified", 32<<20)}}, "32K/8,1M/16,32M/16,line=64", "sysfs"},
		{"CPUID without a plausible L3 (Zen 5 guest)", machine.Caches{Source: "cpuid", Instances: []machine.Cache{
			inst(1, "Data", 48<<10), inst(2, "Unified", 1<<20)}}, "48K/12,1M/16,32M/16,line=64", "cpuid for L1-L2, default for the rest"},
		{"nothing", machine.Caches{}, "", ""},
	} {
		m, ok := MachineCacheModel(tt.c)
		if got := m.String(); ok != (tt.want != "") || ok && (got != tt.want || m.Source != tt.src) {
			t.Errorf("%s: %s from %q (%v), want %s from %q", tt.name, got, m.Source, ok, tt.want, tt.src)
		}
	}
}

// calls-small/calls-2.6.3-small.txt is the plugin's output (blocks and mappings left
// out) for dnn/testdata/allkinds.c's "small" run under QEMU 7.2 with
// call= on oneDNN 2.6.3's dnnl_primitive_execute.
func TestCallRecordsAreReadInReturnOrder(t *testing.T) {
	r, err := readResult("testdata/calls-small", CacheModel{})
	if err != nil {
		t.Fatal(err)
	}
	want := []Call{
		{Thread: 0, Work: map[string]uint64{"fp64": 852, "fp32": 74944}, DRAM: Traffic{Read: 1888256}, Core: Traffic{Read: 224805915, Write: 170758665}},
		{Thread: 0, Work: map[string]uint64{"fp64": 12, "fp32": 61952}, DRAM: Traffic{Read: 2816}, Core: Traffic{Read: 312482, Write: 77135}},
		{Thread: 0, Work: map[string]uint64{"fp64": 12, "fp32": 44688}, DRAM: Traffic{Read: 12160}, Core: Traffic{Read: 393376, Write: 55653}},
		{Thread: 0, Work: map[string]uint64{"fp64": 12, "fp32": 119168}, DRAM: Traffic{Read: 26048}, Core: Traffic{Read: 510103, Write: 55834}},
	}
	if !r.CallMapped || r.CallImages != 1 || len(r.Calls) != len(want) {
		t.Fatalf("library mapped %v, %d images made calls, %d calls; want 1 and %d", r.CallMapped, r.CallImages, len(r.Calls), len(want))
	}
	for i, c := range r.Calls {
		for k, v := range c.Work {
			if v == 0 {
				delete(c.Work, k)
			}
		}
		if !reflect.DeepEqual(c, want[i]) {
			t.Errorf("call %d: %+v, want %+v", i, c, want[i])
		}
	}
	if w := r.Calls[3].Flops(); w != 119168+12 {
		t.Errorf("Flops %d", w)
	}
}

func TestMalformedCallRecordIsAnError(t *testing.T) {
	b, err := os.ReadFile("testdata/calls-small/calls-2.6.3-small.txt")
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"call 0 0 852 74944 0 0 0 1888256 0 224805915\n", "call 0 2 1 2 3 4 5 6 7 8 9\n", "callfn zz 594 /lib\n"} {
		dir := t.TempDir()
		text := strings.Replace(string(b), "end\n", bad+"end\n", 1)
		if err := os.WriteFile(filepath.Join(dir, "1.0.txt"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := readResult(dir, CacheModel{}); err == nil || !strings.Contains(err.Error(), "unreadable line") {
			t.Errorf("%q: %v, want an unreadable line", bad, err)
		}
	}
}

func TestScriptsRunUnderTheirInterpreter(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct {
		head string
		want []string // nil: not a script
	}{
		{"#!/bin/sh\necho", []string{"/bin/sh"}},
		{"#! /usr/bin/env python3 \nprint()", []string{"/usr/bin/env", "python3"}},
		{"#!/bin/bash -e -u\n", []string{"/bin/bash", "-e -u"}},
		{"#!\t/bin/sh", []string{"/bin/sh"}},
		{"#!\n", nil},
		{"\x7fELF\x02\x01\x01", nil},
		{"", nil},
	} {
		path := filepath.Join(dir, "s")
		if err := os.WriteFile(path, []byte(tt.head), 0o755); err != nil {
			t.Fatal(err)
		}
		if got := interpreter(path); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%q: %q, want %q", tt.head, got, tt.want)
		}
	}
	if got := interpreter(filepath.Join(dir, "absent")); got != nil {
		t.Errorf("absent file: %q", got)
	}
}

// Threads sums the thread slots of every image; ImageThreads is the most
// one image used, which says whether each image's cache model saw one
// thread's accesses only.
func TestImageThreadsIsTheMostSlotsOfOneImage(t *testing.T) {
	b, err := os.ReadFile("testdata/calls-small/calls-2.6.3-small.txt")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name                  string
		vcpus                 []int
		threads, imageThreads int
	}{
		{"one thread", []int{1}, 1, 1},
		{"forked child, one thread each", []int{1, 1}, 2, 1},
		{"two threads in one image", []int{2}, 2, 2},
		{"parent of two threads, child of one", []int{2, 1}, 3, 2},
	} {
		dir := t.TempDir()
		for i, n := range tc.vcpus {
			text := strings.Replace(string(b), "\nvcpus 2\n", fmt.Sprintf("\nvcpus %d\n", n), 1)
			text = strings.Replace(text, "\npid 22800\n", fmt.Sprintf("\npid %d\n", 22800+i), 1)
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%d.0.txt", 22800+i)), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		r, err := readResult(dir, CacheModel{})
		if err != nil {
			t.Fatal(err)
		}
		if r.Images != len(tc.vcpus) || r.Threads != tc.threads || r.ImageThreads != tc.imageThreads {
			t.Errorf("%s: %d images, %d threads, %d in one image; want %d, %d, %d", tc.name, r.Images, r.Threads, r.ImageThreads, len(tc.vcpus), tc.threads, tc.imageThreads)
		}
	}
}

func TestHostCPUPresentsTheHostsIdentityWithOnlyTheFeaturesItHas(t *testing.T) {
	haswellUp := strings.Fields("fpu sse sse2 pni ssse3 sse4_1 sse4_2 popcnt avx avx2 fma f16c bmi1 bmi2 movbe aes pclmulqdq sha_ni adx abm")
	for _, tt := range []struct {
		name        string
		cpu         machine.CPUInfo
		option      string
		notEmulated []string
	}{
		{"Intel AVX-512 guest, a comma in its brand",
			machine.CPUInfo{Vendor: "GenuineIntel", Family: 6, Model: 143, Stepping: 8, ModelName: "Intel(R) Xeon(R) Platinum 8488C, 2 sockets",
				Flags: append(slices.Clone(haswellUp), "avx512f", "avx512bw", "amx_tile")},
			"max,vendor=GenuineIntel,family=6,model=143,stepping=8,sse4a=off,model-id=Intel(R) Xeon(R) Platinum 8488C 2 sockets",
			[]string{"avx512f", "avx512bw", "amx_tile"}},
		{"Zen 5 guest", machine.CPUInfo{Vendor: "AuthenticAMD", Family: 26, Model: 2, Stepping: 1, ModelName: "AMD EPYC",
			Flags: append(slices.Clone(haswellUp), "sse4a", "avx512f")},
			"max,vendor=AuthenticAMD,family=26,model=2,stepping=1,model-id=AMD EPYC", []string{"avx512f"}},
		{"a host without AVX2 or FMA", machine.CPUInfo{Vendor: "GenuineIntel", Family: 6, Model: 45, Stepping: 7, ModelName: "Intel Xeon E5-2670",
			Flags: strings.Fields("sse sse2 pni ssse3 sse4_1 sse4_2 popcnt avx aes pclmulqdq")},
			"max,vendor=GenuineIntel,family=6,model=45,stepping=7,avx2=off,fma=off,f16c=off,bmi1=off,bmi2=off,movbe=off,sha-ni=off,adx=off,abm=off,sse4a=off,model-id=Intel Xeon E5-2670", nil},
		{"arm64", machine.CPUInfo{Arm: true, Vendor: "ARM"}, "max", nil},
	} {
		c := HostCPU(tt.cpu)
		if c.Option != tt.option || !slices.Equal(c.NotEmulated, tt.notEmulated) {
			t.Errorf("%s: -cpu %s, not emulated %v; want %s, %v", tt.name, c.Option, c.NotEmulated, tt.option, tt.notEmulated)
		}
	}
}

func TestNamedCPUMustBeOneTheQEMUKnows(t *testing.T) {
	help := "Available CPUs:\nx86 Haswell               (alias configured by machine type)\nx86 Haswell-v1            Intel Core Processor (Haswell)\nx86 max                   Enables all features supported by the accelerator in the current host\n\nRecognized CPUID flags:\n  avx avx2\n"
	if c, err := NamedCPU("Haswell", help); err != nil || c.Option != "Haswell" || c.Source != "flag" {
		t.Errorf("Haswell: %+v, %v", c, err)
	}
	// QEMU 10 lists the models indented, without the architecture.
	help10 := "Available CPUs:\n  Haswell               (alias configured by machine type)\n  Haswell-v1            Intel Core Processor (Haswell)\n  max                   Enables all features supported by the accelerator in the current host\n\nRecognized CPUID flags:\n  avx avx2\n"
	if got := CPUModels(help10); !slices.Equal(got, []string{"Haswell", "Haswell-v1", "max"}) {
		t.Errorf("QEMU 10's list: %v, want Haswell, Haswell-v1, max", got)
	}
	_, err := NamedCPU("Zen9", help)
	var ue *UnknownCPUError
	if !errors.As(err, &ue) || !slices.Equal(ue.Known, []string{"Haswell", "Haswell-v1", "max"}) || !strings.Contains(err.Error(), "Haswell, Haswell-v1, max") {
		t.Errorf("Zen9: %v, want an error listing Haswell, Haswell-v1, max", err)
	}
}
