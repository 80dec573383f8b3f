package emulate

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
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
