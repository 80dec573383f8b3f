package roofline

import "testing"

// Every Flag constant of the package has its level in severities, so a
// new code cannot fall to the default unnoticed.
func TestEveryFlagCodeHasASeverity(t *testing.T) {
	codes := flagCodes(t)
	if len(codes) < 10 {
		t.Fatalf("found only %d flag codes in the package: the source scan is broken", len(codes))
	}
	for name, code := range codes {
		if _, ok := severities[code]; !ok {
			t.Errorf("%s (%q) has no severity", name, code)
		}
	}
}

func TestSeverityLevels(t *testing.T) {
	for code, want := range map[string]Severity{
		FlagVM: Info, FlagModelled: Info, FlagEmulatedISA: Info,
		FlagMultiplexed: Caution, "a-newer-code": Caution,
		FlagAboveRoof: Warning, FlagCountedGap: Warning,
	} {
		if got := SeverityOf(code); got != want {
			t.Errorf("%s: %s, want %s", code, got, want)
		}
	}
}
