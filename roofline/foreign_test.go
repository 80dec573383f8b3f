package roofline

import (
	"strings"
	"testing"
)

func TestForeignRoofs(t *testing.T) {
	zen5 := Machine{CPU: CPU{Vendor: "AuthenticAMD", Family: 26, Model: 2, ModelName: "AMD EPYC 9R45"}, Cores: 2, Hostname: "a"}
	spr := Machine{CPU: CPU{Vendor: "GenuineIntel", Family: 6, Model: 143, ModelName: "Intel Xeon Platinum 8488C"}, Cores: 48, Hostname: "b"}
	otherHost := zen5
	otherHost.Hostname = "c"
	moreCores := zen5
	moreCores.Cores = 4
	tests := []struct {
		name        string
		roofs, here Machine
		want        string
	}{
		{"same machine", zen5, zen5, ""},
		{"another CPU", spr, zen5, "CPU \"Intel Xeon Platinum 8488C\", not \"AMD EPYC 9R45\", 48 cores, not 2"},
		{"more cores", moreCores, zen5, "4 cores, not 2"},
		{"another host of a kind", otherHost, zen5, "host c, the point on a"},
		{"unknown fields are not compared", Machine{}, zen5, ""},
	}
	for _, tt := range tests {
		got := ForeignRoofs(tt.roofs, tt.here)
		if tt.want == "" && got != "" || !strings.Contains(got, tt.want) {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}
