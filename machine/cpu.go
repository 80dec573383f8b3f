package machine

import (
	"bufio"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"strings"
)

// CPUInfo identifies the processor, from the first processor block of
// /proc/cpuinfo.
type CPUInfo struct {
	// Vendor is cpuinfo's vendor_id on x86 ("GenuineIntel",
	// "AuthenticAMD"); on arm64 it is derived from the implementer ("ARM",
	// "NVIDIA", ... or "arm64-0xNN").
	Vendor string
	// Family, Model and Stepping are x86 cpuinfo's cpu family, model and
	// stepping (decimal there, with the extended fields already added).
	Family, Model, Stepping int
	ModelName               string
	// Flags are the x86 flags or the arm64 Features.
	Flags []string
	// Implementer, Variant, Part and Revision are the arm64 MIDR_EL1 fields
	// (CPU implementer, CPU variant, CPU part, CPU revision); zero on x86.
	Implementer, Variant, Part, Revision int
	// Arm is true for an arm64 cpuinfo.
	Arm bool
}

// armImplementers names MIDR implementer codes (Arm ARM, MIDR_EL1).
var armImplementers = map[int]string{
	0x41: "ARM", 0x42: "Broadcom", 0x43: "Cavium", 0x46: "Fujitsu",
	0x48: "HiSilicon", 0x4e: "NVIDIA", 0x51: "Qualcomm", 0x61: "Apple", 0xc0: "Ampere",
}

// ReadCPU reads the first processor block of cpuinfo in procfs, a file
// system rooted like /proc. It understands the x86 and arm64 formats.
func ReadCPU(procfs fs.FS) (CPUInfo, error) {
	b, err := fs.ReadFile(procfs, "cpuinfo")
	if err != nil {
		return CPUInfo{}, err
	}
	c, err := parseCPUInfo(string(b))
	if err != nil {
		return CPUInfo{}, fmt.Errorf("read cpuinfo: %w", err)
	}
	return c, nil
}

// parseCPUInfo parses the first block that identifies a processor (x86
// vendor_id or arm64 CPU implementer); older arm kernels print a header
// block before the per-processor ones.
func parseCPUInfo(text string) (CPUInfo, error) {
	block := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if strings.TrimSpace(line) == "" {
			if identifies(block) {
				break
			}
			clear(block)
			continue
		}
		key, val, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		key = strings.TrimSpace(key)
		if _, seen := block[key]; !seen {
			block[key] = strings.TrimSpace(val)
		}
	}
	if err := sc.Err(); err != nil {
		return CPUInfo{}, err
	}
	if !identifies(block) {
		return CPUInfo{}, fmt.Errorf("no processor block with vendor_id or CPU implementer: %w", ErrMalformed)
	}
	if _, ok := block["vendor_id"]; ok {
		return parseX86(block)
	}
	return parseArm(block)
}

func identifies(block map[string]string) bool {
	_, x86 := block["vendor_id"]
	_, arm := block["CPU implementer"]
	return x86 || arm
}

func parseX86(block map[string]string) (CPUInfo, error) {
	c := CPUInfo{Vendor: block["vendor_id"], ModelName: block["model name"], Flags: strings.Fields(block["flags"])}
	if c.Vendor == "" {
		return CPUInfo{}, fmt.Errorf("empty vendor_id: %w", ErrMalformed)
	}
	for _, f := range []struct {
		key string
		dst *int
	}{{"cpu family", &c.Family}, {"model", &c.Model}, {"stepping", &c.Stepping}} {
		s, ok := block[f.key]
		if !ok {
			return CPUInfo{}, fmt.Errorf("no %q line: %w", f.key, ErrMalformed)
		}
		v, err := strconv.Atoi(s)
		if err != nil || v < 0 {
			return CPUInfo{}, fmt.Errorf("%s %q is not a number: %w", f.key, s, ErrMalformed)
		}
		*f.dst = v
	}
	return c, nil
}

func parseArm(block map[string]string) (CPUInfo, error) {
	c := CPUInfo{Arm: true, Flags: strings.Fields(block["Features"]), ModelName: block["model name"]}
	for _, f := range []struct {
		key      string
		dst      *int
		optional bool
	}{{"CPU implementer", &c.Implementer, false}, {"CPU part", &c.Part, false},
		{"CPU variant", &c.Variant, true}, {"CPU revision", &c.Revision, true}} {
		s, ok := block[f.key]
		if !ok {
			if f.optional {
				continue
			}
			return CPUInfo{}, fmt.Errorf("no %q line: %w", f.key, ErrMalformed)
		}
		v, err := strconv.ParseInt(s, 0, 32)
		if err != nil || v < 0 {
			return CPUInfo{}, fmt.Errorf("%s %q is not a number: %w", f.key, s, ErrMalformed)
		}
		*f.dst = int(v)
	}
	c.Vendor = armImplementers[c.Implementer]
	if c.Vendor == "" {
		c.Vendor = fmt.Sprintf("arm64-%#02x", c.Implementer)
	}
	return c, nil
}

// HasFlag reports whether cpuinfo lists flag (x86 flags, arm64 Features).
func (c CPUInfo) HasFlag(flag string) bool { return slices.Contains(c.Flags, flag) }

// Hypervisor reports whether the kernel runs under a hypervisor (the x86
// hypervisor flag); such guests often have no hardware PMU.
func (c CPUInfo) Hypervisor() bool { return c.HasFlag("hypervisor") }

// MIDR is the arm64 MIDR_EL1 value rebuilt from cpuinfo (architecture field
// 0xf, "defined by CPUID scheme").
func (c CPUInfo) MIDR() uint64 {
	return uint64(c.Implementer)<<24 | uint64(c.Variant)<<20 | 0xf<<16 | uint64(c.Part)<<4 | uint64(c.Revision)
}

// PerfKey is the string perf matches against its pmu-events mapfile.csv:
// on x86 "vendor-family-MODEL-STEPPING" with the family in decimal and the
// model and stepping in upper-case hex (tools/perf/arch/x86/util/header.c),
// e.g. "GenuineIntel-6-55-4"; on arm64 the MIDR as "0x%016x".
func (c CPUInfo) PerfKey() string {
	if c.Arm {
		return fmt.Sprintf("0x%016x", c.MIDR())
	}
	return fmt.Sprintf("%s-%d-%X-%X", c.Vendor, c.Family, c.Model, c.Stepping)
}

// intelFamily6 maps Intel family-6 models to perf's event directory names
// (Intel perfmon mapfile.csv and the kernel's x86 mapfile.csv). Model 0x55
// is split by stepping in Microarch.
var intelFamily6 = map[int]string{
	0x3C: "haswell", 0x45: "haswell", 0x46: "haswell",
	0x3F: "haswellx",
	0x3D: "broadwell", 0x47: "broadwell",
	0x4F: "broadwellx",
	0x56: "broadwellde",
	0x4E: "skylake", 0x5E: "skylake", 0x8E: "skylake", 0x9E: "skylake", 0xA5: "skylake", 0xA6: "skylake",
	0x7D: "icelake", 0x7E: "icelake",
	0xA7: "rocketlake",
	0x8C: "tigerlake", 0x8D: "tigerlake",
	0x6A: "icelakex", 0x6C: "icelakex",
	0x8F: "sapphirerapids",
	0xCF: "emeraldrapids",
	0xAD: "graniterapids", 0xAE: "graniterapids",
	0xAF: "sierraforest",
	0xB6: "grandridge",
	0xDD: "clearwaterforest",
	0x97: "alderlake", 0x9A: "alderlake", 0xB7: "alderlake", 0xBA: "alderlake", 0xBF: "alderlake",
	0xBE: "alderlaken",
	0xAA: "meteorlake", 0xAC: "meteorlake", 0xB5: "meteorlake",
	0xBD: "lunarlake",
	0xC5: "arrowlake", 0xC6: "arrowlake",
	0xCC: "pantherlake", 0xD5: "pantherlake", 0xE5: "pantherlake",
}

// armParts maps Arm Ltd (implementer 0x41) MIDR part numbers to perf's
// arm64 event directory names (arch/arm64/mapfile.csv).
var armParts = map[int]string{
	0xd0c: "cortex-a76-n1",
	0xd40: "neoverse-v1",
	0xd49: "neoverse-n2-v2",
	0xd4f: "neoverse-n2-v2",
}

// Microarch names the microarchitecture as perf's pmu-events directory
// does ("skylakex", "amdzen4", "neoverse-n2-v2", ...), or "" when rprof
// does not know the CPU: Identify's, from the model or, where the features
// contradict it, from the features.
func Microarch(c CPUInfo) string { return Identify(c).Microarch }

// modelMicroarch is the microarchitecture the vendor, family and model
// name. The checks follow perf's mapfile.csv rows in order.
func modelMicroarch(c CPUInfo) string {
	if c.Arm {
		if c.Implementer == 0x41 {
			return armParts[c.Part]
		}
		return ""
	}
	switch c.Vendor {
	case "GenuineIntel":
		switch {
		case c.Family == 6 && c.Model == 0x55 && c.Stepping <= 4:
			return "skylakex"
		case c.Family == 6 && c.Model == 0x55:
			// Cascade Lake and Cooper Lake steppings.
			return "cascadelakex"
		case c.Family == 6:
			return intelFamily6[c.Model]
		case c.Family == 18 && (c.Model == 1 || c.Model == 3):
			return "novalake"
		}
	case "AuthenticAMD":
		switch c.Family {
		case 0x17:
			if c.Model <= 0x2F {
				return "amdzen1"
			}
			return "amdzen2"
		case 0x19:
			if c.Model <= 0x0F || 0x20 <= c.Model && c.Model <= 0x2F || 0x40 <= c.Model && c.Model <= 0x5F {
				return "amdzen3"
			}
			return "amdzen4"
		case 0x1A:
			return "amdzen5"
		}
	}
	return ""
}
