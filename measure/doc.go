// Package measure runs a target program under counters and computes its
// roofline point: floating-point work W, DRAM traffic Q, wall time T, with
// overhead subtraction, repetition statistics and validity flags.
package measure
