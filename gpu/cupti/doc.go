// Package cupti records the GPU kernels a program runs, from inside it:
// CUDA loads rprof's injection library (inject/, a C source with its
// committed build) into the target through CUDA_INJECTION64_PATH, and the
// library subscribes to CUPTI's activity API and writes every kernel's
// record (name, device, context, stream, grid, block, start and end) to a
// file per process in a private directory, which this package reads back
// once the target has ended. It decodes the records into plain data
// (Kernel, Process), sums each kernel's launches (Group), says which tier
// of GPU measurement the run reached and why not the one above (Status),
// and turns kernels into roofline points (Point).
//
// Tier (a), W and Q per kernel: the injection library also runs CUPTI's
// range profiler (inject/profiler.c: a session of automatic ranges with
// kernel replay per CUDA context, evaluated by the NVPW host library
// found beside libcupti) and writes each launch's metric values, which
// this package sums per kernel into W and Q (package metrics). Where the
// profiler cannot run, the points carry kernel times only (tier c),
// flagged with the reason. Verified against fakes only (docs/gpu.md).
//
// The package knows nothing of flags or output: it returns plain data
// and typed errors.
package cupti
