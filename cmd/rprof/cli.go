package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/rprof/rprof/cmd/rprof/internal/advice"
	"github.com/rprof/rprof/cmd/rprof/internal/flagval"
	"github.com/rprof/rprof/cmd/rprof/internal/render"
	"github.com/rprof/rprof/gpu/cuda"
	"github.com/rprof/rprof/machine"
	"github.com/rprof/rprof/measure"
	"github.com/rprof/rprof/roofline"
	"github.com/rprof/rprof/roofs"
)

// Exit statuses, one table for every command (exitCodes; the README's
// table is checked against it). `rprof run` otherwise exits with the
// target's status, as time(1) and perf stat do.
const (
	exitOK        = 0
	exitFailure   = 1   // a check failed: gate found a regression, doctor found counting unusable
	exitUsage     = 2   // bad command line or input document: the user must change it
	exitUndecided = 3   // gate: the data cannot decide (too few repetitions, the target failed, machines differ without roofs)
	exitInternal  = 125 // rprof could not do its work (measure, read, write)
	exitNoExec    = 126 // the target was found but is not executable
	exitNotFound  = 127 // the target was not found
	// exitInterrupted: rprof was interrupted (SIGINT or SIGTERM) before it
	// finished; as a shell reports a process killed by SIGINT. Only run
	// writes a document then (flagged roofline.FlagInterrupted).
	exitInterrupted = 128 + 2
)

// exitCodes describes every exit status rprof itself chooses.
var exitCodes = []struct {
	code    int
	meaning string
}{
	{exitOK, "success (`gate`: pass)"},
	{exitFailure, "a check failed (`gate`: regression; `doctor`: counting unusable)"},
	{exitUsage, "bad command line or input document (unknown flag, missing baseline, a document of another schema); nothing was measured"},
	{exitUndecided, "`gate`: could not decide (too few repetitions, the target failed, the machine differs without roofs to compare)"},
	{exitInternal, "rprof could not do its work: measuring (no counters, a failing overhead command, a roofs benchmark, another measurement still holding the machine after `--lock-timeout`), reading roofs or writing outputs failed"},
	{exitNoExec, "`run`, `gate`, `dnn`: the target is not executable"},
	{exitNotFound, "`run`, `gate`, `dnn`: the target was not found"},
	{exitInterrupted, "interrupted (Ctrl-C or SIGTERM): `run` writes the point of the repetitions that had ended, flagged `interrupted` (none had: nothing); every other command writes nothing. `run` also exits 130 when SIGINT killed the target, as its own status"},
}

// env is what a command may touch: its streams. Commands never reach for
// os.Stdout or os.Exit themselves, so tests run them in-process.
type env struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	// measure runs a target for run and gate: measure.Run, or recorded
	// points in tests.
	measure func(context.Context, measure.Config) (*roofline.Point, error)
	// cuda loads the CUDA driver for roofs --gpu: nil is cuda.Load; tests
	// give a fake.
	cuda func() (cuda.Driver, error)
	// roofs measures the roofs for roofs: nil is roofs.Measure; tests
	// give a fake.
	roofs func(context.Context, roofs.Options) (*roofs.Report, error)
	// host is the machine the global --sysfs and --procfs name, built
	// once for the command (nil: this machine, see machine).
	host *machine.Host
	// roots are the directories host was built from.
	roots machineFlags
}

// machine is the host the command describes: the one the global flags
// named, else this machine.
func (e *env) machine() *machine.Host {
	if e.host == nil {
		e.host, e.roots = machine.LiveHost(), machineFlags{sysfs: machine.DefaultSysfs, procfs: machine.DefaultProcfs}
	}
	return e.host
}

// machineRoots are the directories of the command's host.
func (e *env) machineRoots() machineFlags {
	e.machine()
	return e.roots
}

// command is one subcommand. Run parses its own flags from args.
type command struct {
	Name      string
	UsageLine string
	Short     string
	Long      string
	Run       func(ctx context.Context, e *env, args []string) error
}

// exitError carries a specific exit status out of a command.
type exitError struct {
	code int
	err  error // nil: exit silently with code
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// usageError marks bad command-line input (exit 2).
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return runEnv(ctx, &env{stdin: stdin, stdout: stdout, stderr: stderr, measure: advisedRun}, args)
}

// runEnv runs the command args name in e.
func runEnv(ctx context.Context, e *env, args []string) int {
	stderr := e.stderr
	if len(args) == 0 {
		printUsage(stderr)
		return exitUsage
	}
	args, err := parseGlobalFlags(e, args)
	if err != nil {
		fmt.Fprintf(stderr, "rprof: %v\n", err)
		return exitUsage
	}
	if len(args) == 0 {
		printUsage(stderr)
		return exitUsage
	}
	name := args[0]
	if name == "help" || name == "-h" || name == "--help" || name == "-help" {
		return help(ctx, e, args[1:])
	}
	if name == "--version" || name == "version" {
		fmt.Fprintln(e.stdout, version())
		return exitOK
	}
	cmd := lookup(name)
	if cmd == nil {
		fmt.Fprintf(stderr, "rprof: unknown command %q (see 'rprof help')\n", name)
		return exitUsage
	}
	err = cmd.Run(ctx, e, args[1:])
	return report(stderr, cmd, err)
}

// report turns a command's error into its exit status and one line on
// stderr.
func report(stderr io.Writer, cmd *command, err error) int {
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	var ue *usageError
	if errors.As(err, &ue) {
		fmt.Fprintf(stderr, "rprof %s: %s\nusage: %s\n", cmd.Name, ue.msg, cmd.UsageLine)
		return exitUsage
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil {
			fmt.Fprintf(stderr, "rprof %s: %s\n", cmd.Name, advice.Line(ee.err))
		}
		return ee.code
	}
	fmt.Fprintf(stderr, "rprof %s: %s\n", cmd.Name, advice.Line(err))
	if errors.Is(err, context.Canceled) {
		return exitInterrupted
	}
	// An error no command classified is rprof's own failure, never "a
	// check failed": a command that fails a check says so.
	return exitInternal
}

// advisedRun is measure.Run with the remedies added to its point's flags.
func advisedRun(ctx context.Context, cfg measure.Config) (*roofline.Point, error) {
	p, err := measure.Run(ctx, cfg)
	if p != nil {
		advice.Flags(p.Flags)
	}
	return p, err
}

// parseGlobalFlags takes the flags every command shares from the front of
// args, --sysfs DIR and --procfs DIR (as node_exporter's --path.sysfs and
// --path.procfs), and builds the command's host from them. It returns the
// command and its arguments.
func parseGlobalFlags(e *env, args []string) ([]string, error) {
	m := machineFlags{sysfs: machine.DefaultSysfs, procfs: machine.DefaultProcfs}
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		name, value, inline := strings.Cut(strings.TrimLeft(args[0], "-"), "=")
		dir := map[string]*string{"sysfs": &m.sysfs, "procfs": &m.procfs}[name]
		if dir == nil {
			break
		}
		args = args[1:]
		if !inline {
			if len(args) == 0 {
				return nil, fmt.Errorf("flag needs an argument: --%s", name)
			}
			value, args = args[0], args[1:]
		}
		*dir = value
	}
	if err := m.checkTrees(); err != nil {
		return nil, err
	}
	e.host, e.roots = machine.NewHost(m.sysfs, m.procfs), m
	return args, nil
}

func lookup(name string) *command {
	for _, c := range commands() {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// help prints a command's help: it parses the command's own flags with -h,
// so that the flag table is rendered from the very FlagSet the command
// parses ('rprof help dnn bench' is 'rprof dnn bench -h').
func help(ctx context.Context, e *env, args []string) int {
	if len(args) == 0 {
		printUsage(e.stdout)
		return exitOK
	}
	cmd := lookup(args[0])
	// Only a subcommand may follow the command: anything else would be
	// run ('rprof help run ls' must not run ls -h).
	if cmd == nil || len(args) > 2 || len(args) == 2 && helpDocs[args[0]+" "+args[1]] == nil {
		fmt.Fprintf(e.stderr, "rprof help: unknown command %q\n", strings.Join(args, " "))
		return exitUsage
	}
	return report(e.stderr, cmd, cmd.Run(ctx, e, append(slices.Clone(args[1:]), "-h")))
}

func printUsage(w io.Writer) {
	fmt.Fprintln(w, "rprof places programs on a roofline.\n\nusage: rprof <command> [arguments]\n\ncommands:")
	width := 0
	for _, c := range commands() {
		width = max(width, len(c.Name))
	}
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-*s  %s\n", width, c.Name, c.Short)
	}
	fmt.Fprintln(w, "\nglobal flags, before the command:\n  --sysfs DIR   root of the sysfs tree every command reads (default /sys)\n  --procfs DIR  root of the procfs tree every command reads (default /proc)")
	fmt.Fprintln(w, "\nUse 'rprof help <command>' for more about a command, 'rprof --version' for\nthe version.")
}

// newFlagSet returns a flag set that reports errors instead of exiting. A
// parse error becomes one line from report (the flag package's own message
// and usage dump are swallowed); -h prints the help of the command (or
// subcommand) of that name to stdout: its usage line, its prose and the
// table of this flag set's flags.
func newFlagSet(e *env, cmd string) *flag.FlagSet {
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	sink := &flagErrSink{}
	fs.SetOutput(sink)
	fs.Usage = func() {
		if sink.wrote { // an error, not -h: report prints it once
			return
		}
		writeHelp(e.stdout, helpDocs[cmd], fs)
	}
	return fs
}

// helpDocs are the help texts of the commands and subcommands, by the
// name their flag set carries. It is filled in init: the commands' Run
// functions reach newFlagSet, so a variable initialised from commands()
// would be an initialisation cycle.
var helpDocs = map[string]*command{}

func init() {
	for _, c := range append(commands(), subcommands()...) {
		helpDocs[c.Name] = c
	}
}

// writeHelp writes c's usage line and prose, then the flags of fs.
func writeHelp(w io.Writer, c *command, fs *flag.FlagSet) {
	fmt.Fprintf(w, "usage: %s\n\n%s\n", c.UsageLine, strings.TrimSpace(c.Long))
	own := flagRows(fs)
	var groups [][]render.FlagRow
	for _, g := range flagGroups {
		var in []render.FlagRow
		in, own = g.split(own)
		groups = append(groups, in)
	}
	// As fmt.Fprintf's, a stdout error is not reported.
	if len(own) > 0 {
		fmt.Fprintln(w, "\nFlags:")
		_ = render.WriteFlagTable(w, own)
	}
	for i, in := range groups {
		if len(in) > 0 {
			fmt.Fprintf(w, "\n%s:\n", flagGroups[i].title)
			_ = render.WriteFlagTable(w, in)
		}
	}
}

// flagGroups are the sets of flags that several commands register alike
// (one registration function each), listed apart in the help of a command
// that has the whole set: its own flags first, then the set's.
var flagGroups = []flagGroup{
	{"Measurement flags (rprof run and rprof gate share these)",
		func(fs *flag.FlagSet) { new(measureFlags).register(fs) }},
}

type flagGroup struct {
	title    string
	register func(*flag.FlagSet)
}

// split takes the group's rows out of rows when all of them are there,
// spelled as the group's registration spells them.
func (g flagGroup) split(rows []render.FlagRow) (in, rest []render.FlagRow) {
	scratch := flag.NewFlagSet("", flag.ContinueOnError)
	g.register(scratch)
	want := map[render.FlagRow]bool{}
	for _, r := range flagRows(scratch) {
		want[r] = true
	}
	for _, r := range rows {
		if want[r] {
			in = append(in, r)
		} else {
			rest = append(rest, r)
		}
	}
	if len(in) < len(want) {
		return nil, rows
	}
	return in, rest
}

// flagRows are the rows of fs's flags in the help, in the flag package's
// (sorted) order: the argument's word from the usage's `quoted` word, the
// default as the flag's Value prints it, left out when it is the zero
// value of its type.
func flagRows(fs *flag.FlagSet) []render.FlagRow {
	var rows []render.FlagRow
	fs.VisitAll(func(f *flag.Flag) {
		arg, usage := flag.UnquoteUsage(f)
		def := f.DefValue
		if isZeroDefault(f) {
			def = ""
		}
		rows = append(rows, render.FlagRow{Name: f.Name, Arg: arg, Usage: usage, Default: def})
	})
	return rows
}

// isZeroDefault says whether f's default is the zero value of its type
// ("", 0, false, 0s, 0%), which goes without saying.
func isZeroDefault(f *flag.Flag) (zero bool) {
	switch f.DefValue {
	case "", "0", "false", "[]":
		return true
	}
	t := reflect.TypeOf(f.Value)
	var z reflect.Value
	if t.Kind() == reflect.Pointer {
		z = reflect.New(t.Elem())
	} else {
		z = reflect.Zero(t)
	}
	v, ok := z.Interface().(flag.Value)
	if !ok {
		return false
	}
	// A Value whose String does not expect its zero value is not zero.
	defer func() {
		if recover() != nil {
			zero = false
		}
	}()
	return v.String() == f.DefValue
}

// flagErrSink notes that the flag package wrote an error message, which it
// does only before calling Usage for a parse error.
type flagErrSink struct{ wrote bool }

func (s *flagErrSink) Write(p []byte) (int, error) {
	s.wrote = true
	return len(p), nil
}

// parseFlags parses args, turning flag errors into usage errors.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return flagError(fs, args, err)
	}
	return checkRanges(fs)
}

// flagError says what was wrong with the flag the flag package stopped
// at, spelled as the help spells flags (its messages write -name), from
// the arguments and the flag set rather than from the message: an unknown
// flag with the defined one it looks like, a missing value with the word
// that names it, a refused value with the flag's own reason.
func flagError(fs *flag.FlagSet, args []string, err error) error {
	stop := len(args) - len(fs.Args()) // the package consumed args[:stop]
	if stop < 1 {
		return usagef("%v", err)
	}
	arg, value, hasValue := args[stop-1], "", false
	if stop >= 2 {
		// A value that starts with a dash follows its flag.
		if f, inline := flagval.Of(fs, args[stop-2]); f != nil && !flagval.IsBool(f) && !inline {
			arg, value, hasValue = args[stop-2], args[stop-1], true
		}
	}
	name, inline, isInline := strings.Cut(strings.TrimLeft(arg, "-"), "=")
	if isInline {
		value, hasValue = inline, true
	}
	spelled := dashed(name)
	f := fs.Lookup(name)
	switch {
	case !strings.HasPrefix(arg, "-"):
		return usagef("%v", err)
	case f == nil:
		hint := ""
		if near := nearestFlag(fs, name); near != "" {
			hint = "; did you mean " + dashed(near) + "?"
		}
		return usagef("unknown flag %s%s (see 'rprof help %s')", spelled, hint, fs.Name())
	case !hasValue:
		word, _ := flag.UnquoteUsage(f)
		return usagef("%s needs a value (%s)", spelled, word)
	}
	if serr := f.Value.Set(value); serr != nil {
		// The flag package's own values say only "parse error".
		if t := reflect.TypeOf(f.Value); t.Kind() == reflect.Pointer && t.Elem().PkgPath() == "flag" {
			if flagval.IsBool(f) {
				return usagef("%s=%s: a switch is true or false", spelled, value)
			}
			word, _ := flag.UnquoteUsage(f)
			return usagef("%s %s: not a valid %s", spelled, value, word)
		}
		return usagef("%s %s: %v", spelled, value, serr)
	}
	return usagef("%v", err)
}

// dashed spells a flag as the help does: --name, or -x for one letter.
func dashed(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// nearestFlag is the flag of fs that shares the longest beginning with
// name, at least three letters of it ("" when none does).
func nearestFlag(fs *flag.FlagSet, name string) string {
	best, bestLen := "", 2
	fs.VisitAll(func(f *flag.Flag) {
		n := 0
		for n < len(name) && n < len(f.Name) && name[n] == f.Name[n] {
			n++
		}
		if n > bestLen {
			best, bestLen = f.Name, n
		}
	})
	return best
}

// Flags whose zero or negative values mean nothing, in every command that
// has them: given on the command line, they are refused rather than read
// as "the default".
var (
	fractionFlags = map[string]string{"confidence": "0.95", "alpha": "0.05"} // name: an example
	countFlags    = []string{"fixed", "invocations", "max-repeat", "repeat"}
)

// checkRanges refuses a fraction flag outside (0, 1) and a count flag
// below 1, for the flags the command line set.
func checkRanges(fs *flag.FlagSet) error {
	var err error
	fs.Visit(func(f *flag.Flag) {
		v, perr := strconv.ParseFloat(f.Value.String(), 64)
		switch {
		case err != nil || perr != nil:
		case fractionFlags[f.Name] != "" && !(v > 0 && v < 1):
			err = usagef("--%s %s: must be in (0, 1), e.g. %s", f.Name, f.Value, fractionFlags[f.Name])
		case slices.Contains(countFlags, f.Name) && v < 1:
			err = usagef("--%s %s: must be at least 1", f.Name, f.Value)
		}
	})
	return err
}
