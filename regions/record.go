package regions

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/rprof/rprof/pmu"
)

// The record every probe writes to the ring buffer, little-endian, at
// these byte offsets: the layout the eBPF programs store and DecodeRecord
// reads.
const (
	offTime     = 0  // u64 bpf_ktime_get_ns (CLOCK_MONOTONIC)
	offPidTgid  = 8  // u64 tgid<<32 | tid
	offCookie   = 16 // u64 the attach cookie: the region's index
	offSP       = 24 // u64 the user stack pointer
	offCPU      = 32 // u32 the CPU the probe ran on
	offKind     = 36 // u32 a RecordKind
	offCounters = 40 // MaxCounters x {u64 value, u64 enabled, u64 running}

	counterSize = 24
	// tagSize bounds a LIKWID marker's tag, stored after the counters.
	tagSize = 64
)

// MaxCounters is the most per-CPU counters read at each probe.
const MaxCounters = 8

// RecordKind is what a probe recorded.
type RecordKind uint32

const (
	Entry RecordKind = iota
	Exit
	StartMarker
	StopMarker
)

// recordSize is the size of a record with n counters, and a tag when
// marker is set.
func recordSize(n int, marker bool) int {
	s := offCounters + counterSize*n
	if marker {
		s += tagSize
	}
	return s
}

// Record is one probe hit.
type Record struct {
	// Time is CLOCK_MONOTONIC in nanoseconds.
	Time      uint64
	TGID, TID uint32
	// Region is the index of the probe's region (the attach cookie).
	Region uint64
	// SP is the user stack pointer at the probe (0 where unknown): it
	// tells a return from a frame abandoned by longjmp. For a marker it is
	// the tag's address.
	SP   uint64
	CPU  uint32
	Kind RecordKind
	// Counts are the per-CPU counters' cumulative readings on CPU; a
	// reading that failed has Enabled 0.
	Counts []pmu.Count
	// Tag is a LIKWID marker's region tag.
	Tag string
}

// DecodeRecord reads one record of a probe reading n counters.
func DecodeRecord(b []byte, n int) (Record, error) {
	if len(b) < recordSize(n, false) {
		return Record{}, fmt.Errorf("regions: record of %d bytes, want %d", len(b), recordSize(n, false))
	}
	le := binary.LittleEndian
	pt := le.Uint64(b[offPidTgid:])
	r := Record{
		Time: le.Uint64(b[offTime:]), TGID: uint32(pt >> 32), TID: uint32(pt),
		Region: le.Uint64(b[offCookie:]), SP: le.Uint64(b[offSP:]),
		CPU: le.Uint32(b[offCPU:]), Kind: RecordKind(le.Uint32(b[offKind:])),
	}
	for i := range n {
		c := b[offCounters+counterSize*i:]
		r.Counts = append(r.Counts, pmu.Count{Raw: le.Uint64(c), Enabled: le.Uint64(c[8:]), Running: le.Uint64(c[16:])})
	}
	if r.Kind == StartMarker || r.Kind == StopMarker {
		if len(b) < recordSize(n, true) {
			return Record{}, fmt.Errorf("regions: marker record of %d bytes, want %d", len(b), recordSize(n, true))
		}
		tag := b[recordSize(n, false):recordSize(n, true)]
		if i := bytes.IndexByte(tag, 0); i >= 0 {
			tag = tag[:i]
		}
		r.Tag = string(tag)
	}
	return r, nil
}
