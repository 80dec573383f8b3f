package machine

import (
	"fmt"
	"slices"
	"strings"

	"github.com/rprof/rprof/roofline"
)

// Sources of a microarchitecture (Identity.Source).
const (
	// IdentityModel: the vendor, family and model, as perf's mapfile.csv
	// keys them (or the arm64 MIDR part).
	IdentityModel = "model"
	// IdentityFeatures: the feature flags, where the model is unknown or
	// names a microarchitecture that cannot have them (a hypervisor's
	// made-up model). The class is a lower bound: the oldest one with
	// those features.
	IdentityFeatures = roofline.MicroarchFromFeatures
)

// Identity is the microarchitecture rprof takes a CPU for, and on what
// grounds.
type Identity struct {
	// Microarch is perf's event directory name ("sapphirerapids",
	// "amdzen4"), "" when unknown.
	Microarch string
	// Source is IdentityModel or IdentityFeatures ("" when unknown).
	Source string
	// Note says why the features won over the model; "" when the model
	// was taken.
	Note string
}

// Inferred reports whether the microarchitecture was inferred from the
// features rather than read from the model.
func (id Identity) Inferred() bool { return id.Source == IdentityFeatures }

// featureClass is a microarchitecture class that some feature flags prove:
// the hardware has them (a hypervisor can hide features, never add ones the
// host lacks), so a model that cannot have them is not the hardware's.
type featureClass struct {
	vendor string
	// family, when not 0, is the only family the flags identify the class
	// in.
	family int
	flags  []string
	// microarch is the oldest class with all of flags; holders the
	// classes the model may name that have them too.
	microarch string
	holders   []string
	// class names the lower bound in words.
	class string
}

// featureClasses are tried in order, the newest first. The flags are
// cpuinfo's names of CPUID bits (the kernel's cpufeatures.h); which parts
// have them is from Intel's ISA extensions reference (AMX and AVX512_FP16
// from Sapphire Rapids, AMX_FP16 from Granite Rapids) and AMD's
// processor programming references (in family 19h, AVX-512 on the Zen 4
// models only). Only classes whose members share their FMA pipes are
// listed: AVX-512 alone on Intel spans client parts with one 512-bit FMA and
// servers with two, so it identifies nothing.
var featureClasses = []featureClass{
	{vendor: "GenuineIntel", flags: []string{"amx_fp16", "amx_tile"}, microarch: "graniterapids",
		holders: []string{"graniterapids"}, class: "Granite Rapids or later"},
	{vendor: "GenuineIntel", flags: []string{"amx_tile", "avx512_fp16"}, microarch: "sapphirerapids",
		holders: []string{"sapphirerapids", "emeraldrapids", "graniterapids"}, class: "Sapphire Rapids or later"},
	{vendor: "AuthenticAMD", family: 0x19, flags: []string{"avx512f"}, microarch: "amdzen4",
		holders: []string{"amdzen4"}, class: "Zen 4 (AVX-512 in family 19h)"},
}

// Identify names c's microarchitecture. The family and model decide, as
// they key perf's tables, unless c's feature flags prove a class the
// model's microarchitecture cannot be (or the model is not in rprof's
// tables): then the features do, and Note says why.
func Identify(c CPUInfo) Identity {
	byModel := modelMicroarch(c)
	for _, fc := range featureClasses {
		if c.Arm || c.Vendor != fc.vendor || fc.family != 0 && c.Family != fc.family || !hasAll(c, fc.flags) {
			continue
		}
		if slices.Contains(fc.holders, byModel) {
			break
		}
		flags := strings.Join(fc.flags, " and ")
		note := fmt.Sprintf("family %d model %#x is not in rprof's tables; its features (%s) make it %s", c.Family, c.Model, flags, fc.class)
		if byModel != "" {
			note = fmt.Sprintf("family %d model %#x reads as %s, which has no %s: the features win (%s), the model is likely a hypervisor's", c.Family, c.Model, byModel, flags, fc.class)
		}
		return Identity{Microarch: fc.microarch, Source: IdentityFeatures, Note: note}
	}
	if byModel == "" {
		return Identity{}
	}
	return Identity{Microarch: byModel, Source: IdentityModel}
}

func hasAll(c CPUInfo, flags []string) bool {
	for _, f := range flags {
		if !c.HasFlag(f) {
			return false
		}
	}
	return true
}
