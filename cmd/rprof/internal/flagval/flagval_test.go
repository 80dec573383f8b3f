package flagval

import (
	"flag"
	"io"
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

// check fails t unless err is nil where want is "" and says want where
// it is not.
func check(t *testing.T, in string, err error, wantErr string) bool {
	t.Helper()
	switch {
	case wantErr == "" && err != nil:
		t.Errorf("Set(%q) = %v", in, err)
	case wantErr != "" && (err == nil || !strings.Contains(err.Error(), wantErr)):
		t.Errorf("Set(%q) = %v, want an error saying %q", in, err, wantErr)
	default:
		return wantErr == ""
	}
	return false
}

func TestDurationNamesWhatIsWrong(t *testing.T) {
	tests := []struct {
		in      string
		want    time.Duration
		wantErr string
	}{
		{"25s", 25 * time.Second, ""},
		{"1m30s", 90 * time.Second, ""},
		{"0", 0, ""},
		{"20", 0, "needs a unit, e.g. 20s or 20ms"},
		{"0.5", 0, "needs a unit, e.g. 0.5s or 0.5ms"},
		{"soon", 0, "not a duration"},
	}
	for _, tt := range tests {
		var d time.Duration
		if check(t, tt.in, Duration{&d}.Set(tt.in), tt.wantErr) && d != tt.want {
			t.Errorf("Set(%q) gave %v, want %v", tt.in, d, tt.want)
		}
	}
}

func TestDurationReadsAsGiven(t *testing.T) {
	for _, tt := range []struct {
		d    time.Duration
		want string
	}{{5 * time.Minute, "5m"}, {time.Hour, "1h"}, {90 * time.Second, "1m30s"}, {500 * time.Millisecond, "500ms"}, {0, "0s"}} {
		if got := (Duration{&tt.d}).String(); got != tt.want {
			t.Errorf("%v reads %q, want %q", tt.d, got, tt.want)
		}
	}
	if got := (Duration{}).String(); got != "0s" {
		t.Errorf("the zero Duration reads %q, want 0s", got)
	}
}

func TestWaitRefusesNegative(t *testing.T) {
	for _, tt := range []struct{ in, wantErr string }{{"0", ""}, {"2m", ""}, {"-1s", "cannot be negative"}, {"5", "needs a unit"}} {
		var d time.Duration
		check(t, tt.in, Wait{Duration{&d}}.Set(tt.in), tt.wantErr)
	}
}

func TestOptionalDurationIsNilUntilGiven(t *testing.T) {
	fs := flag.NewFlagSet("", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var p *time.Duration
	OptionalDurationVar(fs, &p, "budget", "")
	if err := fs.Parse(nil); err != nil || p != nil {
		t.Fatalf("not given: %v, err %v; want nil", p, err)
	}
	if err := fs.Parse([]string{"--budget", "0"}); err != nil || p == nil || *p != 0 {
		t.Fatalf("--budget 0: %v, err %v; want 0", p, err)
	}
	if err := fs.Parse([]string{"--budget", "25"}); err == nil || !strings.Contains(err.Error(), "needs a unit") {
		t.Errorf("--budget 25: err %v, want Duration's", err)
	}
}

func TestSizeReadsBackInLargestUnit(t *testing.T) {
	tests := []struct {
		in, want, wantErr string
	}{
		{"256M", "256M", ""},
		{"2G", "2G", ""},
		{"1536K", "1536K", ""},
		{"3072M", "3G", ""},
		{"1000", "1000", ""},
		{"lots", "", "not a size"},
	}
	for _, tt := range tests {
		var n int64
		f := Size{&n}
		if check(t, tt.in, f.Set(tt.in), tt.wantErr) && f.String() != tt.want {
			t.Errorf("Set(%q) reads %q, want %q", tt.in, f.String(), tt.want)
		}
	}
}

func TestRatioTakesPercentAndFractionAlike(t *testing.T) {
	tests := []struct {
		in       string
		allowOff bool
		want     float64
		wantErr  string
	}{
		{"5%", false, 0.05, ""},
		{"0.05", false, 0.05, ""},
		{" 12.5% ", false, 0.125, ""},
		{"0", false, 0, ""},
		{"off", true, math.Inf(1), ""},
		{"off", false, 0, `not a non-negative number or percentage, e.g. "5%" or "0.05"`},
		{"-1%", true, 0, `, or "off"`},
		{"NaN", false, 0, "not a non-negative"},
	}
	for _, tt := range tests {
		r := Ratio{AllowOff: tt.allowOff}
		if check(t, tt.in, r.Set(tt.in), tt.wantErr) && r.V != tt.want && !(math.Abs(r.V-tt.want) < 1e-12) {
			t.Errorf("Set(%q) = %g, want %g", tt.in, r.V, tt.want)
		}
	}
	if got := (&Ratio{V: math.Inf(1)}).String(); got != "off" {
		t.Errorf("+Inf reads %q, want off", got)
	}
	if got := (&Ratio{V: 0.05}).String(); got != "5%" {
		t.Errorf("0.05 reads %q, want 5%%", got)
	}
}

func TestCIIsAShareInOpenUnitInterval(t *testing.T) {
	for _, tt := range []struct {
		in      string
		want    float64
		wantErr string
	}{{"2%", 0.02, ""}, {"0.02", 0.02, ""}, {"0", 0, "in (0, 1)"}, {"100%", 0, "in (0, 1)"}, {"off", 0, "in (0, 1)"}} {
		var c CI
		if check(t, tt.in, c.Set(tt.in), tt.wantErr) && c.V != tt.want {
			t.Errorf("Set(%q) = %g, want %g", tt.in, c.V, tt.want)
		}
	}
}

func TestEventsSplitsCommasOutsideTerms(t *testing.T) {
	tests := []struct {
		flags []string
		want  []string
	}{
		{[]string{"page-faults"}, []string{"page-faults"}},
		{[]string{"page-faults,task-clock", "cs"}, []string{"page-faults", "task-clock", "cs"}},
		{[]string{"cpu/event=0x3,umask=0x8f/,page-faults"}, []string{"cpu/event=0x3,umask=0x8f/", "page-faults"}},
		{[]string{"amd_umc_0/event=0xa,rdwrmask=1/,amd_umc_0/event=0xa,rdwrmask=2/"}, []string{"amd_umc_0/event=0xa,rdwrmask=1/", "amd_umc_0/event=0xa,rdwrmask=2/"}},
		{[]string{"a,,b"}, []string{"a", "", "b"}}, // the empty event is ParseEvent's to reject
	}
	for _, tt := range tests {
		var l Events
		for _, f := range tt.flags {
			if err := l.Set(f); err != nil {
				t.Fatalf("Set(%q) = %v", f, err)
			}
		}
		if !slices.Equal(l, tt.want) {
			t.Errorf("-e %q = %q, want %q", tt.flags, l, tt.want)
		}
	}
}

func TestListKeepsEachValueWhole(t *testing.T) {
	var l List
	for _, s := range []string{"main.f", "a.c:10-20,b"} {
		if err := l.Set(s); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(l, []string{"main.f", "a.c:10-20,b"}) {
		t.Errorf("got %q", l)
	}
}

func TestOptFloatIsNilUntilGivenAndRefusesNegative(t *testing.T) {
	var o OptFloat
	if o.String() != "" || o.V != nil {
		t.Fatalf("not given: %q", o.String())
	}
	for _, tt := range []struct{ in, wantErr string }{{"2.5", ""}, {"0", ""}, {"-1", "not a non-negative number"}, {"Inf", "not a non-negative number"}, {"x", "not a non-negative number"}} {
		var o OptFloat
		if check(t, tt.in, o.Set(tt.in), tt.wantErr) && (o.V == nil || o.String() != tt.in) {
			t.Errorf("Set(%q) reads %q", tt.in, o.String())
		}
	}
}

func TestWithoutDropsNamedFlagsWithTheirValues(t *testing.T) {
	fs := flag.NewFlagSet("", flag.ContinueOnError)
	fs.String("count", "", "")
	fs.Bool("quiet", false, "")
	fs.Int("n", 0, "")
	args := []string{"--count", "emulate", "--quiet", "-n=3", "--count=pmu", "--", "ls", "--count"}
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	got := Without(args[:len(args)-len(fs.Args())], fs, "count")
	if want := []string{"--quiet", "-n=3"}; !slices.Equal(got, want) {
		t.Errorf("kept %q, want %q", got, want)
	}
	if !IsBool(fs.Lookup("quiet")) || IsBool(fs.Lookup("n")) {
		t.Error("IsBool: --quiet takes no value, -n one")
	}
}

func TestOfFindsTheFlagAnArgumentGivesAndWhetherItHoldsItsValue(t *testing.T) {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.String("count", "", "")
	tests := []struct {
		arg      string
		flag     string
		hasValue bool
	}{
		{"--count", "count", false},
		{"-count=emulate", "count", true},
		{"--repeat", "", false},
		{"count", "", false},
		{"-", "", false},
	}
	for _, tt := range tests {
		f, hasValue := Of(fs, tt.arg)
		name := ""
		if f != nil {
			name = f.Name
		}
		if name != tt.flag || hasValue != tt.hasValue {
			t.Errorf("Of(%q) = %q, %v; want %q, %v", tt.arg, name, hasValue, tt.flag, tt.hasValue)
		}
	}
}
