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

// The caches a roofs document measured are the CPU's: another host of
// the same CPU and cores shares them, an unnamed CPU does not.
func TestRoofsDescribeTheCachesOfTheSameCPUOnly(t *testing.T) {
	zen5 := Machine{CPU: CPU{Vendor: "AuthenticAMD", Family: 26, Model: 2, ModelName: "AMD EPYC 9R45"}, Cores: 2, Hostname: "a"}
	otherHost, moreCores, byFamily, otherModel := zen5, zen5, zen5, zen5
	otherHost.Hostname = "c"
	moreCores.Cores = 4
	byFamily.CPU.ModelName = ""
	otherModel.CPU.ModelName, otherModel.CPU.Model = "", 68
	for _, tt := range []struct {
		name        string
		roofs, here Machine
		same        bool
	}{
		{"same machine", zen5, zen5, true},
		{"another host of a kind", otherHost, zen5, true},
		{"named by vendor, family and model", byFamily, Machine{CPU: CPU{Vendor: "AuthenticAMD", Family: 26, Model: 2}}, true},
		{"another model of the family", otherModel, byFamily, false},
		{"more cores", moreCores, zen5, false},
		{"a CPU the roofs do not name", Machine{}, zen5, false},
	} {
		if got := CompareMachines(tt.roofs, tt.here).SameCPU(); got != tt.same {
			t.Errorf("%s: SameCPU %v, want %v", tt.name, got, tt.same)
		}
	}
}

func TestMarkForeignFlagsAPointOnceAndOnlyUnderAnotherMachinesRoofs(t *testing.T) {
	roofs := &Roofs{Machine: Machine{Cores: 8}}
	tests := []struct {
		name  string
		point Point
		flags int
		why   bool
	}{
		{"same machine", Point{Machine: Machine{Cores: 8}}, 0, false},
		{"other cores", Point{Machine: Machine{Cores: 4}}, 1, true},
		{"already flagged", Point{Machine: Machine{Cores: 4}, Flags: []Flag{{Code: FlagForeignRoofs}}}, 1, false},
	}
	for _, tt := range tests {
		p := tt.point
		why := MarkForeign(&p, roofs)
		if (why != "") != tt.why || len(p.Flags) != tt.flags {
			t.Errorf("%s: MarkForeign = %q with %d flags; want why %v, %d flags", tt.name, why, len(p.Flags), tt.why, tt.flags)
		}
	}
}

// The rule tells a CPU's difference from the cores', and leaves out the
// microarchitecture rprof names: an older rprof named it from the model
// table where a newer one infers it from the features, on the same CPU.
func TestCompareMachinesSaysWhetherTheCPUOrTheCoresDiffer(t *testing.T) {
	spr := Machine{CPU: CPU{Vendor: "GenuineIntel", Family: 6, Model: 0xA7, ModelName: "Intel Xeon", Microarch: "rocketlake"}, Cores: 4}
	inferred, moreCores, otherCPU := spr, spr, spr
	inferred.CPU.Microarch, inferred.CPU.MicroarchSource = "sapphirerapids", MicroarchFromFeatures
	moreCores.Cores = 8
	otherCPU.CPU.ModelName = "AMD EPYC"
	for _, tt := range []struct {
		name                     string
		a, b                     Machine
		otherCPU, otherCores, ok bool
		diffs                    int
	}{
		{"microarchitecture named by another rprof", spr, inferred, false, false, true, 0},
		{"more cores", spr, moreCores, false, true, true, 1},
		{"another CPU", otherCPU, spr, true, false, true, 1},
		{"another CPU with more cores", otherCPU, moreCores, true, true, true, 2},
		{"a CPU one side does not name", Machine{Cores: 4}, spr, false, false, false, 0},
	} {
		m := CompareMachines(tt.a, tt.b)
		if m.OtherCPU != tt.otherCPU || m.OtherCores != tt.otherCores || m.CPUKnown != tt.ok || len(m.Diffs) != tt.diffs {
			t.Errorf("%s: %+v; want other CPU %v, other cores %v, CPU known %v", tt.name, m, tt.otherCPU, tt.otherCores, tt.ok)
		}
	}
}
