package emulate

import (
	"errors"
	"strings"
	"testing"

	"github.com/rprof/rprof/machine"
)

func TestIdentifyAcceptsOnlySupportedQEMU(t *testing.T) {
	for _, tt := range []struct {
		text    string
		version string // "" when refused
	}{
		{"qemu-x86_64 version 7.2.22 (Debian 1:7.2+dfsg-7+deb12u18+b3)\nCopyright...", "7.2.22"},
		{"qemu-x86_64 version 7.2.0\n", "7.2.0"},
		{"qemu-x86_64 version 8.2.2 (Debian 1:8.2.2+ds-0ubuntu1)\n", ""},
		{"qemu-x86_64 version 9.2.0\n", ""},
		{"garbage", ""},
	} {
		q, err := Identify("/usr/bin/qemu-x86_64", tt.text)
		if tt.version == "" {
			var ue *UnsupportedQEMUError
			if !errors.As(err, &ue) || !strings.Contains(err.Error(), "rprof supports QEMU 7.2 (plugin API 1)") || strings.Contains(err.Error(), "\n") {
				t.Errorf("%q: err %v, want one line naming what is supported", tt.text, err)
			}
			continue
		}
		if err != nil || q.Version != tt.version || q.PluginAPI != 1 || len(q.plugin) == 0 {
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
