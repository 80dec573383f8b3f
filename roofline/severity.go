package roofline

// Severity says how much a flag should worry the reader of a figure, so
// that charts and reports can single out what is wrong from what merely
// says how a figure was obtained.
type Severity int

const (
	// Info says how the figure was obtained (in a VM, by emulation, from
	// a formula); nothing is wrong with it.
	Info Severity = iota
	// Caution: the figure is less certain or less complete than its
	// interval says (a counter multiplexed or missing, calls left out).
	Caution
	// Warning: the figure contradicts itself or the roofs (above a roof,
	// counts that disagree, a run that failed); it should not be believed
	// until the cause is found.
	Warning
)

func (s Severity) String() string {
	switch s {
	case Info:
		return "info"
	case Warning:
		return "warning"
	}
	return "caution"
}

// SeverityOf is the level of a flag code; a code this package does not
// know (a newer producer's) is a caution.
func SeverityOf(code string) Severity {
	if s, ok := severities[code]; ok {
		return s
	}
	return Caution
}

// Severity is the level of the flag's code.
func (f Flag) Severity() Severity { return SeverityOf(f.Code) }

// severities gives every flag code of this package its level (a test
// checks none is missing).
var severities = map[string]Severity{
	// How the figure was obtained.
	FlagVM:               Info,
	FlagAnalytic:         Info,
	FlagEmulatedISA:      Info,
	FlagModelled:         Info,
	FlagNotModelled:      Info,
	FlagInterleaved:      Info,
	FlagUserOnly:         Info,
	FlagPadded:           Info,
	FlagForeignRoofs:     Info,
	FlagJobRoofs:         Info,
	FlagRankTraffic:      Info,
	FlagTrafficElsewhere: Info,
	FlagNoRegionTraffic:  Info,
	FlagWorkerThreads:    Info,
	FlagFrequency:        Info,
	FlagCacheSource:      Info,
	FlagTopologySource:   Info,
	FlagDGEMMSkipped:     Info,
	FlagKernelSkipped:    Info,
	FlagNoInterval:       Info,

	// Less certain or less complete than the interval says.
	FlagMultiplexed:          Caution,
	FlagMissingCounter:       Caution,
	FlagInterrupted:          Caution,
	FlagNoUncore:             Caution,
	FlagUnverified:           Caution,
	FlagUnverifiedPeak:       Caution,
	FlagGPUNoPeak:            Caution,
	FlagGPUTimesOnly:         Caution,
	FlagUnverifiedLayout:     Caution,
	FlagBelowNoise:           Caution,
	FlagApproximate:          Caution,
	FlagNoFormula:            Caution,
	FlagPaddingTaps:          Caution,
	FlagSkipped:              Caution,
	FlagNotCounted:           Caution,
	FlagOutlived:             Caution,
	FlagStdinOnce:            Caution,
	FlagBusyMachine:          Caution,
	FlagWideTime:             Caution,
	FlagOverlappedCalls:      Caution,
	FlagUncounted:            Caution,
	FlagProbeCost:            Caution,
	FlagNeverLeft:            Caution,
	FlagUncountedCalls:       Caution,
	FlagNoCalls:              Caution,
	FlagLostRecords:          Caution,
	FlagMissingRank:          Caution,
	FlagSharedTraffic:        Caution,
	FlagDGEMMBudget:          Caution,
	FlagLibrarySkipped:       Caution,
	FlagThreadsUnset:         Caution,
	FlagHybridScope:          Caution,
	FlagNoPlateau:            Caution,
	FlagNoisyPlateau:         Caution,
	FlagBandwidthMoved:       Caution,
	FlagComputeMoved:         Caution,
	FlagUnevenThreads:        Caution,
	FlagDGEMMSlow:            Caution,
	FlagLibraryBelowNarrower: Caution,
	FlagMemoryLimit:          Caution,
	FlagDRAMNotReached:       Caution,

	// Contradicts itself or the roofs.
	FlagAboveRoof:     Warning,
	FlagAboveTheory:   Warning,
	FlagNegative:      Warning,
	FlagNonzeroExit:   Warning,
	FlagSignaled:      Warning,
	FlagCountedGap:    Warning,
	FlagCallMismatch:  Warning,
	FlagCountedOther:  Warning,
	FlagCacheMismatch: Warning,
	FlagUnequalRoofs:  Warning,
	FlagTrafficOwner:  Warning,
	// A roof below what fewer threads reach, or a cache below DRAM.
	FlagInconsistentRoof: Warning,
}
