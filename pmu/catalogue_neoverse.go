package pmu

import "github.com/rprof/rprof/roofline"

// armFP are the Armv8.x FP operation counts of Neoverse V1, N2 and V2:
// FP_FIXED_OPS_SPEC (scalar and Advanced SIMD) and FP_SCALE_OPS_SPEC (SVE).
// Both are speculative and do not split precisions.
var armFP = []workSpec{
	{Name: "FP_FIXED_OPS_SPEC", Terms: "event=0x80c1", Flops: 1, Precision: roofline.Mixed, Source: srcArmJSON + " (fp_operation), " + srcLIKWID,
		Unverified: "speculative count: operations on mispredicted paths are included"},
	{Name: "FP_SCALE_OPS_SPEC", Terms: "event=0x80c0", Flops: 1, Precision: roofline.Mixed, Source: srcArmJSON + " (fp_operation), " + srcLIKWID,
		Unverified: "speculative count, and whether it must be multiplied by VL/128 on cores with SVE vectors wider than 128 bits is not confirmed"},
}

func armEntries() []archSpec {
	noDRAM := &Problem{
		Code: ProblemNoTrafficPMU,
		What: "DRAM traffic on Arm servers is counted by SoC-specific PMUs, for which rprof has no table",
		Fix:  "count Q analytically",
	}
	return []archSpec{
		{Microarch: "neoverse-v1", Work: armFP, NoTraffic: noDRAM},
		{Microarch: "neoverse-n2-v2", Work: armFP, NoTraffic: noDRAM},
	}
}
