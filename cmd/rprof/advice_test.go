package main

import (
	"strings"
	"testing"

	"github.com/rprof/rprof/roofline"
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
