package main

import (
	"errors"

	"github.com/rprof/rprof/measure"
	"github.com/rprof/rprof/measure/emulate"
	"github.com/rprof/rprof/pmu"
)

// advice turns an error into the line shown to the user, adding the fix for
// the typed errors the libraries return. Each command's owner extends it.
func advice(err error) string {
	if fix := fixFor(err); fix != "" {
		return err.Error() + "; fix: " + fix
	}
	return err.Error()
}

// fixFor is the one-line remedy for pmu's typed errors, "" for others.
func fixFor(err error) string {
	var perm *pmu.PermissionError
	switch {
	case errors.As(err, &perm) && perm.SystemWide:
		return "memory-controller events are system-wide and need CAP_PERFMON: " + pmu.FixSystemWide
	case errors.As(err, &perm):
		return pmu.FixPerProcess
	case errors.Is(err, pmu.ErrPermission):
		return pmu.FixPerProcess + ", or run as root"
	case errors.Is(err, pmu.ErrNoPMU):
		return "this machine exposes no hardware PMU (a VM without a virtual PMU?); 'rprof doctor' says what would enable one"
	case errors.Is(err, emulate.ErrNoQEMU):
		return "install the qemu-user package (apt-get install qemu-user)"
	case errors.Is(err, measure.ErrIllegalInstruction):
		return "build the target for x86-64-v3 or lower (gcc -march=x86-64-v3), or count with --count pmu on a machine with a PMU"
	case errors.Is(err, pmu.ErrUnsupportedCPU):
		return "rprof has no event table for this CPU; 'rprof events' shows what is missing"
	case errors.Is(err, pmu.ErrNotSupported):
		return "this kernel or machine lacks the event; 'rprof doctor' says what is missing and why"
	}
	return ""
}
