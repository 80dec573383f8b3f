package measure

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/rprof/rprof/internal/badfield"
	"github.com/rprof/rprof/machine"
	"github.com/rprof/rprof/measure/emulate"
	"github.com/rprof/rprof/regions"
	"github.com/rprof/rprof/roofline"
)

// Config says what `rprof run` (and `rprof gate`) should measure and how,
// in groups by concern: each is set by one part of a caller (the target's
// argv and streams, the counting flags, the repetition flags, the roofs
// flags, a caller's callbacks) and read by one part of Run (the launcher,
// the backend, the repetition loop, the placement of the point, the
// point's regions). The zero value of every optional field is a sensible
// default. Each group checks itself (Validate); Config.Validate checks the
// groups and the rules between them.
type Config struct {
	// Target is the program measured and its streams.
	Target Target
	// Counting is how W, Q and events are counted: the backend, its
	// options, and what is subtracted.
	Counting Counting
	// Repetition is how many times the target runs and how sure the
	// intervals are.
	Repetition Repetition
	// Placement is the roofs the point is placed under.
	Placement Placement
	// Hooks are a caller's part in the runs (rprof dnn's).
	Hooks Hooks
}

// Target is the program measured: set from the command line's argv and
// the command's streams, read by the launcher and the point.
type Target struct {
	// Command is the target's argv; Command[0] is looked up in PATH.
	Command []string
	// Env is the target's environment (nil: rprof's own). Dir is its
	// working directory ("": rprof's own).
	Env []string
	Dir string
	// Stdin, Stdout and Stderr are passed to the target untouched (nil: the
	// null device).
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Label names the point in charts and comparisons (default: the
	// command's base name).
	Label string
}

// Counting is how the target is counted: chosen by `rprof run`'s counting
// flags, read by the backend (Resolve, Count) and by the subtraction of
// the overhead and idle baseline.
type Counting struct {
	// Backend names the counting backend (see Register): "" or "pmu"
	// counts with the PMU's counters.
	Backend string
	// Host is the machine the backend plans for and describes: its sysfs
	// and procfs trees (nil: this machine's /sys and /proc). Counters and
	// the target still run on this kernel.
	Host *machine.Host
	// Emulator holds the options of a backend that emulates the target
	// (Capabilities.Emulates); the others ignore it.
	Emulator EmulatorOptions

	// Events are extra events in perf syntax ("page-faults",
	// "cpu/event=0x3,umask=0x8f/"), counted on the target and reported
	// like `perf stat -e`.
	Events []string
	// Work and Traffic are analytic values (FLOPs, DRAM bytes) known from
	// the algorithm. When either is set, counters for W and Q are not used:
	// the target is only timed and the point is marked analytic.
	Work    *float64
	Traffic *float64

	// Regions are functions to measure one by one (`--region`): SYMBOL,
	// LIB:SYMBOL or FILE:0xADDR (see regions.ParseSpec), probed with eBPF
	// uprobes in every run of the target.
	Regions []string
	// LikwidMarkers also takes regions from the target's LIKWID marker
	// calls, named by their tags.
	LikwidMarkers bool

	// Overhead is a second command doing everything the target does except
	// the kernel (setup, allocation, teardown). It runs before each
	// repetition of the target under the same counters, and its W, Q, T and
	// event counts are subtracted (the method of seed 004).
	Overhead []string
	// IdleBaseline, when positive, measures the background DRAM rate for
	// this long right before the first repetition (system-wide memory
	// controller counters only) and subtracts rate x T from Q.
	IdleBaseline time.Duration

	// Node makes the run one rank of a parallel job on a node shared with
	// other ranks: it opens the memory-controller counters only when
	// elected to count the node's traffic for every local rank. Nil: a
	// lone process, which counts the traffic itself. A rank runs its
	// target once, without an overhead command or idle baseline, so that
	// the owner's counting window matches the other ranks' programs.
	Node Node
}

// Repetition is how many times the target runs: set by --repeat, --ci and
// their limits, read by the repetition loop and the statistics.
type Repetition struct {
	// Repeat is a fixed number of repetitions (0: 1, or adaptive when CI is
	// set). Negative is an error.
	Repeat int
	// CI, when positive, repeats until the confidence interval of the mean
	// time is within CI x mean (e.g. 0.02 for ±2%), or MaxRepeat
	// repetitions or MaxTime have been spent.
	CI        float64
	MaxRepeat int           // default DefaultMaxRepeat
	MaxTime   time.Duration // default DefaultMaxTime
	// Confidence is the level of every interval (default 0.95).
	Confidence float64
}

// Placement is where the point is placed: the roofs document and its
// thread scope, set from --roofs and --threads, read when the point is
// built (and by a backend that models the roofs' caches).
type Placement struct {
	// Roofs is the roofs document to place the point under; nil places
	// nothing. RoofsPath names it in the point (roofs_file).
	Roofs     *roofline.Roofs
	RoofsPath string
	// Threads picks the roofs' thread scope; 0 picks the largest scope
	// not above the online CPU count.
	Threads int
}

// EmulatorOptions are the options of a backend that runs the target
// under an emulator (the "emulate" backend).
type EmulatorOptions struct {
	// CacheModel is the hierarchy simulated (nil: the default model); a
	// model without levels counts W only.
	CacheModel *emulate.CacheModel
	// CPU is the QEMU CPU model presented to the target ("" or "host":
	// the host's identity, emulate.HostCPU).
	CPU string
	// QEMU is the emulator ("": emulate.FindQEMU looks for it).
	QEMU string
}

// Hooks let a caller take part in Run beyond the point it returns.
type Hooks struct {
	// CallGroups, when set, is given the completed calls of the function
	// regions in the target's last run, in the order they returned, and
	// splits them into groups, each reported as a region of its own in
	// place of all the run's regions, LIKWID marker regions included
	// (rprof dnn: the calls of one oneDNN primitive). It runs once the
	// target's output was copied to Stdout. Returning nil keeps the
	// regions as they are.
	CallGroups func(calls []regions.Call) []CallGroup
	// EmulatedCalls, when set, has a backend that CountsCalls count every
	// call of one function on its own in its emulated run, and hand the
	// calls over (rprof dnn: dnnl_primitive_execute); another backend
	// refuses it.
	EmulatedCalls *CallCounting
}

// CallGroup is a named part of the calls of function region Region (its
// index among Config.Counting.Regions).
type CallGroup struct {
	Name   string
	Region int
	Calls  []regions.Call
}

// CallCounting is a function whose calls an emulated run counts one by
// one, callees and all of the process's threads included, and where that
// run's output and calls go.
type CallCounting struct {
	// Function is LIB:SYMBOL, SYMBOL or FILE:0xADDR (regions.ParseSpec),
	// resolved against the target.
	Function string
	// Stdout and Stderr take the emulated run's streams in place of the
	// target's (nil: the null device).
	Stdout, Stderr io.Writer
	// Started, when set, is called as the emulated run starts, with the
	// emulator's name; Done is given the counted calls once it ended.
	Started func(emulator string)
	Done    func(CountedCalls)
}

// CountedCalls are the calls of CallCounting.Function in an emulated run.
type CountedCalls struct {
	// Path is the file that holds the function.
	Path string
	// Calls are the calls in the order they returned.
	Calls []emulate.Call
	// Mapped says that the run loaded Path; Images is how many processes
	// called the function.
	Mapped bool
	Images int
}

// Node coordinates the ranks of a parallel job on one node, so that
// exactly one process counts the node's memory-controller traffic
// (cluster.Session implements it).
type Node interface {
	// Elect says, before any counter is opened, whether this process
	// counts the node's traffic; others wait there until the owner's
	// counters run.
	Elect(ctx context.Context) (owner bool, err error)
	// Started is called once the counters run, just before the target
	// is released.
	Started() error
	// Ended is called once the target was reaped, before the
	// system-wide counters are stopped: the owner waits there for every
	// local rank's program to end.
	Ended(ctx context.Context) error
}

// Defaults of the adaptive repetition mode.
const (
	DefaultConfidence = 0.95
	DefaultMaxRepeat  = 30
	DefaultMaxTime    = 60 * time.Second
	// minAdaptive is the fewest repetitions an adaptive run makes before it
	// trusts an interval.
	minAdaptive = 3
)

// ErrInvalidConfig is matched by every error about a Config that cannot be
// run (empty command, bad repetition count, unparsable event...): the
// caller's input is wrong, nothing was run. Each is a *ConfigError naming
// the fields at fault, or an *ExclusionError.
var ErrInvalidConfig = errors.New("invalid configuration")

// ExclusionError is a Config whose counting backend cannot take an input
// it was given (the emulate backend counts W and Q itself: neither
// analytic figures nor events go with it). It matches ErrInvalidConfig.
type ExclusionError struct {
	// Backend is the backend asked for, e.g. BackendEmulate.
	Backend string
	// Events: the input is Events; else it is analytic Work or Traffic.
	Events bool
}

func (e *ExclusionError) Error() string {
	if e.Events {
		return fmt.Sprintf("%s: events are counted by the %s backend; the %s backend counts W and Q only", ErrInvalidConfig, DefaultBackend, e.Backend)
	}
	return fmt.Sprintf("%s: the %s backend counts W and Q: analytic work and traffic exclude it", ErrInvalidConfig, e.Backend)
}

// Is makes an ExclusionError match ErrInvalidConfig.
func (e *ExclusionError) Is(target error) bool { return target == ErrInvalidConfig }

// ConfigError is a Config that cannot be run, naming the fields at fault
// by their paths in Config ("Repetition.CI"): one, or those that do not
// go together. Its Kind is ErrInvalidConfig, which it matches. It is the
// refusal dnnrun and roofs make of their options too.
type ConfigError = badfield.Error

// Validate checks c before anything runs, as Run does first: a caller
// that does more before running (outputs, roofs, a lock) calls it first
// too. Errors match ErrInvalidConfig.
func (c Config) Validate() error {
	_, _, err := c.withDefaults()
	return err
}

// fieldErr is the refusal of the fields of Config at fault (their paths).
func fieldErr(err error, fields ...string) error {
	return badfield.New(ErrInvalidConfig, err, fields...)
}

// Validate checks the target's command.
func (t Target) Validate() error {
	if len(t.Command) == 0 || t.Command[0] == "" {
		return fieldErr(errors.New("is empty"), "Target.Command")
	}
	return nil
}

// Validate checks Repeat and CI, which exclude each other, and the
// adaptive mode's limits.
func (r Repetition) Validate() error {
	_, err := r.withDefaults()
	return err
}

// withDefaults checks r and fills its defaults.
func (r Repetition) withDefaults() (Repetition, error) {
	switch {
	case r.Repeat < 0:
		return r, fieldErr(fmt.Errorf("%d: must be at least 1", r.Repeat), "Repetition.Repeat")
	case r.CI < 0 || r.CI >= 1:
		return r, fieldErr(fmt.Errorf("%g: must be a fraction of the mean in (0, 1)", r.CI), "Repetition.CI")
	case r.CI > 0 && r.Repeat > 0:
		return r, fieldErr(errors.New("exclude each other: a fixed number of runs or an adaptive one"), "Repetition.Repeat", "Repetition.CI")
	}
	if r.Confidence == 0 {
		r.Confidence = DefaultConfidence
	}
	if !(r.Confidence > 0 && r.Confidence < 1) {
		return r, fieldErr(fmt.Errorf("%g: must be in (0, 1)", r.Confidence), "Repetition.Confidence")
	}
	if r.MaxRepeat == 0 {
		r.MaxRepeat = DefaultMaxRepeat
	}
	if r.MaxRepeat < 0 || (r.CI > 0 && r.MaxRepeat < minAdaptive) {
		return r, fieldErr(fmt.Errorf("%d: an adaptive run makes at least %d", r.MaxRepeat, minAdaptive), "Repetition.MaxRepeat")
	}
	if r.MaxTime == 0 {
		r.MaxTime = DefaultMaxTime
	}
	if r.MaxTime < 0 {
		return r, fieldErr(fmt.Errorf("%v: must be positive", r.MaxTime), "Repetition.MaxTime")
	}
	if r.Repeat == 0 && r.CI == 0 {
		r.Repeat = 1
	}
	return r, nil
}

// Validate checks the overhead command, the analytic values, the idle
// baseline and the region specs.
func (c Counting) Validate() error {
	_, err := c.regionSpecs()
	return err
}

// regionSpecs checks c, giving Regions parsed.
func (c Counting) regionSpecs() ([]regions.Spec, error) {
	if c.Overhead != nil && (len(c.Overhead) == 0 || c.Overhead[0] == "") {
		return nil, fieldErr(errors.New("is empty"), "Counting.Overhead")
	}
	for i, v := range []*float64{c.Work, c.Traffic} {
		if v != nil && !(*v >= 0) {
			return nil, fieldErr(fmt.Errorf("%g: must be a non-negative number", *v), []string{"Counting.Work", "Counting.Traffic"}[i])
		}
	}
	if c.IdleBaseline < 0 {
		return nil, fieldErr(fmt.Errorf("%v: must be positive", c.IdleBaseline), "Counting.IdleBaseline")
	}
	var specs []regions.Spec
	for _, r := range c.Regions {
		sp, err := regions.ParseSpec(r)
		if err != nil {
			return nil, fieldErr(err, "Counting.Regions")
		}
		specs = append(specs, sp)
	}
	return specs, nil
}

// Validate checks the thread scope asked for.
func (p Placement) Validate() error {
	if p.Threads < 0 {
		return fieldErr(fmt.Errorf("%d: must not be negative", p.Threads), "Placement.Threads")
	}
	return nil
}

// Validate checks the function whose calls are counted.
func (h Hooks) Validate() error {
	if h.EmulatedCalls != nil {
		if _, err := regions.ParseSpec(h.EmulatedCalls.Function); err != nil {
			return fieldErr(err, "Hooks.EmulatedCalls")
		}
	}
	return nil
}

// withDefaults checks c, each group and the rules between them, and
// fills its defaults, giving Regions parsed: Run checks once, here.
func (c Config) withDefaults() (Config, []regions.Spec, error) {
	if err := c.Target.Validate(); err != nil {
		return c, nil, err
	}
	var err error
	if c.Repetition, err = c.Repetition.withDefaults(); err != nil {
		return c, nil, err
	}
	specs, err := c.Counting.regionSpecs()
	if err != nil {
		return c, nil, err
	}
	if err := c.Hooks.Validate(); err != nil {
		return c, nil, err
	}
	if err := c.Placement.Validate(); err != nil {
		return c, nil, err
	}
	if err := c.checkRank(); err != nil {
		return c, nil, err
	}
	return c, specs, nil
}

// checkRank refuses a rank of a parallel job (Counting.Node) what it
// cannot do: the node's traffic owner counts one window for all local
// ranks, so each runs its target once and subtracts nothing.
func (c Config) checkRank() error {
	if c.Counting.Node == nil {
		return nil
	}
	fields := []string{"Counting.Node"}
	switch {
	case c.Repetition.CI > 0:
		fields = append(fields, "Repetition.CI")
	case c.Repetition.Repeat != 1:
		fields = append(fields, "Repetition.Repeat")
	}
	if c.Counting.Overhead != nil {
		fields = append(fields, "Counting.Overhead")
	}
	if c.Counting.IdleBaseline > 0 {
		fields = append(fields, "Counting.IdleBaseline")
	}
	if len(fields) == 1 {
		return nil
	}
	return fieldErr(errors.New("a rank of a parallel job runs its target once, without an overhead command or idle baseline: the node's traffic owner counts one window for all local ranks"), fields...)
}
