package pmu

import (
	"fmt"

	"github.com/rprof/rprof/roofline"
)

// fpArith lists FP_ARITH_INST_RETIRED (or, on Lion Cove, its renamed twin
// FP_ARITH_OPS_RETIRED) for core, doubles first so that a group holds one
// precision where it can. The weights already count an FMA twice.
func fpArith(core, name string, with512 bool) []workSpec {
	type w struct {
		suffix string
		umask  int
		flops  float64
		prec   string
	}
	ws := []w{
		{"SCALAR_DOUBLE", 0x01, 1, roofline.Double},
		{"128B_PACKED_DOUBLE", 0x04, 2, roofline.Double},
		{"256B_PACKED_DOUBLE", 0x10, 4, roofline.Double},
		{"512B_PACKED_DOUBLE", 0x40, 8, roofline.Double},
		{"SCALAR_SINGLE", 0x02, 1, roofline.Single},
		{"128B_PACKED_SINGLE", 0x08, 4, roofline.Single},
		{"256B_PACKED_SINGLE", 0x20, 8, roofline.Single},
		{"512B_PACKED_SINGLE", 0x80, 16, roofline.Single},
	}
	var specs []workSpec
	for _, e := range ws {
		if !with512 && e.umask >= 0x40 {
			continue
		}
		specs = append(specs, workSpec{
			Core:      core,
			Name:      name + "." + e.suffix,
			Terms:     fmt.Sprintf("event=0xc7,umask=0x%02x", e.umask),
			Flops:     e.flops,
			Precision: e.prec,
			Source:    srcPerfmon + " (" + name + "; FMA counts twice)",
		})
	}
	return specs
}

// fp16Arith lists FP_ARITH_INST_RETIRED2, the FP16 events of Sapphire Rapids
// and later, weighted as Intel's FLOP metric weights them.
func fp16Arith(microarch string) []workSpec {
	unverified := "FP16 weights are Intel's metric weights; whether an FP16 FMA counts twice is not documented"
	if microarch == "graniterapids" {
		unverified += "; Intel's Granite Rapids FLOP metric leaves these events out"
	}
	ws := []struct {
		suffix string
		umask  int
		flops  float64
	}{
		{"SCALAR_HALF", 0x01, 1},
		{"COMPLEX_SCALAR_HALF", 0x02, 2},
		{"128B_PACKED_HALF", 0x04, 8},
		{"256B_PACKED_HALF", 0x08, 16},
		{"512B_PACKED_HALF", 0x10, 32},
	}
	var specs []workSpec
	for _, e := range ws {
		specs = append(specs, workSpec{
			Name:       "FP_ARITH_INST_RETIRED2." + e.suffix,
			Terms:      fmt.Sprintf("event=0xcf,umask=0x%02x", e.umask),
			Flops:      e.flops,
			Precision:  roofline.Half,
			Source:     srcPerfmon + " (FP_ARITH_INST_RETIRED2, Info_Core_FLOPc metric weights)",
			Unverified: unverified,
		})
	}
	return specs
}

// fpFlopsRetired lists the E-core (Crestmont, Skymont) FP_FLOPS_RETIRED
// events, already in FLOPs.
func fpFlopsRetired(core string) []workSpec {
	const unverified = "whether FP_FLOPS_RETIRED counts an FMA as 2 FLOPs is not documented (\"default weighting\")"
	return []workSpec{
		{Core: core, Name: "FP_FLOPS_RETIRED.FP64", Terms: "event=0xc8,umask=0x01", Flops: 1,
			Precision: roofline.Double, Source: srcPerfmon, Unverified: unverified},
		{Core: core, Name: "FP_FLOPS_RETIRED.FP32", Terms: "event=0xc8,umask=0x02", Flops: 1,
			Precision: roofline.Single, Source: srcPerfmon, Unverified: unverified},
	}
}

// Intel DRAM-traffic sets, one per memory-controller generation.
var (
	// Haswell-EP to Cascade Lake: uncore_imc_N CAS counts.
	imcHSX = trafficSet{Events: []trafficSpec{
		{PMU: "uncore_imc", Name: "cas_count_read", Aliases: []string{"cas_count_read"},
			Terms: "event=0x04,umask=0x03", Bytes: casBytes, Direction: Read, Source: srcUncoreSNB + " (hswep_uncore_imc_events)"},
		{PMU: "uncore_imc", Name: "cas_count_write", Aliases: []string{"cas_count_write"},
			Terms: "event=0x04,umask=0x0c", Bytes: casBytes, Direction: Write, Source: srcUncoreSNB + " (hswep_uncore_imc_events)"},
	}}
	// Ice Lake-SP: kernels before the CAS fix (96fd2e89fba1) alias the
	// Haswell umasks, which are wrong here; the alias check catches that.
	imcICX = trafficSet{Events: []trafficSpec{
		{PMU: "uncore_imc", Name: "cas_count_read", Aliases: []string{"cas_count_read"},
			Terms: "event=0x04,umask=0x0f", Bytes: casBytes, Direction: Read, Source: srcUncoreSNB + " (snr_uncore_imc_events), Intel Xeon 3rd gen uncore manual"},
		{PMU: "uncore_imc", Name: "cas_count_write", Aliases: []string{"cas_count_write"},
			Terms: "event=0x04,umask=0x30", Bytes: casBytes, Direction: Write, Source: srcUncoreSNB + " (snr_uncore_imc_events), Intel Xeon 3rd gen uncore manual"},
	}}
	imcSPR = trafficSet{Events: []trafficSpec{
		{PMU: "uncore_imc", Name: "cas_count_read", Aliases: []string{"cas_count_read"},
			Terms: "event=0x05,umask=0xcf", Bytes: casBytes, Direction: Read, Source: srcUncoreSNB + " (spr_uncore_imc_events)",
			Missing: "this kernel predates the Sapphire Rapids CAS aliases; rprof encodes UNC_M_CAS_COUNT.RD itself"},
		{PMU: "uncore_imc", Name: "cas_count_write", Aliases: []string{"cas_count_write"},
			Terms: "event=0x05,umask=0xf0", Bytes: casBytes, Direction: Write, Source: srcUncoreSNB + " (spr_uncore_imc_events)",
			Missing: "this kernel predates the Sapphire Rapids CAS aliases; rprof encodes UNC_M_CAS_COUNT.WR itself"},
	}}
	// Granite Rapids, Sierra Forest, Grand Ridge: two schedulers per
	// channel, both must be summed. Older kernels name only scheduler 0
	// (as cas_count_read/write).
	imcGNR = trafficSet{Events: []trafficSpec{
		{PMU: "uncore_imc", Name: "cas_count_read_sch0", Aliases: []string{"cas_count_read_sch0", "cas_count_read"},
			Terms: "event=0x05,umask=0xcf", Bytes: casBytes, Direction: Read, Source: srcUncoreSNB + " (gnr per-scheduler CAS events)"},
		{PMU: "uncore_imc", Name: "cas_count_read_sch1", Aliases: []string{"cas_count_read_sch1"},
			Terms: "event=0x06,umask=0xcf", Bytes: casBytes, Direction: Read, Source: srcUncoreSNB + " (gnr per-scheduler CAS events)",
			Missing: "this kernel's cas_count_read counts scheduler 0 only (before kernel commit 6a8a48644c4b); rprof adds scheduler 1 (event=0x06) itself"},
		{PMU: "uncore_imc", Name: "cas_count_write_sch0", Aliases: []string{"cas_count_write_sch0", "cas_count_write"},
			Terms: "event=0x05,umask=0xf0", Bytes: casBytes, Direction: Write, Source: srcUncoreSNB + " (gnr per-scheduler CAS events)"},
		{PMU: "uncore_imc", Name: "cas_count_write_sch1", Aliases: []string{"cas_count_write_sch1"},
			Terms: "event=0x06,umask=0xf0", Bytes: casBytes, Direction: Write, Source: srcUncoreSNB + " (gnr per-scheduler CAS events)",
			Missing: "this kernel's cas_count_write counts scheduler 0 only (before kernel commit 6a8a48644c4b); rprof adds scheduler 1 (event=0x06) itself"},
	}}
	// Client parts with the single Sandy Bridge style IMC box.
	imcClient = trafficSet{Events: []trafficSpec{
		{PMU: "uncore_imc", Name: "data_reads", Aliases: []string{"data_reads"},
			Terms: "event=0x01", Bytes: casBytes, Direction: Read, Source: srcUncoreCli + " (snb_uncore_imc_events)"},
		{PMU: "uncore_imc", Name: "data_writes", Aliases: []string{"data_writes"},
			Terms: "event=0x02", Bytes: casBytes, Direction: Write, Source: srcUncoreCli + " (snb_uncore_imc_events)"},
	}}
	// Tiger Lake and later clients: free-running counters, one PMU per
	// memory controller.
	imcFreeRunning = trafficSet{Events: []trafficSpec{
		{PMU: "uncore_imc_free_running", Name: "data_read", Aliases: []string{"data_read"},
			Terms: "event=0xff,umask=0x20", Bytes: casBytes, Direction: Read, Source: srcUncoreCli + " (tgl_uncore_imc_events)"},
		{PMU: "uncore_imc_free_running", Name: "data_write", Aliases: []string{"data_write"},
			Terms: "event=0xff,umask=0x30", Bytes: casBytes, Direction: Write, Source: srcUncoreCli + " (tgl_uncore_imc_events)"},
	}}
)

// unverifiedSet returns set with every event marked unverified for why.
func unverifiedSet(set trafficSet, why string) trafficSet {
	out := trafficSet{Note: set.Note}
	for _, e := range set.Events {
		e.Unverified = why
		out.Events = append(out.Events, e)
	}
	return out
}

func intelEntries() []archSpec {
	noFPArith := Problem{
		Code:         "no-work-event",
		What:         "this core has no FP_ARITH_INST_RETIRED event; its only FP-ish counts (AVX_INSTS) cannot tell precision, scalar work or FMA apart",
		Fix:          "count on a Broadwell or newer machine",
		AnalyticWork: true,
	}
	gracemont := Problem{
		Code: ProblemECoreUnmeasured,
		What: "the E-cores (cpu_atom, Gracemont) have no FP arithmetic event: work done on them is not counted",
		Fix:  "pin the program to the P-cores (taskset -c <cpu_core cpus>) so that all its work is counted",
	}
	const clientHSW = "the client IMC aliases of Haswell and Broadwell are assumed to match Skylake's (same driver); not checked against a capture"
	return []archSpec{
		{Microarch: "haswell", NoWork: []Problem{noFPArith}, Counters: 4, CountersNoSMT: 8,
			Traffic: []trafficSet{unverifiedSet(imcClient, clientHSW)}},
		{Microarch: "haswellx", NoWork: []Problem{noFPArith}, Counters: 4, CountersNoSMT: 8,
			Traffic: []trafficSet{imcHSX}},
		{Microarch: "broadwell", Work: fpArith(coreAny, "FP_ARITH_INST_RETIRED", false), Counters: 4, CountersNoSMT: 8,
			Traffic: []trafficSet{unverifiedSet(imcClient, clientHSW)}},
		{Microarch: "broadwellx", Work: fpArith(coreAny, "FP_ARITH_INST_RETIRED", false), Counters: 4, CountersNoSMT: 8,
			Traffic: []trafficSet{imcHSX}},
		{Microarch: "broadwellde", Work: fpArith(coreAny, "FP_ARITH_INST_RETIRED", false), Counters: 4, CountersNoSMT: 8,
			Traffic: []trafficSet{unverifiedSet(imcHSX, "Broadwell-DE is assumed to use the Broadwell-EP IMC events")}},
		{Microarch: "skylake", Work: fpArith(coreAny, "FP_ARITH_INST_RETIRED", false), Counters: 4, CountersNoSMT: 8,
			Traffic: []trafficSet{imcClient}},
		{Microarch: "skylakex", Work: fpArith(coreAny, "FP_ARITH_INST_RETIRED", true), Counters: 4, CountersNoSMT: 8,
			Traffic: []trafficSet{imcHSX}},
		{Microarch: "cascadelakex", Work: fpArith(coreAny, "FP_ARITH_INST_RETIRED", true), Counters: 4, CountersNoSMT: 8,
			Traffic: []trafficSet{imcHSX}},
		{Microarch: "icelake", Work: fpArith(coreAny, "FP_ARITH_INST_RETIRED", true), Counters: 8,
			Traffic: []trafficSet{imcClient}},
		{Microarch: "rocketlake", Work: fpArith(coreAny, "FP_ARITH_INST_RETIRED", true), Counters: 8,
			Traffic: []trafficSet{imcClient}},
		{Microarch: "tigerlake", Work: fpArith(coreAny, "FP_ARITH_INST_RETIRED", true), Counters: 8,
			Traffic: []trafficSet{imcFreeRunning}},
		{Microarch: "icelakex", Work: fpArith(coreAny, "FP_ARITH_INST_RETIRED", true), Counters: 8,
			Traffic: []trafficSet{imcICX}},
		{Microarch: "sapphirerapids", Work: append(fpArith(coreAny, "FP_ARITH_INST_RETIRED", true), fp16Arith("sapphirerapids")...), Counters: 8,
			Traffic: []trafficSet{imcSPR}},
		{Microarch: "emeraldrapids", Work: append(fpArith(coreAny, "FP_ARITH_INST_RETIRED", true), fp16Arith("emeraldrapids")...), Counters: 8,
			Traffic: []trafficSet{imcSPR}},
		{Microarch: "graniterapids", Work: append(fpArith(coreAny, "FP_ARITH_INST_RETIRED", true), fp16Arith("graniterapids")...), Counters: 8,
			Traffic: []trafficSet{imcGNR}},
		// E-core Xeons: the core PMU is "cpu" and only the two FLOP events
		// are needed, so no counter limit is recorded.
		{Microarch: "sierraforest", Work: fpFlopsRetired(coreAny), Traffic: []trafficSet{imcGNR}},
		{Microarch: "grandridge", Work: fpFlopsRetired(coreAny), Traffic: []trafficSet{imcGNR}},
		{Microarch: "alderlake", Work: fpArith(coreP, "FP_ARITH_INST_RETIRED", false), NoWork: []Problem{gracemont}, Counters: 8,
			Traffic: []trafficSet{imcFreeRunning}},
		{Microarch: "alderlaken", NoWork: []Problem{{
			Code:         "no-work-event",
			What:         "Alder Lake-N has only Gracemont E-cores, which have no FP arithmetic event",
			AnalyticWork: true,
		}}, Traffic: []trafficSet{unverifiedSet(imcFreeRunning, "Alder Lake-N is assumed to expose the Alder Lake free-running IMC counters")}},
		{Microarch: "meteorlake", Work: append(fpArith(coreP, "FP_ARITH_INST_RETIRED", false), fpFlopsRetired(coreE)...), Counters: 8,
			Traffic: []trafficSet{unverifiedSet(imcFreeRunning, "which IMC PMU the kernel exposes on Meteor Lake is not verified")}},
		{Microarch: "lunarlake", Work: append(fpArith(coreP, "FP_ARITH_OPS_RETIRED", false), fpFlopsRetired(coreE)...), Counters: 10,
			Traffic: []trafficSet{imcFreeRunning}},
		{Microarch: "arrowlake", Work: append(append(fpArith(coreP, "FP_ARITH_OPS_RETIRED", false), fpFlopsRetired(coreE)...), fpFlopsRetired(coreLowPower)...), Counters: 10,
			Traffic: []trafficSet{unverifiedSet(imcFreeRunning, "which IMC PMU the kernel exposes on Arrow Lake is not verified")}},
	}
}
