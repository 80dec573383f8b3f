package pmu

import (
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
)

func discover(t testing.TB, machine string) PMUs {
	t.Helper()
	sysfs, _ := machineFS(t, machine)
	pmus, err := DiscoverPMUs(sysfs)
	if err != nil {
		t.Fatal(err)
	}
	return pmus
}

func TestParseEventResolvesPerfSyntax(t *testing.T) {
	const mib = 6.103515625e-5
	tests := []struct {
		machine, event string
		want           Event
	}{
		{"skylake-sp", "uncore_imc_0/cas_count_read/",
			Event{PMU: "uncore_imc_0", Attr: Attr{Type: 12, Config: 0x0304}, Scale: mib, Unit: "MiB", CPUs: []int{0, 4}}},
		{"skylake-sp", "uncore_imc_5/cas_count_write/",
			Event{PMU: "uncore_imc_5", Attr: Attr{Type: 17, Config: 0x0c04}, Scale: mib, Unit: "MiB", CPUs: []int{0, 4}}},
		{"skylake-sp", "uncore_imc_1/event=0x04,umask=0x03/",
			Event{PMU: "uncore_imc_1", Attr: Attr{Type: 13, Config: 0x0304}, Scale: 1, CPUs: []int{0, 4}}},
		{"skylake-sp", "cpu/event=0xc7,umask=0x01/", Event{PMU: "cpu", Attr: Attr{Type: 4, Config: 0x01c7}, Scale: 1}},
		{"skylake-sp", "cpu/cpu-cycles/", Event{PMU: "cpu", Attr: Attr{Type: 4, Config: 0x3c}, Scale: 1}},
		{"skylake-sp", "r01c7", Event{PMU: "cpu", Attr: Attr{Type: 4, Config: 0x01c7}, Scale: 1}},
		{"skylake-sp", "r40C7", Event{PMU: "cpu", Attr: Attr{Type: 4, Config: 0x40c7}, Scale: 1}},
		{"icelake-sp", "uncore_imc_11/cas_count_read/",
			Event{PMU: "uncore_imc_11", Attr: Attr{Type: 23, Config: 0x0f04}, Scale: mib, Unit: "MiB", CPUs: []int{0, 4}}},
		{"icelake-sp", "uncore_imc_free_running_0/read/",
			Event{PMU: "uncore_imc_free_running_0", Attr: Attr{Type: 24, Config: 0x20ff}, Scale: mib, Unit: "MiB", CPUs: []int{0, 4}}},
		{"sapphirerapids", "uncore_imc_10/cas_count_read/",
			Event{PMU: "uncore_imc_10", Attr: Attr{Type: 16, Config: 0xcf05}, Scale: mib, Unit: "MiB", CPUs: []int{0, 4}}},
		{"sapphirerapids", "uncore_imc_2/cas_count_write/",
			Event{PMU: "uncore_imc_2", Attr: Attr{Type: 12, Config: 0xf005}, Scale: mib, Unit: "MiB", CPUs: []int{0, 4}}},
		{"graniterapids-newkernel", "uncore_imc_7/cas_count_write_sch1/",
			Event{PMU: "uncore_imc_7", Attr: Attr{Type: 19, Config: 0xf006}, Scale: mib, Unit: "MiB", CPUs: []int{0, 4}}},
		{"alderlake", "cpu_atom/event=0xc8,umask=0x01/", Event{PMU: "cpu_atom", Attr: Attr{Type: 10, Config: 0x01c8}, Scale: 1}},
		{"alderlake", "cpu_core/event=0xc7,umask=0x20/", Event{PMU: "cpu_core", Attr: Attr{Type: 4, Config: 0x20c7}, Scale: 1}},
		{"alderlake", "r20c7", Event{PMU: "cpu_core", Attr: Attr{Type: 4, Config: 0x20c7}, Scale: 1}},
		{"alderlake", "instructions", Event{PMU: "cpu_core", Attr: Attr{Type: 0, Config: 1}, Scale: 1}},
		{"alderlake", "uncore_imc_free_running_1/data_total/",
			Event{PMU: "uncore_imc_free_running_1", Attr: Attr{Type: 19, Config: 0x10ff}, Scale: mib, Unit: "MiB", CPUs: []int{0}}},
		{"zen3", "amd_df/event=0x107,umask=0x38/",
			Event{PMU: "amd_df", Attr: Attr{Type: 11, Config: 0x1_0000_3807}, Scale: 1, CPUs: []int{0, 4}}},
		{"zen3", "cpu/event=0x03,umask=0xff/", Event{PMU: "cpu", Attr: Attr{Type: 4, Config: 0xff03}, Scale: 1}},
		{"zen4", "amd_df/event=0x11f,umask=0x7fe/",
			Event{PMU: "amd_df", Attr: Attr{Type: 11, Config: 0x1_0700_fe1f}, Scale: 1, CPUs: []int{0, 4}}},
		{"zen4", "amd_umc_0/event=0x0a,rdwrmask=1/", Event{PMU: "amd_umc_0", Attr: Attr{Type: 12, Config: 0x10a}, Scale: 1, CPUs: []int{0}}},
		{"zen4", "amd_umc_7/event=0x0a,rdwrmask=2/", Event{PMU: "amd_umc_7", Attr: Attr{Type: 19, Config: 0x20a}, Scale: 1, CPUs: []int{4}}},
		{"zen5", "amd_df/event=0x1f,umask=0xfff/", Event{PMU: "amd_df", Attr: Attr{Type: 11, Config: 0x0f00_ff1f}, Scale: 1, CPUs: []int{0}}},
		{"neoverse-v2", "armv8_pmuv3_0/event=0x80c1/", Event{PMU: "armv8_pmuv3_0", Attr: Attr{Type: 8, Config: 0x80c1}, Scale: 1}},
		{"neoverse-v2", "armv8_pmuv3_0/inst_retired/", Event{PMU: "armv8_pmuv3_0", Attr: Attr{Type: 8, Config: 0x08}, Scale: 1}},
		{"neoverse-v2", "r11", Event{PMU: "armv8_pmuv3_0", Attr: Attr{Type: 4, Config: 0x11}, Scale: 1}},
		{"vm-zen5", "task-clock", Event{PMU: "software", Attr: Attr{Type: 1, Config: 1}, Scale: 1, Unit: "ns"}},
		{"vm-zen5", "cpu-clock", Event{PMU: "software", Attr: Attr{Type: 1, Config: 0}, Scale: 1, Unit: "ns"}},
		{"vm-zen5", "faults", Event{PMU: "software", Attr: Attr{Type: 1, Config: 2}, Scale: 1}},
		{"vm-zen5", "cs", Event{PMU: "software", Attr: Attr{Type: 1, Config: 3}, Scale: 1}},
		{"vm-zen5", "migrations", Event{PMU: "software", Attr: Attr{Type: 1, Config: 4}, Scale: 1}},
		{"vm-zen5", "minor-faults", Event{PMU: "software", Attr: Attr{Type: 1, Config: 5}, Scale: 1}},
		{"vm-zen5", "major-faults", Event{PMU: "software", Attr: Attr{Type: 1, Config: 6}, Scale: 1}},
		{"vm-zen5", "dummy", Event{PMU: "software", Attr: Attr{Type: 1, Config: 9}, Scale: 1}},
		// No hardware PMU: generic and raw events still resolve, and
		// opening them is what fails.
		{"vm-zen5", "cycles", Event{PMU: "cpu", Attr: Attr{Type: 0, Config: 0}, Scale: 1}},
		{"vm-zen5", "r00c0", Event{PMU: "cpu", Attr: Attr{Type: 4, Config: 0xc0}, Scale: 1}},
		{"vm-zen5", "branch-misses", Event{PMU: "cpu", Attr: Attr{Type: 0, Config: 5}, Scale: 1}},
		{"vm-zen5", "msr/tsc/", Event{PMU: "msr", Attr: Attr{Type: 9, Config: 0}, Scale: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.machine+"/"+tt.event, func(t *testing.T) {
			got, err := ParseEvent(tt.event, discover(t, tt.machine))
			if err != nil {
				t.Fatal(err)
			}
			tt.want.Name = tt.event
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParseEvent(%q) =\n%+v, want\n%+v", tt.event, got, tt.want)
			}
			if got.SystemWide() != (len(tt.want.CPUs) > 0) {
				t.Errorf("SystemWide() = %v", got.SystemWide())
			}
		})
	}
}

func TestParseEventResolvesSoftwareEventsWithoutSysfs(t *testing.T) {
	for name, config := range softwareEvents {
		ev, err := ParseEvent(name, nil)
		if err != nil || ev.Attr != (Attr{Type: 1, Config: config}) {
			t.Errorf("ParseEvent(%q, no PMUs) = %+v, %v", name, ev, err)
		}
	}
}

func TestParseEventLiveSoftware(t *testing.T) {
	if _, err := os.Stat("/sys/bus/event_source/devices"); err != nil {
		t.Skipf("no Linux sysfs here: %v", err)
	}
	pmus, err := DiscoverPMUs(os.DirFS("/sys"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"task-clock", "page-faults", "context-switches"} {
		ev, err := ParseEvent(name, pmus)
		if err != nil {
			t.Fatal(err)
		}
		// The live software PMU's type file must agree with the uapi
		// constant the event resolves to.
		if ev.Attr.Type != pmus["software"].Type {
			t.Errorf("%s: type %d, live software PMU type %d", name, ev.Attr.Type, pmus["software"].Type)
		}
	}
}

func TestParseEventRejectsBadInput(t *testing.T) {
	tests := []struct {
		machine, event string
		want           error
		text           string
	}{
		{"skylake-sp", "", ErrMalformed, "empty event"},
		{"skylake-sp", "uncore_imc_0/cas_count_read", ErrMalformed, "missing closing '/'"},
		{"skylake-sp", "uncore_imc_0/cas_count_read/u", ErrMalformed, `modifier "u"`},
		{"skylake-sp", "cpu/event=0xc7/:u", ErrMalformed, `modifier ":u"`},
		{"skylake-sp", "cycles:u", ErrMalformed, `modifier ":u"`},
		{"skylake-sp", "/event=1/", ErrMalformed, "empty PMU name"},
		{"skylake-sp", "cpu//", ErrMalformed, "empty term list"},
		{"skylake-sp", "cpu/event=0xc7 /", ErrMalformed, "white space"},
		{"skylake-sp", "uncore_imc/cas_count_read/", ErrNotSupported, "this machine has uncore_imc_0..uncore_imc_5"},
		{"skylake-sp", "uncore_imc_6/cas_count_read/", ErrNotSupported, `unknown PMU "uncore_imc_6"`},
		{"skylake-sp", "amd_df/event=0x07/", ErrNotSupported, `unknown PMU "amd_df"`},
		{"graniterapids-oldkernel", "uncore_imc_0/cas_count_read_sch1/", ErrNotSupported, `unknown term "cas_count_read_sch1"`},
		{"skylake-sp", "uncore_imc_0/rdwrmask=1/", ErrNotSupported, `unknown term "rdwrmask"`},
		{"skylake-sp", "uncore_imc_0/umask=0x100/", ErrMalformed, "does not fit its 8 bits"},
		{"zen4", "amd_umc_0/event=0x0a,rdwrmask=4/", ErrMalformed, "does not fit its 2 bits"},
		{"zen3", "amd_df/event=0x4000/", ErrMalformed, "does not fit its 14 bits"},
		{"zen3", "amd_df/umask=0xzz/", ErrMalformed, `value "0xzz"`},
		{"skylake-sp", "r", ErrNotSupported, "not a software"},
		{"skylake-sp", "r12345678901234567", ErrNotSupported, "not a software"},
		{"skylake-sp", "rxyz", ErrNotSupported, "not a software"},
		{"skylake-sp", "cas_count_read", ErrNotSupported, "not a software"},
		{"vm-zen5", "cpu/event=0xc0/", ErrNotSupported, `unknown PMU "cpu"`},
		{"vm-zen5", "software/task-clock/", ErrNotSupported, "the PMU has no format/ or events/"},
	}
	for _, tt := range tests {
		t.Run(tt.machine+"/"+tt.event, func(t *testing.T) {
			ev, err := ParseEvent(tt.event, discover(t, tt.machine))
			if err == nil {
				t.Fatalf("ParseEvent(%q) = %+v, want an error", tt.event, ev)
			}
			msg := err.Error()
			if !errors.Is(err, tt.want) || !strings.Contains(msg, tt.text) ||
				!strings.HasPrefix(msg, "event \""+tt.event+"\": ") || strings.Contains(msg, "\n") {
				t.Errorf("ParseEvent(%q) error %q: want one line naming the input, containing %q, matching %v",
					tt.event, msg, tt.text, tt.want)
			}
		})
	}
}

func TestParseFormat(t *testing.T) {
	tests := []struct {
		in   string
		want Format
		ok   bool
	}{
		{"config:0-7\n", Format{"config", seq(0, 7)}, true},
		{"config1:1,6-10,44", Format{"config1", []int{1, 6, 7, 8, 9, 10, 44}}, true},
		{"config2:63", Format{"config2", []int{63}}, true},
		{"config3:0-1", Format{"config3", []int{0, 1}}, true},
		{"config:32-35,0-7", Format{"config", append(seq(0, 7), seq(32, 35)...)}, true},
		{"config:64", Format{}, false},
		{"config:", Format{}, false},
		{"config", Format{}, false},
		{"cfg:0-7", Format{}, false},
		{"config:7-0", Format{}, false},
	}
	for _, tt := range tests {
		got, err := parseFormat(tt.in)
		if (err == nil) != tt.ok || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("parseFormat(%q) = %+v, %v; want %+v, ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
		if tt.ok && got.String() != strings.TrimSpace(tt.in) && tt.in != "config:32-35,0-7" {
			t.Errorf("Format.String() = %q, want %q", got.String(), strings.TrimSpace(tt.in))
		}
	}
}

func FuzzParseEvent(f *testing.F) {
	for _, s := range []string{
		"uncore_imc_0/cas_count_read/", "amd_df/event=0x107,umask=0x38/", "amd_umc_0/event=0x0a,rdwrmask=1/",
		"r01c7", "task-clock", "cycles", "cpu/event=0xc7,umask=0x01/", "cpu_atom/event=0xc8,umask=0x01/",
		"uncore_imc_0/cas_count_read,umask=?/", "cpu/config=0x1,config1=2/", "cpu/edge,inv,cmask=3/:u", "//",
		"uncore_imc_free_running_0/data_read/",
	} {
		f.Add(s)
	}
	var all PMUs
	for _, m := range []string{"skylake-sp", "alderlake", "zen4"} {
		for name, p := range discover(f, m) {
			if all == nil {
				all = PMUs{}
			}
			all[name] = p
		}
	}
	f.Fuzz(func(t *testing.T, s string) {
		ev, err := ParseEvent(s, all)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "event ") {
				t.Errorf("error %q does not name the input", err)
			}
			return
		}
		if ev.Name != s || ev.PMU == "" || ev.Scale <= 0 {
			t.Errorf("ParseEvent(%q) = %+v: missing name, PMU or scale", s, ev)
		}
	})
}
