package emulate

import (
	"errors"
	"strings"
	"testing"
)

func TestIdentifyAcceptsOnlySupportedQEMU(t *testing.T) {
	for _, tt := range []struct {
		text    string
		version string // "" when refused
	}{
		{"qemu-x86_64 version 7.2.22 (Debian 1:7.2+dfsg-7+deb12u18+b3)\nCopyright...", "7.2.22"},
		{"qemu-x86_64 version 7.2.0\n", "7.2.0"},
		{"qemu-x86_64 version 8.2.2 (Debian 1:8.2.2+ds-0ubuntu1)\n", ""},
		{"qemu-x86_64 version 9.2.0\n", ""},
		{"garbage", ""},
	} {
		q, err := Identify("/usr/bin/qemu-x86_64", tt.text)
		if tt.version == "" {
			var ue *UnsupportedQEMUError
			if !errors.As(err, &ue) || !strings.Contains(err.Error(), "rprof supports QEMU 7.2 (plugin API 1)") || strings.Contains(err.Error(), "\n") {
				t.Errorf("%q: err %v, want one line naming what is supported", tt.text, err)
			}
			continue
		}
		if err != nil || q.Version != tt.version || q.PluginAPI != 1 || len(q.plugin) == 0 {
			t.Errorf("%q: %+v, %v", tt.text, q, err)
		}
	}
}

func TestParseCacheModel(t *testing.T) {
	for _, tt := range []struct {
		in, out string // out "" for an error
	}{
		{"48K/12,1M/16,32M/16", "48K/12,1M/16,32M/16,line=64"},
		{"32K/8, 256K/4, line=128", "32K/8,256K/4,line=128"},
		{"none", "none"},
		{"32M", ""},
		{"32M/0", ""},
		{"1K/32", ""}, // 32 ways of 64 B do not fit in 1 KiB
		{"32K/8,line=48", ""},
		{"1K/1,1K/1,1K/1,1K/1,1K/1", ""},
	} {
		m, err := ParseCacheModel(tt.in)
		switch {
		case tt.out == "" && !errors.Is(err, ErrBadCacheModel):
			t.Errorf("%q: %v, %v; want ErrBadCacheModel", tt.in, m, err)
		case tt.out != "" && (err != nil || m.String() != tt.out):
			t.Errorf("%q: %v, %v; want %s", tt.in, m, err, tt.out)
		}
	}
}
