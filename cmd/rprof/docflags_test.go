package main

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDocsUseOnlyFlagsThatExist reads every command line of README.md and
// docs/*.md (indented and fenced blocks) that runs rprof, and checks each
// flag it gives before the target's "--" is one the command defines: a
// renamed or removed flag fails here, not in a user's terminal.
func TestDocsUseOnlyFlagsThatExist(t *testing.T) {
	files, _ := filepath.Glob("../../docs/*.md")
	files = append(files, "../../README.md")
	flags := map[string]map[string]bool{} // command -> its flags, from -h
	defined := func(cmd []string) map[string]bool {
		key := strings.Join(cmd, " ")
		if f, ok := flags[key]; ok {
			return f
		}
		_, short, _ := rprofCLI(t, append(append([]string{}, cmd...), "-h")...)
		f := map[string]bool{"h": true, "help": true}
		for _, m := range helpFlag.FindAllStringSubmatch(short, -1) {
			f[m[1]] = true
		}
		flags[key] = f
		return f
	}
	n := 0
	for _, file := range files {
		for _, l := range docCommandLines(t, file) {
			cmd, args := l.words[:1], l.words[1:]
			if cmd[0] == "dnn" && len(args) > 0 && args[0] == "bench" {
				cmd, args = l.words[:2], l.words[2:]
			}
			known := defined(cmd)
			n++
			for _, a := range args {
				if a == "--" || strings.ContainsAny(a[:1], "|;&>)#") {
					break
				}
				if !strings.HasPrefix(a, "-") || a == "-" {
					continue
				}
				name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
				if !known[name] {
					t.Errorf("%s:%d: rprof %s has no flag %s: %s", filepath.Base(file), l.line, strings.Join(cmd, " "), a, l.text)
				}
			}
		}
	}
	if n < 20 {
		t.Errorf("found %d rprof command lines in the docs: the scan is broken", n)
	}
}

// helpFlag matches a flag line of -h output ("  --name ARG", "  -e EVENT").
var helpFlag = regexp.MustCompile(`(?m)^  --?([a-z][a-z0-9-]*)`)

type docLine struct {
	line  int
	text  string
	words []string // after "rprof": the command, then its arguments
}

// rprofCall finds "rprof COMMAND" in a line of a block: at its start or
// after a launcher, a pipe or a shell keyword, never inside a path.
var rprofCall = regexp.MustCompile(`(?:^|[\s|&;(])rprof\s+([a-z]+)(.*)$`)

// docCommandLines returns the rprof command lines of a Markdown file's
// code blocks (indented by four spaces, or fenced), continuation lines
// ("\" at the end) joined.
func docCommandLines(t *testing.T, path string) []docLine {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []docLine
	sc := bufio.NewScanner(f)
	fenced, n, start := false, 0, 0
	var pending string
	for sc.Scan() {
		n++
		text := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(text), "```") {
			fenced = !fenced
			continue
		}
		if !fenced && !strings.HasPrefix(text, "    ") {
			pending = ""
			continue
		}
		if pending == "" {
			start = n
		}
		if s, ok := strings.CutSuffix(strings.TrimRight(text, " "), "\\"); ok {
			pending += s + " "
			continue
		}
		text, pending = pending+text, ""
		m := rprofCall.FindStringSubmatch(text)
		if m == nil || lookup(m[1]) == nil {
			continue
		}
		words := append([]string{m[1]}, shellWords(m[2])...)
		out = append(out, docLine{line: start, text: strings.TrimSpace(text), words: words})
	}
	return out
}

// shellWords splits s at blanks outside single and double quotes, as sh
// does (without expansions): a quoted --overhead command is one word.
func shellWords(s string) []string {
	var words []string
	var w strings.Builder
	in, quote := false, rune(0)
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			w.WriteRune(r)
		case r == '\'' || r == '"':
			quote, in = r, true
		case r == ' ' || r == '\t':
			if in {
				words = append(words, w.String())
				w.Reset()
				in = false
			}
		default:
			w.WriteRune(r)
			in = true
		}
	}
	if in {
		words = append(words, w.String())
	}
	return words
}
