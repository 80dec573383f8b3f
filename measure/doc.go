// Package measure runs a target program under counters and computes its
// roofline point: floating-point work W, DRAM traffic Q, wall time T, with
// overhead subtraction, repetition statistics and validity flags.
//
// Run is the whole of `rprof run` except rendering; `rprof gate` calls it
// too. It decides where W and Q come from (the pmu catalogue's counters,
// analytic values, or only the user's -e events) and refuses with a
// *NoCountersError, before running anything, when none applies. Execute
// runs one target through a re-executed launcher so that counting starts at
// the target's exec; a program using it must call Launch from main when
// IsLauncher (see cmd/rprof).
//
// The arithmetic is pure and works on recorded counts: a repetition's
// counts become W, Q and event values (scaled for multiplexing, weighted
// by the catalogue), the overhead run and the idle rate are subtracted, and
// the repetitions are summarised with the stats engine. docs/schema-point.md
// describes the resulting document field by field.
package measure
