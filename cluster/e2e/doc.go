// Package e2e runs rprof under real launchers, started by its tests on
// this machine: Open MPI and MPICH with four ranks, a one-node Slurm
// (srun and sbatch), and two "hosts" in network namespaces (mpirun across
// them, and a two-node Slurm). rprof is built with -tags rproftest, whose
// counting backend gives a fixed W per process and a fixed Q per opening
// of the traffic counters, so that the tests can assert that a job's Q is
// nodes × the node's traffic, not ranks × it. Daemons and namespaces are
// removed when a test ends, pass or fail. It has no non-test code.
package e2e
