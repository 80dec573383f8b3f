// Package dnnrun runs a program that uses oneDNN with the library's
// verbose trace on and places each primitive it executed on the roofline
// (rprof dnn): the groups of the trace, timed by oneDNN itself, with the
// analytic W and Q of package dnn, and optionally counted per call, by
// uprobes and counters (measure's pmu backend) or under QEMU (measure's
// emulate backend).
//
// Every run of the program goes through internal/launch, directly or
// through measure.Run, as rprof run's do: the same exit statuses, signal
// forwarding and target resolution.
// The package never prints or exits; its callers render the Result.
package dnnrun

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/rprof/rprof/dnn"
	"github.com/rprof/rprof/internal/badfield"
	"github.com/rprof/rprof/internal/launch"
	"github.com/rprof/rprof/machine"
	"github.com/rprof/rprof/measure"
	"github.com/rprof/rprof/roofline"

	"io"
)

// Execute is the function every oneDNN primitive execution goes through,
// from the C and the C++ API alike (oneDNN 1.x to 3.x); oneDNN prints an
// execution's verbose line inside it.
const Execute = "dnnl_primitive_execute"

// Counting modes (Options.Count).
const (
	CountPMU     = "pmu"
	CountEmulate = measure.BackendEmulate
)

// ErrInvalidOptions is matched by every error about Options that cannot
// be run (an *OptionError): the caller's input is wrong, nothing was run.
var ErrInvalidOptions = errors.New("invalid options")

// OptionError says which fields of Options are wrong and why; its Kind
// is ErrInvalidOptions, which it matches. It is measure's refusal of a
// Config too (a *measure.ConfigError): Kind tells them apart.
type OptionError = badfield.Error

// Validate checks o before anything runs, as Run does first.
func (o Options) Validate() error {
	invalid := func(err error, field string) error { return badfield.New(ErrInvalidOptions, err, field) }
	switch {
	case len(o.Command) == 0 || o.Command[0] == "":
		return invalid(errors.New("is empty"), "Command")
	case o.Count != "" && o.Count != CountPMU && o.Count != CountEmulate:
		return invalid(fmt.Errorf("%s: not a counting mode (%s or %s)", o.Count, CountPMU, CountEmulate), "Count")
	case len(o.Events) > 0 && o.Count != CountPMU:
		return invalid(fmt.Errorf("counts events per primitive call: it needs the %s counting mode", CountPMU), "Events")
	case !(o.Confidence > 0 && o.Confidence < 1):
		return invalid(fmt.Errorf("%g: must be in (0, 1)", o.Confidence), "Confidence")
	case o.Threads < 0:
		return invalid(fmt.Errorf("%d: must not be negative", o.Threads), "Threads")
	}
	return nil
}

// Options say what to run and how to count it.
type Options struct {
	// Command is the program's argv.
	Command []string
	// Env is its environment (nil: rprof's own); the verbose trace is
	// turned on in it.
	Env []string
	// Stdin, Stdout and Stderr are the program's streams: Stdout gets its
	// output less the verbose lines.
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Count counts every call of Execute too: "" (no), CountPMU or
	// CountEmulate. Events are counted per call with CountPMU. Library is
	// the file holding Execute (a soname is found as the loader would).
	Count   string
	Events  []string
	Library string
	// Emulation holds the options of CountEmulate (zero: their defaults).
	Emulation measure.EmulatorOptions
	// Roofs, RoofsPath, Threads and CPUs place the points (see
	// dnn.PointOptions); Confidence is the level of their intervals.
	Roofs      *roofline.Roofs
	RoofsPath  string
	Threads    int
	Confidence float64
	// Machine is where the points were measured (Count "pmu" takes the
	// probed run's).
	Machine roofline.Machine
	// Host is the machine the counting runs describe (measure.Counting's
	// Host; nil: this machine).
	Host *machine.Host
	// Measure runs the probed run of CountPMU and the runs of
	// CountEmulate (nil: measure.Run).
	Measure func(context.Context, measure.Config) (*roofline.Point, error)
	// Counting, when set, is called as the emulated run of CountEmulate
	// starts, with the emulator's name.
	Counting func(emulator string)
}

func (o Options) measure() func(context.Context, measure.Config) (*roofline.Point, error) {
	if o.Measure != nil {
		return o.Measure
	}
	return measure.Run
}

// Result is what the runs gave.
type Result struct {
	// Trace is the timed run's verbose trace; Groups its executions
	// grouped, longest total time first; Points their points (parallel).
	Trace  *dnn.Trace
	Groups []*dnn.Group
	Points []roofline.Point
	// ExitCode is the program's exit status (128+N when signal N killed
	// it).
	ExitCode int
	// StdoutErr is the error that stopped the program's output from
	// passing on to Options.Stdout (the trace was read to its end).
	StdoutErr error
	// Probed and Emulated are the counting of CountPMU and CountEmulate.
	Probed   *Probed
	Emulated *Emulated
}

// runTraced runs spec with its stdout through a splitter that gives tr
// the verbose lines and spec.Stdout the rest, and returns the exit status
// and the error that stopped the passing on, if any: the output is read
// to its end whatever happens to spec.Stdout, so that the program is never
// blocked on a full pipe.
func runTraced(ctx context.Context, spec launch.Spec, tr *dnn.Trace) (code int, outErr error, err error) {
	out := &passOn{w: spec.Stdout}
	if out.w == nil {
		out.w = io.Discard
	}
	split := tr.Splitter(out)
	spec.Stdout = split
	r, err := launch.Run(ctx, spec)
	split.Close()
	if err != nil {
		return 0, nil, err
	}
	return r.ExitCode, out.err, nil
}

// passOn writes to w until a write fails, then drops the rest and keeps
// the error.
type passOn struct {
	w   io.Writer
	err error
}

func (p *passOn) Write(b []byte) (int, error) {
	if p.err == nil {
		_, p.err = p.w.Write(b)
	}
	return len(b), nil
}

// Run runs o.Command with the verbose trace on: natively, probed with
// CountPMU, then once more under emulation with CountEmulate. An
// interruption (ctx) ends the runs; the result then holds what was read.
// A trace without executions is no error: see Result.Groups and
// dnn.Trace.Why. Errors: an *OptionError (Validate), *launch.Error (not
// found, not executable), measure's errors, and *EmulatedRunError.
func Run(ctx context.Context, o Options) (*Result, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	env := o.Env
	if env == nil {
		env = os.Environ()
	}
	env = verboseEnv(env)
	r := &Result{}
	var err error
	switch o.Count {
	case CountPMU:
		if r.Probed, err = runProbed(ctx, o, env); err != nil {
			return nil, err
		}
		r.Trace, r.ExitCode, r.Groups = r.Probed.trace, r.Probed.Whole.Exit.Code, r.Probed.groups
		if m := r.Probed.Whole.Machine; m.CPU.Vendor != "" {
			// As measured.
			o.Machine = m
		}
	case CountEmulate:
		r.Trace = &dnn.Trace{}
		if r.Emulated, r.ExitCode, r.StdoutErr, err = runEmulated(ctx, o, env, r.Trace); err != nil {
			return nil, err
		}
		r.Groups = r.Trace.Groups()
	default:
		r.Trace = &dnn.Trace{}
		if r.ExitCode, r.StdoutErr, err = runTraced(ctx, launch.Spec{Argv: o.Command, Env: env, Stdin: o.Stdin, Stdout: o.Stdout, Stderr: o.Stderr}, r.Trace); err != nil {
			return nil, err
		}
		r.Groups = r.Trace.Groups()
	}
	if ctx.Err() == nil && len(r.Groups) > 0 {
		r.Points = r.Place(o)
	}
	return r, nil
}

// Place makes the points of r's groups (parallel to them), with the
// counting's figures and flags, placed as o says.
func (r *Result) Place(o Options) []roofline.Point {
	opts := dnn.PointOptions{
		Command: o.Command, Created: time.Now().UTC(), Confidence: o.Confidence,
		Roofs: o.Roofs, RoofsFile: o.RoofsPath, Threads: o.Threads, CPUs: LibraryThreads(r.Trace.Info), Trace: r.Trace,
		Machine: o.Machine,
	}
	if r.Emulated != nil {
		r.Emulated.apply(r.Groups, &opts)
	}
	points := dnn.Points(r.Groups, opts)
	for i := range points {
		points[i].Exit = roofline.Exit{Code: r.ExitCode}
	}
	if r.Probed != nil {
		nthr, _ := ReportedThreads(r.Trace.Info)
		r.Probed.annotate(points, nthr)
	}
	if r.Emulated != nil {
		r.Emulated.annotate(points)
	}
	return points
}

// verboseEnv turns oneDNN's verbose trace on, keeping a level the user set
// (2 or "all" adds creations, which are read and not timed).
func verboseEnv(env []string) []string {
	out := env[:0:0]
	keep := map[string]bool{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if (k == "ONEDNN_VERBOSE" || k == "DNNL_VERBOSE") && (v == "" || v == "0" || v == "none") {
			continue
		}
		keep[k] = true
		out = append(out, kv)
	}
	for _, k := range []string{"ONEDNN_VERBOSE", "DNNL_VERBOSE"} {
		if !keep[k] {
			out = append(out, k+"=1")
		}
	}
	return out
}

// LibraryThreads is the thread count oneDNN reported, or the online CPUs.
func LibraryThreads(info dnn.Info) int {
	if n, ok := ReportedThreads(info); ok {
		return n
	}
	return measure.OnlineCPUs()
}

// ReportedThreads is the thread count in oneDNN's header ("OpenMP,nthr:2").
func ReportedThreads(info dnn.Info) (int, bool) {
	if _, n, ok := strings.Cut(info.Runtime, "nthr:"); ok {
		if v, err := strconv.Atoi(n); err == nil && v > 0 {
			return v, true
		}
	}
	return 0, false
}
