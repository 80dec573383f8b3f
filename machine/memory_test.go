package machine

import (
	"errors"
	"strings"
	"testing"
	"testing/fstest"
)

func TestMemAvailableReadsMeminfo(t *testing.T) {
	tests := []struct {
		name, meminfo string
		want          int64
		wantErr       string
	}{
		{"a kernel's meminfo", "MemTotal:       24684092 kB\nMemFree:        22277520 kB\nMemAvailable:   24135960 kB\n", 24135960 << 10, ""},
		{"an old kernel without it", "MemTotal:       1024 kB\nMemFree:        512 kB\n", 0, "no MemAvailable"},
		{"not kB", "MemAvailable:   12 MB\n", 0, "want a count of kB"},
		{"not a number", "MemAvailable:   lots kB\n", 0, "want a count of kB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := MemAvailable(fstest.MapFS{"meminfo": {Data: []byte(tt.meminfo)}})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("MemAvailable = %d, %v; want %d", got, err, tt.want)
			}
		})
	}
	if _, err := MemAvailable(fstest.MapFS{"meminfo": {Data: []byte("MemTotal: 1 kB\n")}}); !errors.Is(err, ErrNoMemAvailable) {
		t.Errorf("err = %v, want ErrNoMemAvailable", err)
	}
	if _, err := MemAvailable(fstest.MapFS{}); err == nil {
		t.Error("no meminfo: want an error")
	}
}
