// Package measure runs a target program under counters and computes its
// roofline point: floating-point work W, DRAM traffic Q, wall time T, with
// overhead subtraction, repetition statistics and validity flags.
//
// Run is the whole of `rprof run` except rendering; `rprof gate` calls it
// too. A counting Backend, chosen by name (Counting.Backend, Register),
// decides what can be counted and counts each run: the default "pmu"
// backend takes W and Q from the pmu catalogue's counters, analytic
// values, or only the user's -e events, and refuses with a
// *NoCountersError, before running anything, when none applies. Targets
// are started by internal/launch, held before their first instruction
// while counters attach, so that counting starts at the target's exec; a
// program using measure must dispatch launch.Role from main (see
// cmd/rprof).
//
// A Config is plain data in five groups, split by who sets each field and
// who reads it:
//
//   - Target: the program, its environment, streams and label; set from
//     the command line, read by the launcher and the point.
//   - Counting: the backend by name, the Host it describes, its options
//     (Emulator: the cache model, CPU and QEMU), the events, analytic W
//     and Q, the regions, what is subtracted (Overhead, IdleBaseline) and
//     a rank's Node; set by the counting flags, read by the backend.
//   - Repetition: a fixed count or the adaptive --ci rule, its limits and
//     the intervals' confidence; read by the repetition loop.
//   - Placement: the roofs the point is placed under and its thread
//     scope; read when the point is built, and by the emulate backend for
//     the roofs' cache sizes.
//   - Hooks: a caller's callbacks into the runs (rprof dnn's).
//
// Each group checks itself (its Validate) and Config.Validate checks the
// groups and the rules between them, as Run does first; every refusal
// matches ErrInvalidConfig, and a *ConfigError names the fields at fault
// by their paths in Config ("Repetition.CI"). What a run resolves (the
// backend's counters, the region plan) lives on the run, not in Config.
//
// The arithmetic is pure and works on recorded counts: a repetition's
// counts become W, Q and event values (scaled for multiplexing, weighted
// by the catalogue), the overhead run and the idle rate are subtracted, and
// the repetitions are summarised with the stats engine. docs/schema-point.md
// describes the resulting document field by field.
package measure
