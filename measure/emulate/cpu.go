package emulate

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/rprof/rprof/machine"
)

// CPU is the processor QEMU presents to the target: the value of QEMU's
// -cpu option and what it means. Libraries that choose their kernels at
// run time (OpenBLAS, BLIS, oneDNN, numpy) read the vendor, family and
// model from CPUID, so the host's identity makes them take the code path
// nearest the native one that QEMU can run.
type CPU struct {
	// Option is QEMU's -cpu value, e.g.
	// "max,vendor=GenuineIntel,family=6,model=85,stepping=7,model-id=...".
	Option string
	// Vendor, Family, Model, Stepping and Brand are the identity the target
	// reads (empty and zero for a named QEMU model, whose own they are).
	Vendor                  string
	Family, Model, Stepping int
	Brand                   string
	// Source is "host" (the host's identity on QEMU's max model) or "flag"
	// (a QEMU model named by the user).
	Source string
	// Off lists the QEMU features turned off because the host lacks them
	// (QEMU names).
	Off []string
	// NotEmulated lists the host's vector features that no QEMU release's
	// TCG emulates (cpuinfo names): where the native run may take wider
	// paths than the counted one.
	NotEmulated []string
}

// hostFeatures maps the cpuinfo flags that runtime dispatch tests to the
// names of the QEMU properties that turn them off. QEMU's max model offers
// all of them; a host without one gets it turned off, so that no library
// takes a path under emulation that it could not take natively.
var hostFeatures = []struct{ cpuinfo, qemu string }{
	{"pni", "pni"}, {"ssse3", "ssse3"}, {"sse4_1", "sse4.1"}, {"sse4_2", "sse4.2"},
	{"popcnt", "popcnt"}, {"avx", "avx"}, {"avx2", "avx2"}, {"fma", "fma"}, {"f16c", "f16c"},
	{"bmi1", "bmi1"}, {"bmi2", "bmi2"}, {"movbe", "movbe"}, {"aes", "aes"},
	{"pclmulqdq", "pclmulqdq"}, {"sha_ni", "sha-ni"}, {"adx", "adx"}, {"abm", "abm"},
	{"sse4a", "sse4a"},
}

// notEmulable are the prefixes of cpuinfo flags of vector extensions that
// QEMU's TCG does not emulate in any release (AVX-512, AMX).
var notEmulable = []string{"avx512", "amx"}

// HostCPU is the host's identity on QEMU's max model (every feature TCG
// emulates), less the features the host lacks. An arm64 host gets QEMU's
// max model as it is; an x86 one whose vendor or family is unknown keeps
// QEMU's identity.
func HostCPU(cpu machine.CPUInfo) CPU {
	if cpu.Arm {
		return CPU{Option: "max", Source: "qemu max (the host is not x86)"}
	}
	c := CPU{Source: "host"}
	parts := []string{"max"}
	if len(cpu.Vendor) == 12 && cpu.Family > 0 {
		c.Vendor, c.Family, c.Model, c.Stepping = cpu.Vendor, cpu.Family, cpu.Model, cpu.Stepping
		parts = append(parts, "vendor="+c.Vendor, "family="+strconv.Itoa(c.Family),
			"model="+strconv.Itoa(c.Model), "stepping="+strconv.Itoa(c.Stepping))
		// QEMU's option syntax has no escape for a comma in a value, and
		// model-id holds at most 48 bytes.
		c.Brand = strings.Join(strings.Fields(strings.ReplaceAll(cpu.ModelName, ",", " ")), " ")
		if len(c.Brand) > 48 {
			c.Brand = strings.TrimSpace(c.Brand[:48])
		}
	}
	if len(cpu.Flags) > 0 {
		for _, f := range hostFeatures {
			if !cpu.HasFlag(f.cpuinfo) {
				c.Off = append(c.Off, f.qemu)
				parts = append(parts, f.qemu+"=off")
			}
		}
	}
	for _, f := range cpu.Flags {
		if slices.ContainsFunc(notEmulable, func(p string) bool { return strings.HasPrefix(f, p) }) {
			c.NotEmulated = append(c.NotEmulated, f)
		}
	}
	if c.Brand != "" {
		parts = append(parts, "model-id="+c.Brand)
	}
	c.Option = strings.Join(parts, ",")
	return c
}

// UnknownCPUError is a CPU model the QEMU does not list, with those it
// does.
type UnknownCPUError struct {
	Name  string
	Known []string
}

func (e *UnknownCPUError) Error() string {
	return fmt.Sprintf("unknown QEMU CPU model %q: want host (the default) or one of %s", e.Name, strings.Join(e.Known, ", "))
}

// NamedCPU is QEMU's model name for the target, checked against the list
// `qemu-x86_64 -cpu help` printed (helpText). Errors: *UnknownCPUError.
func NamedCPU(name, helpText string) (CPU, error) {
	known := CPUModels(helpText)
	if !slices.Contains(known, name) || strings.ContainsAny(name, ",=") {
		return CPU{}, &UnknownCPUError{Name: name, Known: known}
	}
	return CPU{Option: name, Source: "flag"}, nil
}

// CPUModels lists the x86 models in the output of `qemu-x86_64 -cpu help`,
// in its order: the "Available CPUs:" list, whose lines are "x86 NAME
// description" (QEMU 7.2) or "  NAME description" (QEMU 10).
func CPUModels(helpText string) []string {
	var out []string
	listing := false
	for _, line := range strings.Split(helpText, "\n") {
		f := strings.Fields(line)
		switch {
		case strings.HasPrefix(line, "Available CPUs"):
			listing = true
		case !listing:
		case len(f) == 0 || !strings.HasPrefix(line, " ") && f[0] != "x86":
			listing = false
		case f[0] == "x86" && len(f) >= 2:
			out = append(out, f[1])
		default:
			out = append(out, f[0])
		}
	}
	return out
}

// String describes c for flags and the summary.
func (c CPU) String() string {
	if c.Vendor == "" {
		return "QEMU model " + c.Option
	}
	s := fmt.Sprintf("%s family %d model %d stepping %d", c.Vendor, c.Family, c.Model, c.Stepping)
	if c.Brand != "" {
		s += fmt.Sprintf(" (%s)", c.Brand)
	}
	return s + " on QEMU's max feature set"
}

// NotEmulatedSummary names the host's features QEMU cannot present, the
// first three and how many more ("" when none).
func (c CPU) NotEmulatedSummary() string {
	n := c.NotEmulated
	if len(n) <= 3 {
		return strings.Join(n, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(n[:3], ", "), len(n)-3)
}
