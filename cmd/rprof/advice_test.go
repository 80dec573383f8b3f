package main

import (
	"strings"
	"testing"

	"github.com/rprof/rprof/roofline"
	"github.com/rprof/rprof/roofs"
)

func TestAdviseFlagsAddsTheFlagNamingRemedyByCode(t *testing.T) {
	flags := []roofline.Flag{
		{Code: roofline.FlagBusyMachine, Message: "the thread scope it chose (1) too small"},
		{Code: roofline.FlagHybridScope, Message: "its roofs are the mix's"},
		{Code: roofline.FlagAboveRoof, Message: "above its roof"},
	}
	adviseFlags(flags)
	want := []string{
		"the thread scope it chose (1) too small (--threads N to choose)",
		"its roofs are the mix's (--threads to choose)",
		"above its roof",
	}
	for i, f := range flags {
		if f.Message != want[i] {
			t.Errorf("%s: %q, want %q", f.Code, f.Message, want[i])
		}
	}
	for code, fix := range flagFixes {
		if !strings.Contains(fix, "--") {
			t.Errorf("the remedy of %s, %q, names no flag: it belongs in the library's message", code, fix)
		}
	}
}

func TestAdviseRoofsNamesTheFlagsOfSkipsAndFlags(t *testing.T) {
	rep := &roofs.Report{
		Roofs: roofline.Roofs{
			Flags: []roofline.Flag{{Code: roofline.FlagDGEMMSkipped, Message: "DGEMM skipped: no BLAS library found; install one: " + roofs.BLASHint}},
			DGEMM: &roofline.DGEMM{Flags: []roofline.Flag{{Code: roofline.FlagDGEMMBudget, Message: "the search's 1m budget ended it"}}},
		},
		Skipped: []roofs.Skip{{Harness: "DGEMM", Why: "no BLAS library found; install one: " + roofs.BLASHint, Code: roofs.SkipNoBLAS}},
	}
	adviseRoofs(rep)
	if got := rep.Skipped[0].Why; !strings.HasSuffix(got, roofs.BLASHint+" (or pass --blas PATH)") {
		t.Errorf("skip: %q, want the --blas remedy after the package", got)
	}
	if got := rep.Roofs.Flags[0].Message; !strings.HasSuffix(got, "(or pass --blas PATH)") {
		t.Errorf("dgemm-skipped flag: %q, want the --blas remedy", got)
	}
	if got := rep.Roofs.DGEMM.Flags[0].Message; !strings.Contains(got, "--dgemm-budget") {
		t.Errorf("dgemm-budget flag: %q, want --dgemm-budget named", got)
	}
	notAsked := &roofs.Report{Skipped: []roofs.Skip{{Harness: "DGEMM", Why: "not asked for", Code: roofs.SkipNoDGEMM}}}
	adviseRoofs(notAsked)
	if got := notAsked.Skipped[0].Why; got != "not asked for (--no-dgemm)" {
		t.Errorf("skip: %q, want %q", got, "not asked for (--no-dgemm)")
	}
}

func TestSlowDGEMMsRemedyNamesBlasArch(t *testing.T) {
	tests := []struct {
		kernels []string
		want    string
	}{
		{[]string{"SkylakeX"}, "(rerun with --blas-arch SkylakeX)"},
		{[]string{"skx", "zen4", "zen3"}, "(rerun with --blas-arch skx, or zen4 or zen3)"},
		{nil, "(--dgemm-space seed searches larger shapes; --blas PATH names another library)"},
	}
	for _, tt := range tests {
		rep := &roofs.Report{
			Roofs:        roofline.Roofs{DGEMM: &roofline.DGEMM{Flags: []roofline.Flag{{Code: roofline.FlagDGEMMSlow, Message: "OpenBLAS chose its Haswell kernels"}}}},
			DGEMMKernels: tt.kernels,
		}
		adviseRoofs(rep)
		if got := rep.Roofs.DGEMM.Flags[0].Message; got != "OpenBLAS chose its Haswell kernels "+tt.want {
			t.Errorf("kernels %q: %q, want the remedy %q", tt.kernels, got, tt.want)
		}
	}
}
