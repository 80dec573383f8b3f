package termtext

import "testing"

func TestCleanLeavesNothingATerminalActsOn(t *testing.T) {
	tests := []struct {
		name, in string
		max      int
		want     string
	}{
		{"plain text", "rprof roofs (pid 12)", 0, "rprof roofs (pid 12)"},
		{"an escape sequence", "\x1b[2J\x1b]0;owned\x07hi", 0, "?[2J?]0;owned?hi"},
		{"newlines and tabs", "a\nb\tc\r", 0, "a?b?c?"},
		{"C1 control", "a\u009bb", 0, "a?b"},
		{"a right-to-left override", "abc\u202edef", 0, "abc?def"},
		{"invalid UTF-8", "a\xffb", 0, "a?b"},
		{"letters of any script", "größe 測定", 0, "größe 測定"},
		{"cut", "abcdefgh", 5, "abcde..."},
		{"cut before a rune that does not fit", "ab測", 4, "ab..."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Clean(tt.in, tt.max); got != tt.want {
				t.Errorf("Clean(%q, %d) = %q, want %q", tt.in, tt.max, got, tt.want)
			}
		})
	}
}
