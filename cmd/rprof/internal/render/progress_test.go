package render

import (
	"strings"
	"testing"
)

func TestProgressShowsStepsOnlyOnATerminalAndSaysLinesEverywhere(t *testing.T) {
	tests := []struct {
		on   bool
		want string
	}{
		{false, "stopping\n"},
		{true, "\r\033[Kstep 1\r\033[Kstep 2\r\033[Kstopping\n"},
	}
	for _, tt := range tests {
		var b strings.Builder
		p := NewProgress(&b, tt.on)
		p.Show("step 1")
		p.Show("step 2")
		p.Say("stopping")
		p.Clear()
		if b.String() != tt.want {
			t.Errorf("on=%v: wrote %q, want %q", tt.on, b.String(), tt.want)
		}
	}
}
