package doctor

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"

	"github.com/rprof/rprof/gpu/cuda"
	"github.com/rprof/rprof/gpu/cuda/cudatest"
	"github.com/rprof/rprof/gpu/cupti"
	"github.com/rprof/rprof/gpu/cupti/cuptitest"
	"github.com/rprof/rprof/machine"
)

// An H100 host's /proc/driver/nvidia, as the 550 driver writes it.
var nvidiaProc = fstest.MapFS{
	"driver/nvidia/version": {Data: []byte("NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024\nGCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n")},
	"driver/nvidia/params":  {Data: []byte("ResmanDebugLevel: 4294967295\nRmProfilingAdminOnly: 1\nEnableGpuFirmware: 18\n")},
}

// withoutNVPerf copies the fake libcupti lib into a directory of its own,
// without the fake NVPW host library beside it.
func withoutNVPerf(t *testing.T, lib string) string {
	t.Helper()
	alone := filepath.Join(t.TempDir(), "libcupti.so")
	b, err := os.ReadFile(lib)
	if err == nil {
		err = os.WriteFile(alone, b, 0o755)
	}
	if err != nil {
		t.Fatal("copying the fake libcupti:", err)
	}
	return alone
}

func TestDiagnoseGPUSaysWhichTierWorksAndWhy(t *testing.T) {
	lib, _ := cuptitest.Build(t)
	h100 := func() (cuda.Driver, error) {
		return &cudatest.Fake{Devices: []cudatest.Device{cudatest.H100SXM()}}, nil
	}
	noDriver := func() (cuda.Driver, error) { return nil, cuda.ErrNoDriver }
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }
	withCUPTI := env(map[string]string{cupti.LibraryEnv: lib})
	alone := withoutNVPerf(t, lib)
	tests := []struct {
		name   string
		host   *machine.Host
		load   func() (cuda.Driver, error)
		getenv func(string) string
		check  func(GPU) bool
		euid   int // the effective user rprof runs as
	}{
		{"captured tree: the module and its rule only", &machine.Host{Procfs: nvidiaProc}, h100, withCUPTI, func(g GPU) bool {
			return !g.Checked && g.Module == "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024" &&
				*g.AdminOnly && g.Devices == nil && g.CUPTI == "" && g.Tier == ""
		}, 0},
		{"an H100 with CUPTI and NVPW, counters for administrators, rprof one", &machine.Host{Procfs: nvidiaProc, Live: true}, h100, withCUPTI, func(g GPU) bool {
			return g.Driver == "12.4" && len(g.Devices) == 1 && g.CUPTI == lib && g.CUPTIVersion == 18 &&
				g.NVPerf == filepath.Join(filepath.Dir(lib), cuptitest.NVPerf) && g.Tier == TierCounters && g.Blocked == ""
		}, 0},
		{"counters for administrators, rprof not one", &machine.Host{Procfs: nvidiaProc, Live: true}, h100, withCUPTI, func(g GPU) bool {
			return g.Tier == TierTimes && g.Blocked == GPUAdminOnly
		}, 1000},
		{"no NVPW host library beside CUPTI", &machine.Host{Procfs: nvidiaProc, Live: true}, h100, env(map[string]string{cupti.LibraryEnv: alone}), func(g GPU) bool {
			return g.CUPTIVersion == 18 && g.NVPerf == "" && g.Tier == TierTimes && g.Blocked == GPUNoNVPerf
		}, 0},
		{"no CUPTI", &machine.Host{Procfs: fstest.MapFS{}, Live: true}, h100, env(map[string]string{cupti.LibraryEnv: t.TempDir() + "/libcupti.so"}), func(g GPU) bool {
			return g.AdminOnly == nil && g.CUPTIErr != nil && g.Tier == "" && g.Blocked == GPUNoCUPTI
		}, 0},
		{"no driver", &machine.Host{Procfs: fstest.MapFS{}, Live: true}, noDriver, withCUPTI, func(g GPU) bool {
			return errors.Is(g.DriverErr, cuda.ErrNoDriver) && g.Tier == "" && g.Blocked == GPUNoDriver && g.CUPTIVersion == 18
		}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func(f func() int) { geteuid = f }(geteuid)
			geteuid = func() int { return tt.euid }
			if g := DiagnoseGPU(tt.host, tt.load, tt.getenv); !tt.check(g) {
				t.Errorf("got %+v", g)
			}
		})
	}
}
