package regions

import (
	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
)

// bpfCurrentCPU is BPF_F_CURRENT_CPU: read the perf event array's entry of
// the CPU the program runs on.
const bpfCurrentCPU = 0xffffffff

// programMaps are the maps a probe program writes to.
type programMaps struct {
	ring *ebpf.Map
	// lost counts, per region index, records the ring buffer had no room
	// for.
	lost *ebpf.Map
	// counters holds one perf event array per counter, indexed by CPU.
	counters []*ebpf.Map
}

// program builds the probe program for one kind of record: it fills a
// record (see the off* constants) on its stack and copies it to the ring
// buffer. Entries read the clock last and returns first, so that the
// programs' own time stays out of the window between them; counters are
// read next to the clock for the same reason.
func program(kind RecordKind, m programMaps) asm.Instructions {
	marker := kind == StartMarker || kind == StopMarker
	size := recordSize(len(m.counters), marker)
	base := int16(-size)
	keyOff := base - 8 // the lost map's key
	at := func(off int) int16 { return base + int16(off) }

	clock := asm.Instructions{
		asm.FnKtimeGetNs.Call(),
		asm.StoreMem(asm.RFP, at(offTime), asm.R0, asm.DWord),
	}
	var counters asm.Instructions
	for i, cm := range m.counters {
		counters = append(counters,
			asm.LoadMapPtr(asm.R1, cm.FD()),
			asm.LoadImm(asm.R2, bpfCurrentCPU, asm.DWord),
			asm.Mov.Reg(asm.R3, asm.RFP),
			asm.Add.Imm(asm.R3, int32(at(offCounters+counterSize*i))),
			asm.Mov.Imm(asm.R4, counterSize),
			// On failure the helper zeroes the slot: Enabled 0 marks it.
			asm.FnPerfEventReadValue.Call(),
		)
	}
	first, last := counters, clock
	if kind == Exit || kind == StopMarker {
		first, last = clock, counters
	}

	ins := asm.Instructions{asm.Mov.Reg(asm.R6, asm.R1)}
	ins = append(ins, first...)
	ins = append(ins,
		asm.FnGetCurrentPidTgid.Call(),
		asm.StoreMem(asm.RFP, at(offPidTgid), asm.R0, asm.DWord),
		asm.Mov.Reg(asm.R1, asm.R6),
		asm.FnGetAttachCookie.Call(),
		asm.StoreMem(asm.RFP, at(offCookie), asm.R0, asm.DWord),
		asm.LoadMem(asm.R1, asm.R6, regsSP, asm.DWord),
	)
	if marker {
		// A marker records its tag's address instead: user space reads the
		// tag from the process when the page was not yet faulted in.
		ins = append(ins[:len(ins)-1], asm.LoadMem(asm.R1, asm.R6, regsArg0, asm.DWord))
	}
	if kind == Exit && retPop != 0 {
		// Store the pointer as it was at entry, so that entry and return
		// of one call carry the same value.
		ins = append(ins, asm.Sub.Imm(asm.R1, retPop))
	}
	ins = append(ins,
		asm.StoreMem(asm.RFP, at(offSP), asm.R1, asm.DWord),
		asm.FnGetSmpProcessorId.Call(),
		asm.StoreMem(asm.RFP, at(offCPU), asm.R0, asm.Word),
		asm.StoreImm(asm.RFP, at(offKind), int64(kind), asm.Word),
	)
	if marker {
		ins = append(ins,
			asm.Mov.Reg(asm.R1, asm.RFP),
			asm.Add.Imm(asm.R1, int32(at(recordSize(len(m.counters), false)))),
			asm.Mov.Imm(asm.R2, tagSize),
			asm.LoadMem(asm.R3, asm.R6, regsArg0, asm.DWord),
			// On failure the helper zeroes the buffer: an empty tag.
			asm.FnProbeReadUserStr.Call(),
		)
	}
	ins = append(ins, last...)
	ins = append(ins,
		asm.LoadMapPtr(asm.R1, m.ring.FD()),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, int32(base)),
		asm.Mov.Imm(asm.R3, int32(size)),
		asm.Mov.Imm(asm.R4, 0),
		asm.FnRingbufOutput.Call(),
		asm.JEq.Imm(asm.R0, 0, "out"),
		// No room: count the loss against the region.
		asm.LoadMem(asm.R1, asm.RFP, at(offCookie), asm.DWord),
		asm.StoreMem(asm.RFP, keyOff, asm.R1, asm.Word),
		asm.LoadMapPtr(asm.R1, m.lost.FD()),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, int32(keyOff)),
		asm.FnMapLookupElem.Call(),
		asm.JEq.Imm(asm.R0, 0, "out"),
		asm.Mov.Imm(asm.R1, 1),
		asm.StoreXAdd(asm.R0, asm.R1, asm.DWord),
		asm.Mov.Imm(asm.R0, 0).WithSymbol("out"),
		asm.Return(),
	)
	return ins
}
