// Package flagval holds the flag.Value types of rprof's command line:
// durations, sizes, ratios and lists, each with its parse rule and an
// error that says what is wrong. A Value's String reads as the flag is
// given, and its zero value reads as the type's zero, so the help leaves
// a zero default unsaid. Of, Without and IsBool read a command line back
// against its FlagSet. It belongs to the command (cmd/go and pprof keep
// such helpers internal) and may word its errors for the command line.
package flagval

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rprof/rprof/machine"
)

// Duration is a time.Duration flag whose error says what is wrong: the
// flag package's own says "parse error", even for "20" without a unit.
type Duration struct{ P *time.Duration }

// String reads as the flag is given: 5m and 1h, not 5m0s and 1h0m0s.
func (f Duration) String() string {
	if f.P == nil {
		return "0s"
	}
	return shortDuration(*f.P)
}

// shortDuration is d as time.Duration prints it, less trailing zero
// minutes and seconds.
func shortDuration(d time.Duration) string {
	s := d.String()
	if t, ok := strings.CutSuffix(s, "m0s"); ok {
		s = t + "m"
	}
	if t, ok := strings.CutSuffix(s, "h0m"); ok {
		s = t + "h"
	}
	return s
}

func (f Duration) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil {
		if _, numErr := strconv.ParseFloat(s, 64); numErr == nil {
			return fmt.Errorf("a duration needs a unit, e.g. %ss or %sms", s, s)
		}
		return errors.New("not a duration, e.g. 25s, 1m30s or 500ms")
	}
	*f.P = d
	return nil
}

// DurationVar defines a Duration flag. The flag package names the
// argument of a Var flag from a `quoted` word in usage.
func DurationVar(fs *flag.FlagSet, p *time.Duration, name string, value time.Duration, usage string) {
	*p = value
	fs.Var(Duration{p}, name, usage)
}

// Wait is a Duration that cannot be negative: how long to wait, where 0
// does not wait.
type Wait struct{ Duration }

func (f Wait) Set(s string) error {
	if err := f.Duration.Set(s); err != nil {
		return err
	}
	if *f.P < 0 {
		return errors.New("a wait cannot be negative (0 does not wait)")
	}
	return nil
}

// OptionalDurationVar defines a duration flag, with Duration's errors,
// that points *p at its value only when given: nil leaves the default to
// the library that reads it.
func OptionalDurationVar(fs *flag.FlagSet, p **time.Duration, name, usage string) {
	fs.Var(OptionalDuration{p}, name, usage)
}

// OptionalDuration is the Value of OptionalDurationVar.
type OptionalDuration struct{ P **time.Duration }

func (f OptionalDuration) String() string {
	if f.P == nil || *f.P == nil {
		return ""
	}
	return shortDuration(**f.P)
}

func (f OptionalDuration) Set(s string) error {
	d := new(time.Duration)
	if err := (Duration{d}).Set(s); err != nil {
		return err
	}
	*f.P = d
	return nil
}

// Size is a byte count given as machine.ParseSize reads it (256M, 2G or
// plain bytes); it reads back in the largest unit that divides it.
type Size struct{ N *int64 }

func (f Size) String() string {
	if f.N == nil || *f.N == 0 {
		return "0"
	}
	for _, u := range []struct {
		suffix string
		size   int64
	}{{"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}} {
		if *f.N%u.size == 0 {
			return strconv.FormatInt(*f.N/u.size, 10) + u.suffix
		}
	}
	return strconv.FormatInt(*f.N, 10)
}

func (f Size) Set(s string) error {
	n, err := machine.ParseSize(s)
	if err != nil {
		return errors.New("not a size, e.g. 256M, 2G or a byte count")
	}
	*f.N = n
	return nil
}

// Ratio is a relative figure given as "5%" or "0.05"; "off" (when
// AllowOff) is +Inf, a limit that never trips.
type Ratio struct {
	V        float64
	AllowOff bool
}

func (r *Ratio) String() string {
	if r == nil {
		return ""
	}
	if math.IsInf(r.V, 1) {
		return "off"
	}
	return strconv.FormatFloat(r.V*100, 'g', -1, 64) + "%"
}

func (r *Ratio) Set(s string) error {
	if r.AllowOff && s == "off" {
		r.V = math.Inf(1)
		return nil
	}
	num, isPct := strings.CutSuffix(strings.TrimSpace(s), "%")
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		want := `a non-negative number or percentage, e.g. "5%" or "0.05"`
		if r.AllowOff {
			want += `, or "off"`
		}
		return fmt.Errorf("%q is not %s", s, want)
	}
	if isPct {
		v /= 100
	}
	r.V = v
	return nil
}

// CI is --ci of every command that repeats until an interval is narrow
// enough: the interval's half-width as a share of the mean, 2% or 0.02
// alike, in (0, 1).
type CI struct{ Ratio }

func (c *CI) Set(s string) error {
	var r Ratio
	if err := r.Set(s); err != nil || !(r.V > 0 && r.V < 1) {
		return fmt.Errorf("%q is not a share of the mean in (0, 1), e.g. 2%% or 0.02", s)
	}
	c.V = r.V
	return nil
}

// Events is a repeatable -e flag; like perf stat, one -e may list
// several events separated by commas outside pmu/.../ terms.
type Events []string

func (l *Events) String() string { return strings.Join(*l, ",") }

func (l *Events) Set(s string) error {
	start, inTerms := 0, false
	for i, c := range s {
		switch {
		case c == '/':
			inTerms = !inTerms
		case c == ',' && !inTerms:
			*l = append(*l, s[start:i])
			start = i + 1
		}
	}
	*l = append(*l, s[start:])
	return nil
}

// OptFloat is a non-negative float flag that knows whether it was given:
// V is nil until it is.
type OptFloat struct{ V *float64 }

func (o *OptFloat) String() string {
	if o.V == nil {
		return ""
	}
	return strconv.FormatFloat(*o.V, 'g', -1, 64)
}

func (o *OptFloat) Set(s string) error {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return fmt.Errorf("%q is not a non-negative number", s)
	}
	o.V = &v
	return nil
}

// List is a repeatable flag, one value each time it is given.
type List []string

func (l *List) String() string { return strings.Join(*l, " ") }

func (l *List) Set(s string) error {
	*l = append(*l, s)
	return nil
}

// Without is args, command-line flags parsed by fs, less the flags
// named drop (with their values) and the "--" that ends them.
func Without(args []string, fs *flag.FlagSet, drop ...string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		f, hasValue := Of(fs, a)
		if f == nil {
			out = append(out, a)
			continue
		}
		takesNext := !hasValue && !IsBool(f)
		if !slices.Contains(drop, f.Name) {
			out = append(out, a)
			if takesNext && i+1 < len(args) {
				out = append(out, args[i+1])
			}
		}
		if takesNext {
			i++
		}
	}
	return out
}

// Of is the flag of fs that the argument arg gives (nil: arg is not one
// of fs's flags), and whether arg holds its value (-name=value).
func Of(fs *flag.FlagSet, arg string) (f *flag.Flag, hasValue bool) {
	if !strings.HasPrefix(arg, "-") {
		return nil, false
	}
	name, _, hasValue := strings.Cut(strings.TrimLeft(arg, "-"), "=")
	return fs.Lookup(name), hasValue
}

// IsBool says whether f takes no value, as the flag package decides.
func IsBool(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}
