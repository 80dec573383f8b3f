// Package emulate counts a program's floating-point work and models its
// memory traffic by running it under QEMU user-mode emulation with rprof's
// own TCG plugin, for machines without a hardware PMU.
//
// The plugin (C sources and build script in plugin/, the built library
// committed and embedded here) weights every executed FP arithmetic
// instruction by its lanes, per precision, and feeds every memory access to
// a set-associative write-back, write-allocate cache model. This package
// checks the QEMU version, prepares a run (the plugin file, its arguments,
// an output directory), and reads the plugin's per-process output back:
// totals, traffic between each pair of levels, and work and DRAM traffic
// per function, named from the ELF symbols of the program and its shared
// libraries. Running the command is the caller's (measure's) job.
package emulate
