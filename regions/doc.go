// Package regions measures functions of an unmodified program: eBPF uprobes
// at a function's entry and uretprobes at its return record the time, the
// thread, the CPU and per-CPU counters of every call, and user space pairs
// the records per thread into per-region statistics.
//
// The pieces, each usable on its own:
//   - ParseSpec reads a region spec (SYMBOL, LIB:SYMBOL, FILE:0xADDR);
//   - Resolve turns specs into Probes (a file and an offset) from the
//     ELF symbol tables, following .gnu_debuglink to separate debug files;
//   - Attach (Linux) loads the eBPF programs, written with cilium/ebpf's
//     asm package so that neither building nor running rprof needs a C
//     compiler, and attaches them to a process;
//   - Aggregate pairs decoded records into Stats; it is pure and tested on
//     recorded records; with KeepCalls it also keeps every completed Call
//     as plain data, and Summarize gives the Stats of any subset of them
//     (rprof dnn: the calls of one oneDNN primitive);
//   - Calibrate (Linux, amd64) measures what a probe costs per call here.
//
// The package never prints: figures and typed errors go to the caller.
package regions
