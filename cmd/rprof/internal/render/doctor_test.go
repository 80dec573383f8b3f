package render

import (
	"strings"
	"testing"

	"github.com/rprof/rprof/doctor"
	"github.com/rprof/rprof/roofline"
)

func TestDoctorRoofsLines(t *testing.T) {
	tests := []struct {
		name                 string
		r                    doctor.Roofs
		kernels, clock, cpus string
	}{
		{"captured tree", doctor.Roofs{Clock: "measured", Online: 16}, "not checked (captured tree)", "no cpufreq: rprof roofs measures the clock", "16 online; allowed not checked"},
		{"avx512 host, cpuset", doctor.Roofs{Kernels: []string{"avx512", "avx2"}, FMA: true, Clock: "cpufreq", Online: 8, Allowed: 2}, "avx512, avx2; FMA", "cpufreq cpuinfo_max_freq", "2 allowed of 8 online (cpuset or taskset)"},
		{"all allowed", doctor.Roofs{Kernels: []string{}, Clock: "cpufreq", Online: 2, Allowed: 2}, "none: rprof roofs has no compute roof here", "cpufreq", "2 allowed, all online"},
	}
	for _, tt := range tests {
		k, c, p := roofsText(tt.r)
		if !strings.HasPrefix(k, tt.kernels) || !strings.HasPrefix(c, tt.clock) || !strings.HasPrefix(p, tt.cpus) {
			t.Errorf("%s: %q, %q, %q; want prefixes %q, %q, %q", tt.name, k, c, p, tt.kernels, tt.clock, tt.cpus)
		}
	}
}

func TestDoctorSaysTheEffectiveCacheSizesBesideTheDeclaredOnes(t *testing.T) {
	levels := []roofline.CacheLevel{
		{Level: "L1", Threads: 1, Bytes: 48 << 10, Source: roofline.CacheSourceSysfs, DeclaredBytes: 48 << 10, DeclaredSource: roofline.CacheSourceSysfs},
		{Level: "L3", Threads: 1, Bytes: 136 << 20, Source: roofline.CacheSourceMeasured, DeclaredBytes: 480 << 20, DeclaredSource: roofline.CacheSourceSysfs},
		{Level: "L3", Threads: 2, Bytes: 180 << 20, Source: roofline.CacheSourceMeasured},
	}
	got := cachesText(CachesJSON{Source: "sysfs", Complete: true, Levels: []CacheJSON{{Level: 3, Type: "Unified", Bytes: 480 << 20, Instances: 1}},
		Effective: levels, EffectiveFrom: "roofs.json of 2026-11-27 06:00 UTC"})
	want := "sysfs: L3 480 MiB x1\n\t  effective, as rprof roofs measured them (roofs.json of 2026-11-27 06:00 UTC): " +
		"1 thread: L1 48 KiB sysfs, L3 136 MiB measured (declared 480 MiB sysfs); 2 threads: L3 180 MiB measured"
	if got != want {
		t.Errorf("caches line\n%q, want\n%q", got, want)
	}
}

func TestGPUCheckLines(t *testing.T) {
	yes := true
	tests := []struct {
		name string
		g    GPUCheck
		want string
	}{
		{"captured tree", GPUCheck{Module: "NVRM version: 550.54.15", CountersAdminOnly: &yes},
			"GPU driver\tnot probed (captured tree); NVRM version: 550.54.15\nGPU counters\tadministrators only (RmProfilingAdminOnly: 1)\nCUPTI\tnot checked (captured tree)\nGPU kernels\tnot checked (captured tree)\n"},
		{"tier c", GPUCheck{Probed: true, Module: "NVRM version: 550.54.15", Driver: "12.4", Devices: []string{"0 NVIDIA H100 80GB HBM3 (compute capability 9.0, 132 SMs)"},
			CUPTI: "/usr/local/cuda/lib64/libcupti.so.12", CUPTIVersion: 22, Tier: "c", Why: "W and Q need the range profiler"},
			"GPU driver\tCUDA 12.4; NVRM version: 550.54.15: 0 NVIDIA H100 80GB HBM3 (compute capability 9.0, 132 SMs)\nGPU counters\tnot said (no RmProfilingAdminOnly in driver/nvidia/params)\n" +
				"CUPTI\t/usr/local/cuda/lib64/libcupti.so.12 (API version 22)\nGPU kernels\ttier c, kernel times (rprof run --gpu): W and Q need the range profiler\n"},
		{"tier a", GPUCheck{Probed: true, Module: "NVRM version: 550.54.15", Driver: "12.4", Devices: []string{"0 NVIDIA H100 80GB HBM3 (compute capability 9.0, 132 SMs)"},
			CUPTI: "/usr/local/cuda/lib64/libcupti.so.12", CUPTIVersion: 22, Tier: "a", Why: "possible"},
			"GPU driver\tCUDA 12.4; NVRM version: 550.54.15: 0 NVIDIA H100 80GB HBM3 (compute capability 9.0, 132 SMs)\nGPU counters\tnot said (no RmProfilingAdminOnly in driver/nvidia/params)\n" +
				"CUPTI\t/usr/local/cuda/lib64/libcupti.so.12 (API version 22)\nGPU kernels\ttier a, kernel times with W and Q (rprof run --gpu): possible\n"},
		{"nothing", GPUCheck{Probed: true, DriverError: "no CUDA driver", CUPTIError: "no CUPTI library", Why: "no driver"},
			"GPU driver\tno: no CUDA driver\nGPU counters\tnot said (no NVIDIA kernel module loaded)\nCUPTI\tno: no CUPTI library\nGPU kernels\tnone: no driver\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			writeGPUCheck(&b, tt.g)
			if b.String() != tt.want {
				t.Errorf("got\n%q\nwant\n%q", b.String(), tt.want)
			}
		})
	}
}
