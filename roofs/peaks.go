package roofs

// fmaPipes describes a core's floating-point FMA pipes.
type fmaPipes struct {
	// FMAUnits is the number of FMA pipes per core.
	FMAUnits int
	// Bits is the width of each pipe's datapath; wider instructions are
	// split (Zen 4 runs a 512-bit FMA as two 256-bit halves).
	Bits int
	// Source names where the figures come from; every entry is marked
	// UNVERIFIED until checked against that source.
	Source   string
	Verified bool
}

// fpUnits is keyed by machine.Microarch names. Entries are the server parts;
// some client and low-end server SKUs of the same generation have fewer
// or narrower pipes (e.g. Xeon Bronze/Silver Skylake: one 512-bit FMA).
var fpUnits = map[string]fmaPipes{
	// Measured (Source; docs/roofs.md): Zen 5's 512-bit FMAs retire
	// twice the flops of 256-bit ones, a full-width datapath, unlike
	// Zen 4's two halves.
	"amdzen5": {FMAUnits: 2, Bits: 512, Verified: true,
		Source: "measured on an EPYC Zen 5 guest: AVX-512 FMA 112.7 GFLOP/s fp64 and 224.6 fp32, AVX2 fp32 111.7, on one thread"},
	"amdzen4":        {FMAUnits: 2, Bits: 256, Source: "AMD Zen 4 software optimization guide (UNVERIFIED)"},
	"amdzen3":        {FMAUnits: 2, Bits: 256, Source: "AMD Zen 3 software optimization guide (UNVERIFIED)"},
	"amdzen2":        {FMAUnits: 2, Bits: 256, Source: "AMD Zen 2 software optimization guide (UNVERIFIED)"},
	"amdzen1":        {FMAUnits: 2, Bits: 128, Source: "AMD Zen software optimization guide (UNVERIFIED)"},
	"haswell":        {FMAUnits: 2, Bits: 256, Source: "Intel optimization reference manual (UNVERIFIED)"},
	"haswellx":       {FMAUnits: 2, Bits: 256, Source: "Intel optimization reference manual (UNVERIFIED)"},
	"broadwell":      {FMAUnits: 2, Bits: 256, Source: "Intel optimization reference manual (UNVERIFIED)"},
	"broadwellx":     {FMAUnits: 2, Bits: 256, Source: "Intel optimization reference manual (UNVERIFIED)"},
	"skylake":        {FMAUnits: 2, Bits: 256, Source: "Intel optimization reference manual (UNVERIFIED)"},
	"skylakex":       {FMAUnits: 2, Bits: 512, Source: "Intel optimization reference manual, Gold/Platinum parts (UNVERIFIED)"},
	"cascadelakex":   {FMAUnits: 2, Bits: 512, Source: "Intel optimization reference manual, Gold/Platinum parts (UNVERIFIED)"},
	"icelakex":       {FMAUnits: 2, Bits: 512, Source: "Intel optimization reference manual (UNVERIFIED)"},
	"sapphirerapids": {FMAUnits: 2, Bits: 512, Source: "Intel optimization reference manual (UNVERIFIED)"},
	"emeraldrapids":  {FMAUnits: 2, Bits: 512, Source: "Intel optimization reference manual (UNVERIFIED)"},
	"graniterapids":  {FMAUnits: 2, Bits: 512, Source: "Intel optimization reference manual (UNVERIFIED)"},
}

// isaBits is the register width of each kernel ISA.
var isaBits = map[string]int{"scalar": 64, "sse": 128, "avx2": 256, "avx512": 512}

// precisionBits is the element width of each precision.
var precisionBits = map[string]int{"fp64": 64, "fp32": 32}

// TheoreticalGFlops is frequency × threads × SIMD lanes × FMA units × 2 for
// an FMA kernel of the given ISA and precision, with lanes limited by the
// pipes' width (scalar code uses one lane). It is 0 when the
// microarchitecture, ISA or precision is unknown, or for kernels without
// FMA, whose peak depends on how multiplies and adds share pipes.
func TheoreticalGFlops(u fmaPipes, ghz float64, threads int, isa, precision string, fma bool) float64 {
	ib, pb := isaBits[isa], precisionBits[precision]
	if !fma || u.FMAUnits == 0 || ib == 0 || pb == 0 {
		return 0
	}
	lanes := 1
	if isa != "scalar" {
		lanes = min(ib, u.Bits) / pb
	}
	return ghz * float64(threads) * float64(lanes) * float64(u.FMAUnits) * 2
}
