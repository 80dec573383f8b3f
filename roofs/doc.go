// Package roofs measures the machine's ceilings: peak FLOP/s from FMA
// kernels and vendor-BLAS DGEMM, and the bandwidth of each memory level from
// TRIAD sweeps, with autotuned parameters and evaluations stopped early by
// confidence intervals (seed 000 of docs/references.md).
package roofs
