package main

import (
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/rprof/rprof/gpu/ncu"
	"github.com/rprof/rprof/internal/testutil"
)

// TestEveryCommandsHelpSpellsFlagsAlike runs every command's -h and
// 'rprof help' output through one check: long flags with two dashes, one
// letter flags with one, in both, and -h lists no flag the help text
// spells otherwise.
func TestEveryCommandsHelpSpellsFlagsAlike(t *testing.T) {
	singleDashLong := regexp.MustCompile(`(?m)(^|[\s(\[,'])-[a-z][a-z0-9]+(-[a-z0-9]+)*\b`)
	flagLine := regexp.MustCompile(`(?m)^  (-{1,2})([a-z][a-z0-9-]*)`)
	for _, c := range commands() {
		t.Run(c.Name, func(t *testing.T) {
			code, short, _ := rprofCLI(t, c.Name, "-h")
			if code != exitOK {
				t.Fatalf("rprof %s -h: exit %d", c.Name, code)
			}
			_, long, _ := rprofCLI(t, "help", c.Name)
			for _, m := range flagLine.FindAllStringSubmatch(short, -1) {
				dash, name := m[1], m[2]
				if (len(name) == 1) != (dash == "-") {
					t.Errorf("-h spells %s%s", dash, name)
				}
			}
			for _, m := range singleDashLong.FindAllString(long, -1) {
				m = strings.TrimSpace(strings.TrimLeft(m, "([,'"))
				// -e and -o are one-letter flags; -fuzz and the like are
				// other programs' flags, quoted in prose.
				if name := strings.TrimPrefix(m, "-"); defines(short, name) {
					t.Errorf("'rprof help %s' spells %s with one dash", c.Name, m)
				}
			}
		})
	}
}

// defines says whether -h output lists a long flag of that name.
func defines(short, name string) bool {
	return strings.Contains(short, "\n  --"+name+" ") || strings.Contains(short, "\n  --"+name+"\n")
}

// helpCommands are the argument lists that name each command and
// subcommand with help of its own: ["gate"], ["dnn", "bench"].
func helpCommands() [][]string {
	var cmds [][]string
	for _, c := range append(commands(), subcommands()...) {
		cmds = append(cmds, strings.Fields(c.Name))
	}
	return cmds
}

// flagRow is one row of a help's flag table, read back from the text.
type flagRow struct{ name, arg, usage string }

// helpFlagRows reads the flag tables at the end of a help text ("Flags:",
// then any group's, each under its title): a row is "  --name ARG
// usage...", its usage continued on lines indented past the name column
// (or starting there, when the name fills the column).
func helpFlagRows(t *testing.T, help string) []flagRow {
	t.Helper()
	_, table, ok := strings.Cut(help, "\nFlags:\n")
	if !ok {
		t.Fatalf("no Flags: section in\n%s", help)
	}
	var rows []flagRow
	title := regexp.MustCompile(`^[A-Z][^:]*:$`)
	for _, line := range strings.Split(strings.TrimRight(table, "\n"), "\n") {
		if line == "" || title.MatchString(line) {
			continue
		}
		if m := helpFlag.FindStringSubmatch(line); m != nil {
			head, usage, _ := strings.Cut(strings.TrimSpace(line), "  ")
			name, arg, _ := strings.Cut(head, " ")
			rows = append(rows, flagRow{name: strings.TrimLeft(name, "-"), arg: arg, usage: strings.TrimSpace(usage)})
			continue
		}
		if len(rows) == 0 || !strings.HasPrefix(line, "    ") {
			t.Fatalf("line %q of the flag table is neither a flag nor a continuation", line)
		}
		rows[len(rows)-1].usage = strings.TrimSpace(rows[len(rows)-1].usage + " " + strings.TrimSpace(line))
	}
	return rows
}

// TestEveryFlagIsDocumented reads each command's flag table, which is
// rendered from its FlagSet: every flag says what it does, and every
// flag that takes an argument names it (a `WORD` in its usage), not by
// its Go type, and none sends the reader below the table, which ends the
// help.
func TestEveryFlagIsDocumented(t *testing.T) {
	goTypes := map[string]bool{"value": true, "string": true, "int": true, "uint": true, "float": true, "duration": true}
	for _, cmd := range helpCommands() {
		t.Run(strings.Join(cmd, "-"), func(t *testing.T) {
			code, help, stderr := rprofCLI(t, append(cmd, "-h")...)
			if code != exitOK {
				t.Fatalf("-h: exit %d: %s", code, stderr)
			}
			rows := helpFlagRows(t, help)
			if len(rows) == 0 {
				t.Fatal("no flags listed")
			}
			for _, r := range rows {
				if r.usage == "" {
					t.Errorf("--%s has no usage: give it one where the command defines it", r.name)
				}
				if strings.Contains(r.usage, "below)") {
					t.Errorf("--%s points below, but the flag table ends the help: %s", r.name, r.usage)
				}
				if goTypes[r.arg] {
					t.Errorf("--%s names its argument %q, its Go type: put a `WORD` in its usage", r.name, r.arg)
				}
			}
		})
	}
}

// TestHelpIsTheFlagSetsHelp: 'rprof help X' is 'rprof X -h', whose flag
// table the command's own FlagSet renders, and the usage line names only
// flags the command defines.
func TestHelpIsTheFlagSetsHelp(t *testing.T) {
	usageFlag := regexp.MustCompile(`(?:^|[\s\[|])--?([a-z][a-z0-9-]*)`)
	for _, cmd := range helpCommands() {
		t.Run(strings.Join(cmd, "-"), func(t *testing.T) {
			_, short, _ := rprofCLI(t, append(cmd, "-h")...)
			code, long, stderr := rprofCLI(t, append([]string{"help"}, cmd...)...)
			if code != exitOK {
				t.Fatalf("help: exit %d: %s", code, stderr)
			}
			if long != short {
				t.Errorf("'rprof help %s' differs from -h:\n%s\n----\n%s", strings.Join(cmd, " "), long, short)
			}
			defined := map[string]bool{}
			for _, r := range helpFlagRows(t, short) {
				defined[r.name] = true
			}
			usage, _, _ := strings.Cut(short, "\n\n")
			for _, m := range usageFlag.FindAllStringSubmatch(usage, -1) {
				if !defined[m[1]] {
					t.Errorf("the usage line names -%s, which the command does not define: %s", m[1], usage)
				}
			}
		})
	}
}

// TestHelpGolden keeps two commands' whole help as a user reads it
// (go test -update rewrites testdata/help).
func TestHelpGolden(t *testing.T) {
	for _, cmd := range []string{"gate", "compare"} {
		t.Run(cmd, func(t *testing.T) {
			_, help, _ := rprofCLI(t, "help", cmd)
			testutil.Golden(t, "testdata/help/"+cmd+".txt", []byte(help))
		})
	}
}

// TestHelpFitsEightyColumns: every line of every help is at most 80
// characters wide, except an unbreakable example.
func TestHelpFitsEightyColumns(t *testing.T) {
	for _, cmd := range append(helpCommands(), nil) { // nil: 'rprof help'
		_, help, _ := rprofCLI(t, append([]string{"help"}, cmd...)...)
		for _, line := range strings.Split(help, "\n") {
			if utf8.RuneCountInString(line) > 80 && strings.Contains(strings.TrimSpace(line), " ") {
				t.Errorf("'rprof help %s': a line of %d columns: %s", strings.Join(cmd, " "), utf8.RuneCountInString(line), line)
			}
		}
	}
}

// TestImportHelpGivesTheMetricList keeps docs/gpu.md's word ("'rprof
// help import' gives the metric list"): the help's ncu command line, its
// braces spelled out, asks for every metric the reader requires.
func TestImportHelpGivesTheMetricList(t *testing.T) {
	_, help, _ := rprofCLI(t, "help", "import")
	asked := map[string]bool{}
	for _, m := range regexp.MustCompile(`[a-z0-9_{},]+\.(?:sum|avg\.per_second)|device__attribute_display_name`).FindAllString(help, -1) {
		for _, name := range expandBraces(strings.TrimPrefix(strings.TrimLeft(m, ","), ",")) {
			for _, part := range strings.Split(name, ",") {
				asked[part] = true
			}
		}
	}
	for _, m := range ncu.Required() {
		if !asked[m] {
			t.Errorf("'rprof help import' does not ask ncu for %s", m)
		}
	}
}

// expandBraces spells out shell braces: a{b,c}d is abd and acd.
func expandBraces(s string) []string {
	open := strings.Index(s, "{")
	if open < 0 {
		return []string{s}
	}
	end := open + strings.Index(s[open:], "}")
	var out []string
	for _, alt := range strings.Split(s[open+1:end], ",") {
		out = append(out, expandBraces(s[:open]+alt+s[end+1:])...)
	}
	return out
}

// TestHelpNamesOnlyCommands: help takes a command and, for dnn, its
// subcommand; any other word is refused, never passed on to the command
// (which would run it: 'rprof help run ls' is not 'rprof run ls -h').
func TestHelpNamesOnlyCommands(t *testing.T) {
	tests := []struct {
		args []string
		code int
	}{
		{[]string{"help", "run"}, exitOK},
		{[]string{"help", "dnn", "bench"}, exitOK},
		{[]string{"help", "run", "ls"}, exitUsage},
		{[]string{"help", "dnn", "bench", "all"}, exitUsage},
		{[]string{"help", "nope"}, exitUsage},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, stdout, stderr := rprofCLI(t, tt.args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d; stderr: %s", code, tt.code, stderr)
			}
			if tt.code != exitOK && (stdout != "" || !strings.Contains(stderr, "unknown command")) {
				t.Errorf("stdout %q, stderr %q: want only the unknown command on stderr", stdout, stderr)
			}
		})
	}
}

// TestFlagErrorsSpellFlagsAsTheHelpDoes: a bad flag is named --name (the
// flag package's messages say -name), an unknown one with the flag it
// looks like, a missing value with its word, a refused value with why.
func TestFlagErrorsSpellFlagsAsTheHelpDoes(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"run", "--repeats", "5", "--", "true"}, "rprof run: unknown flag --repeats; did you mean --repeat? (see 'rprof help run')"},
		{[]string{"plot", "-x"}, "rprof plot: unknown flag -x (see 'rprof help plot')"},
		{[]string{"gate", "--baseline", "b.json", "--max-slowdown"}, "rprof gate: --max-slowdown needs a value (PCT)"},
		{[]string{"run", "--repeat", "x", "--", "true"}, "rprof run: --repeat x: not a valid N"},
		{[]string{"run", "--ci", "-2", "--", "true"}, `rprof run: --ci -2: "-2" is not a share of the mean in (0, 1), e.g. 2% or 0.02`},
		{[]string{"roofs", "--quick=maybe"}, "rprof roofs: --quick=maybe: a switch is true or false"},
		{[]string{"dnn", "bench", "--threds", "2"}, "rprof dnn: unknown flag --threds; did you mean --threads? (see 'rprof help dnn bench')"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, _, stderr := rprofCLI(t, tt.args...)
			if first, _, _ := strings.Cut(stderr, "\n"); code != exitUsage || first != tt.want {
				t.Errorf("exit %d, first line\n%s\nwant\n%s", code, first, tt.want)
			}
		})
	}
}

// TestSharedMeasurementFlagsAreListedApart: run and gate, which take the
// whole of measureFlags, list it after their own flags; dnn and roofs,
// which share a few of its flags, list those with their own.
func TestSharedMeasurementFlagsAreListedApart(t *testing.T) {
	section := "\n" + flagGroups[0].title + ":\n"
	for cmd, apart := range map[string]bool{"run": true, "gate": true, "dnn": false, "roofs": false} {
		_, help, _ := rprofCLI(t, "help", cmd)
		own, shared, found := strings.Cut(help, section)
		if found != apart {
			t.Errorf("'rprof help %s' lists the measurement flags apart: %v, want %v", cmd, found, apart)
			continue
		}
		if apart && (!strings.Contains("\n"+shared, "\n  --cache-model M ") || strings.Contains(own, "\n  --cache-model ")) {
			t.Errorf("'rprof help %s': --cache-model is not in the measurement flags alone", cmd)
		}
	}
}
