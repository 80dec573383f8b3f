package pmu

import (
	"fmt"

	"github.com/rprof/rprof/roofline"
)

// amdFP is one PMCx003 (retired SSE/AVX FLOPs) event. The count is already
// in FLOPs (a multiply-add counts 2), so the weight is 1. The kernel pairs
// the event with the merge event on the next counter, so it takes two of
// the six core counters.
func amdFP(name string, umask int, prec, unverified string) workSpec {
	return workSpec{
		Name:       name,
		Terms:      fmt.Sprintf("event=0x03,umask=0x%02x", umask),
		Flops:      1,
		Precision:  prec,
		Slots:      2,
		Source:     srcAMDJSON + " (fp_ret_sse_avx_ops), " + srcLIKWID,
		Unverified: unverified,
	}
}

// dfChannels lists the Zen 1-3 data-fabric "DRAM channel controller
// requests with data (64B)" events, channels from..to-1, reads and writes
// together. Channel n is event 0x07 + 0x40*n.
func dfChannels(n int, unverifiedFrom int, unverified string) []trafficSpec {
	var specs []trafficSpec
	for ch := range n {
		s := trafficSpec{
			PMU:       "amd_df",
			Name:      fmt.Sprintf("dram_channel_data_controller_%d", ch),
			Terms:     fmt.Sprintf("event=0x%02x,umask=0x38", 0x07+0x40*ch),
			Bytes:     64,
			Direction: Total,
			Source:    srcAMDJSON + " (amdzen3 data-fabric), " + srcLIKWID,
		}
		if ch >= unverifiedFrom {
			s.Unverified = unverified
		}
		specs = append(specs, s)
	}
	return specs
}

// dfBeats lists the Zen 4/5 data-fabric read and write beat events of 12
// channels: event 0x1F + 0x40*n with a read and a write umask.
func dfBeats(readName, writeName string, readUmask, writeUmask int, unverified string) []trafficSpec {
	var specs []trafficSpec
	for ch := range 12 {
		ev := 0x1f + 0x40*ch
		for _, d := range []struct {
			name  string
			umask int
			dir   string
		}{{readName, readUmask, Read}, {writeName, writeUmask, Write}} {
			specs = append(specs, trafficSpec{
				PMU:        "amd_df",
				Name:       fmt.Sprintf(d.name, ch),
				Terms:      fmt.Sprintf("event=0x%02x,umask=0x%03x", ev, d.umask),
				Bytes:      64,
				Direction:  d.dir,
				Source:     srcAMDJSON + " (data-fabric), " + srcLIKWID,
				Unverified: unverified,
			})
		}
	}
	return specs
}

// umcCAS counts DRAM CAS commands on each Zen 4/5 memory controller (one
// amd_umc_N PMU per active controller, numbered across sockets).
var umcCAS = trafficSet{Events: []trafficSpec{
	{PMU: "amd_umc", Name: "umc_cas_cmd.rd", Terms: "event=0x0a,rdwrmask=1", Bytes: 64, Direction: Read,
		Source: srcAMDUncore + " (amd_umc), " + srcAMDJSON + " (memory-controller)"},
	{PMU: "amd_umc", Name: "umc_cas_cmd.wr", Terms: "event=0x0a,rdwrmask=2", Bytes: 64, Direction: Write,
		Source: srcAMDUncore + " (amd_umc), " + srcAMDJSON + " (memory-controller)"},
}}

func amdEntries() []archSpec {
	const dfNote = "the data fabric has 4 counters for %d channel events: the kernel time-shares them, so each DRAM count is a scaled estimate"
	const erratum1291 = "AMD erratum 1291 (retire-based events may overcount on family 17h models 30h-3Fh) is known only from a third-party report; its effect on this event is unknown"
	zen2DF := dfChannels(8, 2, "Zen 2 DF events for channels 2-7 are not in the kernel's tables (LIKWID counts channels 0 and 1 only and scales by NUMA domains)")
	zen4DF := dfBeats("local_processor_read_data_beats_cs%d", "local_processor_write_data_beats_cs%d", 0x7fe, 0x7ff,
		"local-socket beats only: traffic to the other socket's memory is not counted")
	zen5DF := dfBeats("local_or_remote_socket_read_data_beats_dram_%d", "local_or_remote_socket_write_data_beats_dram_%d", 0xffe, 0xfff, "")
	return []archSpec{
		{Microarch: "amdzen1", Counters: 6, Work: []workSpec{
			amdFP("RETIRED_SSE_AVX_FLOPS_DOUBLE_ALL", 0xf0, roofline.Double, ""),
			amdFP("RETIRED_SSE_AVX_FLOPS_SINGLE_ALL", 0x0f, roofline.Single, ""),
		}, Traffic: []trafficSet{{
			Events: dfChannels(2, 0, "Zen 1 DF DRAM events come from LIKWID's event file only; channels beyond 0 and 1 are not counted"),
		}}},
		{Microarch: "amdzen2", Counters: 6, Work: []workSpec{
			amdFP("fp_ret_sse_avx_ops.all", 0xff, roofline.Mixed, erratum1291),
		}, Traffic: []trafficSet{{Events: zen2DF, Note: fmt.Sprintf(dfNote, len(zen2DF))}}},
		{Microarch: "amdzen3", Counters: 6, Work: []workSpec{
			amdFP("fp_ret_sse_avx_ops.all", 0xff, roofline.Mixed, ""),
		}, Traffic: []trafficSet{{Events: dfChannels(8, 8, ""), Note: fmt.Sprintf(dfNote, 8)}}},
		{Microarch: "amdzen4", Counters: 6, Work: []workSpec{
			amdFP("fp_ret_sse_avx_ops.all", 0x1f, roofline.Mixed, ""),
		}, Traffic: []trafficSet{umcCAS, {Events: zen4DF, Note: fmt.Sprintf(dfNote, len(zen4DF))}}},
		{Microarch: "amdzen5", Counters: 6, Work: []workSpec{
			amdFP("RETIRED_SSE_AVX_FLOPS_ALL_DP_SCALAR", 0x8f, roofline.Double, ""),
			amdFP("RETIRED_SSE_AVX_FLOPS_ALL_DP_PACKED", 0xaf, roofline.Double, ""),
			amdFP("RETIRED_SSE_AVX_FLOPS_ALL_SP_SCALAR", 0x4f, roofline.Single, ""),
			amdFP("RETIRED_SSE_AVX_FLOPS_ALL_SP_PACKED", 0x6f, roofline.Single, ""),
		}, Traffic: []trafficSet{umcCAS, {Events: zen5DF, Note: fmt.Sprintf(dfNote, len(zen5DF))}}},
	}
}
