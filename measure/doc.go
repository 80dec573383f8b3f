// Package measure runs a target program under counters and computes its
// roofline point: floating-point work W, DRAM traffic Q, wall time T, with
// overhead subtraction, repetition statistics and validity flags.
//
// Run is the whole of `rprof run` except rendering; `rprof gate` calls it
// too. A counting Backend, chosen by name (Config.Count, Register), decides
// what can be counted and counts each run: the default "pmu" backend takes
// W and Q from the pmu catalogue's counters, analytic values, or only the
// user's -e events, and refuses with a *NoCountersError, before running
// anything, when none applies. Targets are started by internal/launch,
// held before their first instruction while counters attach, so that
// counting starts at the target's exec; a program using measure must
// dispatch launch.Role from main (see cmd/rprof).
//
// The arithmetic is pure and works on recorded counts: a repetition's
// counts become W, Q and event values (scaled for multiplexing, weighted
// by the catalogue), the overhead run and the idle rate are subtracted, and
// the repetitions are summarised with the stats engine. docs/schema-point.md
// describes the resulting document field by field.
package measure
