package testutil

import (
	"errors"
	"fmt"
	"testing"
)

// verdict records how SkipUnlessHardware ended a test: the first of Skipf
// or Fatalf (both end the test; here they only record).
type verdict struct {
	testing.TB
	ended string
}

func (v *verdict) Skipf(string, ...any) {
	if v.ended == "" {
		v.ended = "skip"
	}
}

func (v *verdict) Fatalf(string, ...any) {
	if v.ended == "" {
		v.ended = "fail"
	}
}

func TestSkipUnlessHardwareSkipsOnlyOnTheNamedNotSupportedErrors(t *testing.T) {
	errAbsent := errors.New("not supported")
	errOther := errors.New("permission denied")
	tests := []struct {
		name, require string
		err           error
		want          string
	}{
		{"no error runs the test", "", nil, ""},
		{"a named sentinel skips", "", errAbsent, "skip"},
		{"a wrapped named sentinel skips", "", fmt.Errorf("probe: %w", errAbsent), "skip"},
		{"another error fails", "", errors.New("EBUSY"), "fail"},
		{"a sentinel not named fails", "", errOther, "fail"},
		{"RPROF_REQUIRE_PMU=1 fails where it would skip", "1", errAbsent, "fail"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(RequirePMUEnv, tt.require)
			v := &verdict{TB: t}
			SkipUnlessHardware(v, tt.err, errAbsent)
			if v.ended != tt.want {
				t.Errorf("ended %q, want %q", v.ended, tt.want)
			}
		})
	}
}
