package main

import (
	"regexp"
	"strings"
	"testing"
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

// TestHelpListsEveryFlagOfTheFlagSet keeps each command's long help true
// to its flag set: every flag -h prints (the FlagSet's own listing) is in
// 'rprof help COMMAND', and the help names no flag the set lacks.
func TestHelpListsEveryFlagOfTheFlagSet(t *testing.T) {
	for _, c := range commands() {
		t.Run(c.Name, func(t *testing.T) {
			_, short, _ := rprofCLI(t, c.Name, "-h")
			_, long, _ := rprofCLI(t, "help", c.Name)
			set := map[string]bool{}
			for _, m := range helpFlag.FindAllStringSubmatch(short, -1) {
				set[m[1]] = true
				if !defines(long, m[1]) && !strings.Contains(long, "\n  -"+m[1]+" ") {
					t.Errorf("'rprof help %s' does not list --%s, which the command defines", c.Name, m[1])
				}
			}
			for _, m := range helpFlag.FindAllStringSubmatch(long, -1) {
				if !set[m[1]] {
					t.Errorf("'rprof help %s' lists --%s, which the command does not define", c.Name, m[1])
				}
			}
		})
	}
}
