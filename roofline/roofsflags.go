package roofline

// Flag codes of roofs documents (rprof roofs), on the document or on its
// DGEMM roof.
const (
	// FlagKernelSkipped: the CPU cannot run a kernel's ISA.
	FlagKernelSkipped = "kernel-skipped"
	// FlagDGEMMSkipped: no DGEMM roof (no BLAS, or not asked for).
	FlagDGEMMSkipped = "dgemm-skipped"
	// FlagDGEMMSlow: DGEMM is under 75% of the best fp64 FMA kernel.
	FlagDGEMMSlow = "dgemm-below-fma"
	// FlagDGEMMBudget: the DGEMM search's time budget, not its stop
	// rules, left shapes unmeasured.
	FlagDGEMMBudget = "dgemm-budget"
	// FlagLibrarySkipped: library roofs were asked for (rprof roofs
	// --dnn) but the library could not be loaded.
	FlagLibrarySkipped = "library-skipped"
	// FlagLibraryBelowNarrower: a library roof is below the same
	// problem's on fewer threads.
	FlagLibraryBelowNarrower = "below-fewer-threads"
	// FlagThreadsUnset: rprof could not set the BLAS's thread count.
	FlagThreadsUnset = "threads-unset"
	// FlagFrequency: which clock the theoretical peaks use.
	FlagFrequency = "frequency-source"
	// FlagAboveTheory: compute roofs above their theoretical peak.
	FlagAboveTheory = "above-theoretical"
	// FlagGPUNoPeak: a GPU's compute capability is not in rprof's table
	// of FMA rates, so its compute roofs have no theoretical peak.
	FlagGPUNoPeak = "gpu-no-peak"
	// FlagUnverifiedPeak: the FMA pipe figures are not verified.
	FlagUnverifiedPeak = "unverified-peak"
	// FlagNoInterval: too few samples for an interval; the range is given.
	FlagNoInterval = "no-interval"
	// FlagCacheSource: where the cache sizes came from when not all from
	// sysfs, what was rejected, and which levels the sweep measured.
	FlagCacheSource = "cache-source"
	// FlagTopologySource: sysfs's CPU topology could not be read; every
	// CPU the process may use is taken as a core.
	FlagTopologySource = "topology-source"
	// FlagHybridScope: a thread scope mixes core types of a hybrid CPU.
	FlagHybridScope = "hybrid-scope"
	// FlagNoPlateau: no sweep point lies well inside a level, or two
	// levels show no bandwidth step between them.
	FlagNoPlateau = "no-plateau"
	// FlagCacheMismatch: the bandwidth drop after a level is not where its
	// known size says the level ends.
	FlagCacheMismatch = "cache-mismatch"
	// FlagNoisyPlateau: the points inside a level disagree by more than a
	// quarter.
	FlagNoisyPlateau = "noisy-plateau"
	// FlagMemoryLimit: the sweep was held below the span it would have
	// swept by the memory it may place (a quarter of MemAvailable).
	FlagMemoryLimit = "memory-limit"
	// FlagDRAMNotReached: within the memory it may place, the sweep did
	// not establish DRAM's plateau; there is no DRAM roof.
	FlagDRAMNotReached = "dram-not-reached"
	// FlagBandwidthMoved: a bandwidth roof measured again at the end of
	// the run (a one-thread roof on another core where there is one)
	// disagreed with its sweep's figure beyond both intervals; the roof is
	// the higher.
	FlagBandwidthMoved = "bandwidth-moved"
	// FlagComputeMoved: an FMA roof far below its scope's others, as a
	// share of theoretical peak, measured again at the end of the run
	// disagreed with its first figure beyond both intervals; the roof is
	// the higher.
	FlagComputeMoved = "compute-moved"
	// FlagUnevenThreads: in a multi-thread cache roof's samples one
	// thread took far longer over its equal share than another: a core
	// ran slow, and the roof, as fast as its slowest thread, may read
	// higher at another moment.
	FlagUnevenThreads = "uneven-threads"
	// FlagInconsistentRoof: a roof below the same roof on fewer threads,
	// or a cache level's below DRAM's on the same threads, stayed so when
	// measured again; the message names it and both figures.
	FlagInconsistentRoof = "inconsistent-roof"
)
