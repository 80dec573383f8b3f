package doctor

import (
	"bufio"

	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/rprof/rprof/gpu/cuda"
	"github.com/rprof/rprof/gpu/cupti"
	"github.com/rprof/rprof/machine"
)

// GPU is what rprof can measure of NVIDIA GPUs here: the driver and its
// devices (rprof roofs --gpu), CUPTI (rprof run --gpu), and which tier of
// kernel measurement works, with why not the one above it.
type GPU struct {
	// Checked says the driver and CUPTI were asked: only on this machine.
	// A captured tree tells the kernel module and the counters' rule.
	Checked bool
	// Module is the NVIDIA kernel module's version line
	// (/proc/driver/nvidia/version), "" when it is not loaded.
	Module string
	// AdminOnly says profiling counters are restricted to administrators
	// (RmProfilingAdminOnly in /proc/driver/nvidia/params, set by
	// NVreg_RestrictProfilingToAdminUsers); nil when not said.
	AdminOnly *bool
	// Driver is the CUDA driver API version ("12.4"), DriverErr why there
	// is none.
	Driver    string
	DriverErr error
	Devices   []cuda.Info
	// CUPTI is the libcupti found, CUPTIVersion its API version, CUPTIErr
	// why none is usable.
	CUPTI        string
	CUPTIVersion int
	CUPTIErr     error
	// NVPerf is the NVPW host library beside CUPTI, which its range
	// profiler needs ("": none).
	NVPerf string
	// Tier is the kernel measurement that works: TierCounters, TierTimes
	// (Blocked says why not tier a: GPUNoNVPerf, GPUAdminOnly), or ""
	// (none: GPUNoDriver, GPUNoCUPTI). Tier a is what the files and
	// rules here allow; whether the driver hands out the counters shows
	// only when rprof run --gpu runs the profiler.
	Tier, Blocked string
}

// Tiers of GPU kernel measurement (docs/gpu.md).
const (
	// TierCounters is tier (a): rprof run --gpu records kernel times and
	// CUPTI's range profiler W and Q.
	TierCounters = "a"
	// TierTimes is tier (c): rprof run --gpu records kernel times.
	TierTimes = "c"
)

// Why no kernel can be recorded (GPU.Blocked).
const (
	// GPUNoDriver: no driver, or no device.
	GPUNoDriver = "no-driver"
	// GPUNoCUPTI: no usable libcupti.
	GPUNoCUPTI = "no-cupti"
	// GPUNoNVPerf: no NVPW host library beside libcupti (tier c).
	GPUNoNVPerf = "no-nvperf"
	// GPUAdminOnly: counters are for administrators and rprof is not one
	// (tier c).
	GPUAdminOnly = "admin-only"
)

// geteuid is the effective user, whom the driver's counter rule judges
// (tests replace it).
var geteuid = os.Geteuid

// errCUPTITooOld is a libcupti older than the kernel records rprof reads.
var errCUPTITooOld = fmt.Errorf("CUPTI API version older than %d (CUDA 9.0)", cupti.MinVersion)

// DiagnoseGPU reads the NVIDIA module's files in h's procfs and, where h
// is this machine, loads the driver (load) and looks for CUPTI (getenv
// for its variables).
func DiagnoseGPU(h *machine.Host, load func() (cuda.Driver, error), getenv func(string) string) GPU {
	g := GPU{Checked: h.Live}
	if b, err := fs.ReadFile(h.Procfs, "driver/nvidia/version"); err == nil {
		g.Module, _, _ = strings.Cut(strings.TrimSpace(string(b)), "\n")
	}
	g.AdminOnly = profilingAdminOnly(h.Procfs)
	if !h.Live {
		return g
	}
	if drv, err := load(); err != nil {
		g.DriverErr = err
	} else if g.Devices, err = cuda.Devices(drv); err != nil {
		g.DriverErr = err
	} else {
		v := g.Devices[0].DriverVersion
		g.Driver = fmt.Sprintf("%d.%d", v/1000, v%1000/10)
	}
	if g.CUPTI, g.CUPTIErr = cupti.Find("", getenv); g.CUPTIErr == nil {
		g.CUPTIVersion, g.CUPTIErr = cupti.Version(g.CUPTI)
		if g.CUPTIErr == nil && g.CUPTIVersion < cupti.MinVersion {
			g.CUPTIErr = errCUPTITooOld
		}
		g.NVPerf = cupti.FindNVPerf(g.CUPTI)
	}
	g.Tier, g.Blocked = gpuTier(g)
	return g
}

// gpuTier is the tier that works, or why none does.
func gpuTier(g GPU) (tier, blocked string) {
	switch {
	case g.DriverErr != nil:
		return "", GPUNoDriver
	case g.CUPTIErr != nil:
		return "", GPUNoCUPTI
	case g.NVPerf == "":
		return TierTimes, GPUNoNVPerf
	case g.AdminOnly != nil && *g.AdminOnly && geteuid() != 0:
		return TierTimes, GPUAdminOnly
	}
	return TierCounters, ""
}

// profilingAdminOnly reads RmProfilingAdminOnly from the module's
// parameters: nil when the file or the line is not there.
func profilingAdminOnly(procfs fs.FS) *bool {
	f, err := procfs.Open("driver/nvidia/params")
	if err != nil {
		return nil
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == "RmProfilingAdminOnly" {
			on := strings.TrimSpace(v) != "0"
			return &on
		}
	}
	return nil
}
