package main

import (
	"strings"
	"testing"
	"time"
)

func TestDurationFlagNamesWhatIsWrong(t *testing.T) {
	tests := []struct {
		in      string
		want    time.Duration
		wantErr string
	}{
		{"25s", 25 * time.Second, ""},
		{"1m30s", 90 * time.Second, ""},
		{"0", 0, ""},
		{"20", 0, "needs a unit, e.g. 20s or 20ms"},
		{"0.5", 0, "needs a unit, e.g. 0.5s or 0.5ms"},
		{"soon", 0, "not a duration"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			var d time.Duration
			err := durationFlag{&d}.Set(tt.in)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("Set(%q) = %v", tt.in, err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("Set(%q) = %v, want an error saying %q", tt.in, err, tt.wantErr)
			case d != tt.want:
				t.Errorf("Set(%q) gave %v, want %v", tt.in, d, tt.want)
			}
		})
	}
}
