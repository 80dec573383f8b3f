package render

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// FlagRow is one flag of a command's help: its name without dashes, the
// word naming its argument ("" for a switch), what it does, and its
// default as the flag reads it ("" when the default is the zero value).
type FlagRow struct {
	Name, Arg, Usage, Default string
}

// Flag table layout: names and arguments in a column of at most
// flagColumn characters, descriptions wrapped at helpWidth.
const (
	helpWidth  = 79
	flagColumn = 24
)

// WriteFlagTable writes the rows as 'rprof help' lists flags: --name for
// long names, -x for one letter, the argument's word after the name, the
// description aligned in a second column and wrapped to 80 columns, a
// name too long for the column with its description on the next line.
func WriteFlagTable(w io.Writer, rows []FlagRow) error {
	lefts := make([]string, len(rows))
	col := 0
	for i, r := range rows {
		dash := "--"
		if len(r.Name) == 1 {
			dash = "-"
		}
		lefts[i] = "  " + dash + r.Name
		if r.Arg != "" {
			lefts[i] += " " + r.Arg
		}
		if n := utf8.RuneCountInString(lefts[i]); n <= flagColumn && n > col {
			col = n
		}
	}
	col += 2
	var b strings.Builder
	for i, r := range rows {
		text := r.Usage
		if r.Default != "" {
			text += " (default " + r.Default + ")"
		}
		lines := WrapWords(text, helpWidth-col)
		left := lefts[i]
		if utf8.RuneCountInString(left)+2 > col {
			b.WriteString(left + "\n")
			left = ""
		}
		for _, l := range lines {
			b.WriteString(fmt.Sprintf("%-*s%s\n", col, left, l))
			left = ""
		}
		if len(lines) == 0 {
			b.WriteString(left + "\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WrapWords breaks text at spaces into lines of at most width characters
// (a longer word stands alone on its line).
func WrapWords(text string, width int) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(text) {
		switch {
		case line == "":
			line = word
		case utf8.RuneCountInString(line)+1+utf8.RuneCountInString(word) <= width:
			line += " " + word
		default:
			lines = append(lines, line)
			line = word
		}
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}
