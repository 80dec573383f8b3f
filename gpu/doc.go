// Package gpu measures an NVIDIA GPU's roofs (rprof roofs --gpu): FMA
// ceilings per precision, memory ceilings of DRAM, L2 and L1, and the
// ERT-style ladder between them, running package ptx's kernels through the
// CUDA driver (package cuda). Launch configurations (kernel ILP and
// unroll, blocks per SM, threads per block) are searched with
// internal/stats' evaluations and early stopping; each sample is a run of
// back-to-back launches timed by events, after a warm-up launch. The
// clocks are recorded beside each roof, and theoretical peaks come from
// the device's attributes and a table of FMA rates per compute
// capability (peaks.go), each with its source.
//
// The package knows nothing of flags or output: it returns
// roofline.GPURoofs and typed errors.
package gpu
