package regions

import (
	"errors"
	"fmt"
)

var (
	// ErrNotSupported: this kernel, architecture or OS cannot probe
	// regions (no eBPF, no uprobes, no attach cookies).
	ErrNotSupported = errors.New("regions not supported here")
	// ErrPermission: loading eBPF programs or attaching uprobes was
	// refused for want of privileges.
	ErrPermission = errors.New("permission denied")
)

// MaxRegions is how many function regions one run can probe: the size of
// the map counting each region's lost records.
const MaxRegions = 256

// TooManyRegionsError is a request for more regions than MaxRegions.
type TooManyRegionsError struct{ N int }

func (e *TooManyRegionsError) Error() string {
	return fmt.Sprintf("regions: %d regions asked for, at most %d fit the probes' maps", e.N, MaxRegions)
}

// Result is what a probed run gave.
type Result struct {
	// Regions are the function regions in the order given, then the LIKWID
	// marker regions in the order their tags first appeared.
	Regions []Stats
	// Lost counts records dropped because the ring buffer was full, by
	// region (function regions only; markers count under Markers).
	Lost []uint64
	// LostMarkers counts dropped marker records.
	LostMarkers uint64
	// OrphanExits counts returns without their entry.
	OrphanExits uint64
	// Records counts the records read.
	Records uint64
	// Calls are the completed calls of the function regions in the order
	// they returned, with Options.KeepCalls (nil otherwise).
	Calls []Call
}
