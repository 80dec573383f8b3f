package pmu

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/rprof/rprof/internal/kfs"
	"github.com/rprof/rprof/internal/testutil"
	"github.com/rprof/rprof/machine"
)

// TestDiscoverPMUsGolden dumps what discovery, topology and CPU
// identification read from each fake machine, so that any change in
// parsing shows up as a diff (go test ./pmu -run Golden -update to accept).
func TestDiscoverPMUsGolden(t *testing.T) {
	for _, m := range machines {
		t.Run(m, func(t *testing.T) {
			sysfs, procfs := machineFS(t, m)
			pmus, err := DiscoverPMUs(sysfs)
			if err != nil {
				t.Fatal(err)
			}
			cpu, err := machine.ReadCPU(procfs)
			if err != nil {
				t.Fatal(err)
			}
			topo, err := machine.ReadTopology(sysfs)
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			id := machine.Identify(cpu)
			fmt.Fprintf(&b, "cpu %s %q microarch %q from %s hypervisor %v\n", cpu.PerfKey(), cpu.ModelName, id.Microarch, id.Source, cpu.Hypervisor())
			fmt.Fprintf(&b, "topology sockets %d cores %d threads %d numa %v core types %v\n",
				topo.Sockets, topo.Cores, topo.Threads, topo.NUMANodes, topo.CoreTypes)
			for _, c := range topo.Caches {
				fmt.Fprintf(&b, "cache L%d %s %d bytes line %d cpus %s\n", c.Level, c.Type, c.SizeBytes, c.LineSize, kfs.FormatList(c.SharedCPUs))
			}
			fmt.Fprintf(&b, "hardware PMU %v\n", pmus.HasHardware())
			names := make([]string, 0, len(pmus))
			for n := range pmus {
				names = append(names, n)
			}
			slices.Sort(names)
			for _, n := range names {
				p := pmus[n]
				fmt.Fprintf(&b, "pmu %s type %d cpus %q core %v\n", p.Name, p.Type, kfs.FormatList(p.CPUs), p.Core())
				for _, f := range sortedKeys(p.Formats) {
					fmt.Fprintf(&b, "  format %s %s\n", f, p.Formats[f])
				}
				for _, a := range sortedKeys(p.Aliases) {
					al := p.Aliases[a]
					fmt.Fprintf(&b, "  alias %s %s scale %g unit %q\n", a, al.Terms, al.Scale, al.Unit)
				}
			}
			testutil.Golden(t, filepath.Join("testdata", "machines", m, "discovery.golden"), []byte(b.String()))
		})
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func TestDiscoverPMUsReadsTypeMaskAndFormats(t *testing.T) {
	tests := []struct {
		machine string
		pmu     string
		typ     uint32
		cpus    []int
		format  string
		want    Format
		aliases int
	}{
		{"skylake-sp", "cpu", 4, nil, "cmask", Format{"config", seq(24, 31)}, 4},
		{"skylake-sp", "uncore_imc_5", 17, []int{0, 4}, "umask", Format{"config", seq(8, 15)}, 2},
		{"icelake-sp", "uncore_imc_11", 23, []int{0, 4}, "thresh8", Format{"config", seq(24, 31)}, 2},
		{"icelake-sp", "uncore_imc_free_running_3", 27, []int{0, 4}, "event", Format{"config", seq(0, 7)}, 3},
		{"sapphirerapids", "uncore_imc_13", 19, []int{0, 4}, "event", Format{"config", seq(0, 7)}, 2},
		{"graniterapids-newkernel", "uncore_imc_0", 12, []int{0, 4}, "event", Format{"config", seq(0, 7)}, 4},
		{"alderlake", "cpu_core", 4, seq(0, 15), "in_tx", Format{"config", []int{32}}, 4},
		{"alderlake", "cpu_atom", 10, seq(16, 23), "umask", Format{"config", seq(8, 15)}, 2},
		{"alderlake", "uncore_imc_free_running_1", 19, []int{0}, "umask", Format{"config", seq(8, 15)}, 3},
		{"zen3", "amd_df", 11, []int{0, 4}, "event", Format{"config", append(append(seq(0, 7), seq(32, 35)...), 59, 60)}, 0},
		{"zen3", "cpu", 4, nil, "event", Format{"config", append(seq(0, 7), seq(32, 35)...)}, 0},
		{"zen4", "amd_df", 11, []int{0, 4}, "umask", Format{"config", append(seq(8, 15), seq(24, 27)...)}, 0},
		{"zen4", "amd_umc_6", 18, []int{4}, "rdwrmask", Format{"config", []int{8, 9}}, 0},
		{"zen5", "amd_umc_11", 23, []int{0}, "event", Format{"config", seq(0, 7)}, 0},
		{"neoverse-v2", "armv8_pmuv3_0", 8, seq(0, 7), "event", Format{"config", seq(0, 15)}, 2},
		{"vm-zen5", "msr", 9, nil, "event", Format{"config", seq(0, 63)}, 1},
		{"vm-zen5", "uprobe", 8, nil, "retprobe", Format{"config", []int{0}}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.machine+"/"+tt.pmu, func(t *testing.T) {
			sysfs, _ := machineFS(t, tt.machine)
			pmus, err := DiscoverPMUs(sysfs)
			if err != nil {
				t.Fatal(err)
			}
			p := pmus[tt.pmu]
			if p == nil {
				t.Fatalf("PMU %s not found", tt.pmu)
			}
			if p.Name != tt.pmu || p.Type != tt.typ || !reflect.DeepEqual(p.CPUs, tt.cpus) {
				t.Errorf("got name %s type %d cpus %v, want %s %d %v", p.Name, p.Type, p.CPUs, tt.pmu, tt.typ, tt.cpus)
			}
			if got := p.Formats[tt.format]; !reflect.DeepEqual(got, tt.want) {
				t.Errorf("format %s = %+v, want %+v", tt.format, got, tt.want)
			}
			if len(p.Aliases) != tt.aliases {
				t.Errorf("%d aliases, want %d: %v", len(p.Aliases), tt.aliases, p.Aliases)
			}
		})
	}
}

func TestDiscoverPMUsReadsAliasScaleAndUnit(t *testing.T) {
	sysfs, _ := machineFS(t, "skylake-sp")
	pmus, err := DiscoverPMUs(sysfs)
	if err != nil {
		t.Fatal(err)
	}
	want := Alias{Terms: "event=0x04,umask=0x03", Scale: 6.103515625e-5, Unit: "MiB"}
	if got := pmus["uncore_imc_0"].Aliases["cas_count_read"]; got != want {
		t.Errorf("cas_count_read = %+v, want %+v", got, want)
	}
	if got := pmus["cpu"].Aliases["cpu-cycles"]; got != (Alias{Terms: "event=0x3c", Scale: 1}) {
		t.Errorf("cpu-cycles = %+v, want scale 1 and no unit", got)
	}
}

func TestGlobOrdersBoxesNumerically(t *testing.T) {
	tests := []struct {
		machine, base string
		want          []string
	}{
		{"sapphirerapids", "uncore_imc", []string{"uncore_imc_2", "uncore_imc_3", "uncore_imc_4", "uncore_imc_5",
			"uncore_imc_10", "uncore_imc_11", "uncore_imc_12", "uncore_imc_13"}},
		{"sapphirerapids", "uncore_imc_", []string{"uncore_imc_2", "uncore_imc_3", "uncore_imc_4", "uncore_imc_5",
			"uncore_imc_10", "uncore_imc_11", "uncore_imc_12", "uncore_imc_13"}},
		{"sapphirerapids", "uncore_imc_free_running", []string{"uncore_imc_free_running_0"}},
		{"alderlake", "uncore_imc", nil},
		{"alderlake", "cpu", nil},
		{"zen4", "amd_df", []string{"amd_df"}},
		{"zen4", "amd_umc", []string{"amd_umc_0", "amd_umc_1", "amd_umc_2", "amd_umc_3", "amd_umc_4", "amd_umc_5",
			"amd_umc_6", "amd_umc_7", "amd_umc_8", "amd_umc_9", "amd_umc_10", "amd_umc_11"}},
		{"zen3", "amd_umc", nil},
	}
	for _, tt := range tests {
		t.Run(tt.machine+"/"+tt.base, func(t *testing.T) {
			sysfs, _ := machineFS(t, tt.machine)
			pmus, err := DiscoverPMUs(sysfs)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range pmus.Glob(tt.base) {
				got = append(got, p.Name)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Glob(%q) = %v, want %v", tt.base, got, tt.want)
			}
		})
	}
}

func TestHasHardware(t *testing.T) {
	for _, m := range machines {
		sysfs, _ := machineFS(t, m)
		pmus, err := DiscoverPMUs(sysfs)
		if err != nil {
			t.Fatal(err)
		}
		if want := !strings.HasPrefix(m, "vm-"); pmus.HasHardware() != want {
			t.Errorf("%s: HasHardware() = %v, want %v", m, pmus.HasHardware(), want)
		}
	}
}

func TestEncodePlacesValueBitsAtFormatPositions(t *testing.T) {
	// Expected configs are those of events.md §6.3, worked by hand from the
	// format strings (value bit i goes to the i-th lowest format bit).
	tests := []struct {
		machine, pmu, terms string
		want                Attr
	}{
		{"skylake-sp", "uncore_imc_0", "cas_count_read", Attr{Type: 12, Config: 0x0304}},
		{"skylake-sp", "uncore_imc_3", "cas_count_write", Attr{Type: 15, Config: 0x0c04}},
		{"skylake-sp", "uncore_imc_0", "cas_count_read,umask=0x0c", Attr{Type: 12, Config: 0x0c04}},
		{"skylake-sp", "cpu", "event=0xc7,umask=0x40", Attr{Type: 4, Config: 0x40c7}},
		{"skylake-sp", "cpu", "event=0x3c,edge,inv,cmask=1", Attr{Type: 4, Config: 0x3c | 1<<18 | 1<<23 | 1<<24}},
		{"skylake-sp", "cpu", "config=0x1234,config1=5,config2=0xffffffffffffffff", Attr{Type: 4, Config: 0x1234, Config1: 5, Config2: ^uint64(0)}},
		{"icelake-sp", "uncore_imc_0", "cas_count_read", Attr{Type: 12, Config: 0x0f04}},
		{"icelake-sp", "uncore_imc_0", "cas_count_write", Attr{Type: 12, Config: 0x3004}},
		{"sapphirerapids", "uncore_imc_2", "cas_count_read", Attr{Type: 12, Config: 0xcf05}},
		{"sapphirerapids", "uncore_imc_2", "cas_count_write", Attr{Type: 12, Config: 0xf005}},
		{"graniterapids-newkernel", "uncore_imc_0", "cas_count_read_sch1", Attr{Type: 12, Config: 0xcf06}},
		{"graniterapids-oldkernel", "uncore_imc_0", "event=0x06,umask=0xf0", Attr{Type: 12, Config: 0xf006}},
		{"alderlake", "uncore_imc_free_running_0", "data_read", Attr{Type: 18, Config: 0x20ff}},
		{"alderlake", "uncore_imc_free_running_1", "data_write", Attr{Type: 19, Config: 0x30ff}},
		{"alderlake", "cpu_atom", "event=0xc8,umask=0x01", Attr{Type: 10, Config: 0x01c8}},
		{"zen3", "amd_df", "event=0x07,umask=0x38", Attr{Type: 11, Config: 0x3807}},
		{"zen3", "amd_df", "event=0x107,umask=0x38", Attr{Type: 11, Config: 0x1_0000_3807}},
		{"zen3", "amd_df", "event=0x1c7,umask=0x38", Attr{Type: 11, Config: 0x1_0000_38c7}},
		{"zen3", "amd_df", "event=0x3fff", Attr{Type: 11, Config: 0xff | 0xf<<32 | 3<<59}},
		{"zen3", "cpu", "event=0x03,umask=0xff", Attr{Type: 4, Config: 0xff03}},
		{"zen4", "amd_df", "event=0x1f,umask=0x7fe", Attr{Type: 11, Config: 0x0700_fe1f}},
		{"zen4", "amd_df", "event=0x11f,umask=0x7fe", Attr{Type: 11, Config: 0x1_0700_fe1f}},
		{"zen4", "amd_umc_0", "event=0x0a,rdwrmask=1", Attr{Type: 12, Config: 0x10a}},
		{"zen4", "amd_umc_11", "event=0x0a,rdwrmask=2", Attr{Type: 23, Config: 0x20a}},
		{"zen5", "amd_df", "event=0x1f,umask=0xffe", Attr{Type: 11, Config: 0x0f00_fe1f}},
		{"zen5", "cpu", "event=0x03,umask=0xaf", Attr{Type: 4, Config: 0xaf03}},
		{"neoverse-v2", "armv8_pmuv3_0", "event=0x80c0", Attr{Type: 8, Config: 0x80c0}},
		{"vm-zen5", "msr", "tsc", Attr{Type: 9, Config: 0}},
	}
	for _, tt := range tests {
		t.Run(tt.machine+"/"+tt.pmu+"/"+tt.terms, func(t *testing.T) {
			sysfs, _ := machineFS(t, tt.machine)
			pmus, err := DiscoverPMUs(sysfs)
			if err != nil {
				t.Fatal(err)
			}
			got, err := pmus[tt.pmu].Encode(tt.terms)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("Encode(%q) = %+v (config %#x), want config %#x", tt.terms, got, got.Config, tt.want.Config)
			}
		})
	}
}

func TestEncodeRejectsBadTerms(t *testing.T) {
	p := &PMU{Name: "fake", Type: 30,
		Formats: map[string]Format{
			"event":  {"config", seq(0, 7)},
			"mask":   {"config1", []int{1, 6, 7, 8, 9, 10, 44}},
			"future": {"config3", seq(0, 3)},
		},
		Aliases: map[string]Alias{
			"reads":  {Terms: "event=0x04,mask=?", Scale: 1},
			"writes": {Terms: "event=0x05", Scale: 1},
			"broken": {Terms: "event=0x", Scale: 1},
		}}
	tests := []struct {
		terms string
		want  error
		text  string
	}{
		{"umask=1", ErrNotSupported, `unknown term "umask" (known: event, future, mask, or one of its 3 events)`},
		{"event=0x100", ErrMalformed, "value 0x100 of term event does not fit its 8 bits"},
		{"mask=0x80", ErrMalformed, "does not fit its 7 bits"},
		{"reads", ErrMalformed, "term mask needs a value (mask=?)"},
		{"reads,writes", ErrMalformed, `two events "reads" and "writes"`},
		{"broken", ErrMalformed, "alias broken"},
		{"future=1", ErrNotSupported, "config3"},
		{"event=-1", ErrMalformed, "not a 64-bit"},
		{"event=18446744073709551616", ErrMalformed, "not a 64-bit"},
		{"event=", ErrMalformed, "not a 64-bit"},
		{"", ErrMalformed, "empty term list"},
		{"event=1,,", ErrMalformed, "bad name"},
		{"ev ent=1", ErrMalformed, "bad name"},
	}
	for _, tt := range tests {
		t.Run(tt.terms, func(t *testing.T) {
			a, err := p.Encode(tt.terms)
			if err == nil {
				t.Fatalf("Encode(%q) = %+v, want an error", tt.terms, a)
			}
			if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.text) || !strings.HasPrefix(err.Error(), "PMU fake: ") {
				t.Errorf("Encode(%q) error %q, want one naming PMU fake, containing %q and matching %v", tt.terms, err, tt.text, tt.want)
			}
		})
	}
	// The alias's "?" is filled by a later term, and config1 bits land at
	// 1, 6-10, 44 as in the kernel's format ABI example.
	a, err := p.Encode("reads,mask=0x7f")
	if err != nil {
		t.Fatal(err)
	}
	if want := (Attr{Type: 30, Config: 4, Config1: 1<<1 | 0x1f<<6 | 1<<44}); a != want {
		t.Errorf("Encode(reads,mask=0x7f) = %+v, want %+v", a, want)
	}
}

func TestDiscoverPMUsReportsBadDirectories(t *testing.T) {
	const dev = "bus/event_source/devices/"
	good := func() fstest.MapFS {
		return fstest.MapFS{
			dev + "software/type":            {Data: []byte("1\n")},
			dev + "imc/type":                 {Data: []byte("12\n")},
			dev + "imc/cpumask":              {Data: []byte("0,4\n")},
			dev + "imc/format/event":         {Data: []byte("config:0-7\n")},
			dev + "imc/events/reads":         {Data: []byte("event=0x04\n")},
			dev + "imc/events/reads.scale":   {Data: []byte("6.103515625e-5\n")},
			dev + "imc/events/reads.unit":    {Data: []byte("MiB\n")},
			dev + "imc/events/reads.per-pkg": {Data: []byte("1\n")},
		}
	}
	pmus, err := DiscoverPMUs(good())
	if err != nil {
		t.Fatal(err)
	}
	if len(pmus) != 2 || len(pmus["imc"].Aliases) != 1 {
		t.Fatalf("good tree read as %v", pmus)
	}

	tests := []struct {
		name   string
		edit   func(fstest.MapFS)
		absent bool
		text   string
	}{
		{"type missing", func(m fstest.MapFS) { delete(m, dev+"imc/type") }, true, "PMU imc: open bus/event_source/devices/imc/type"},
		{"type not a number", func(m fstest.MapFS) { m[dev+"imc/type"].Data = []byte("twelve") }, false, `PMU imc: type "twelve"`},
		{"type too large", func(m fstest.MapFS) { m[dev+"imc/type"].Data = []byte("4294967296") }, false, "PMU imc: type"},
		{"cpumask malformed", func(m fstest.MapFS) { m[dev+"imc/cpumask"].Data = []byte("0-") }, false, "PMU imc: cpumask"},
		{"format without field", func(m fstest.MapFS) { m[dev+"imc/format/event"].Data = []byte("0-7") }, false, "format/event"},
		{"format unknown field", func(m fstest.MapFS) { m[dev+"imc/format/event"].Data = []byte("config9:0-7") }, false, `unknown field "config9"`},
		{"format bit 64", func(m fstest.MapFS) { m[dev+"imc/format/event"].Data = []byte("config:60-64") }, false, "format/event"},
		{"scale not a number", func(m fstest.MapFS) { m[dev+"imc/events/reads.scale"].Data = []byte("fast") }, false, "events/reads.scale"},
		{"scale zero", func(m fstest.MapFS) { m[dev+"imc/events/reads.scale"].Data = []byte("0") }, false, "events/reads.scale"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := good()
			tt.edit(m)
			pmus, err := DiscoverPMUs(m)
			if err == nil {
				t.Fatalf("DiscoverPMUs = %v, want an error", pmus)
			}
			if tt.absent != errors.Is(err, fs.ErrNotExist) || !tt.absent && !errors.Is(err, ErrMalformed) ||
				!strings.Contains(err.Error(), tt.text) {
				t.Errorf("error %q: want one containing %q, matching ErrNotExist=%v or ErrMalformed", err, tt.text, tt.absent)
			}
			if pmus["software"] == nil || pmus["imc"] != nil {
				t.Errorf("got PMUs %v, want software kept and imc dropped", pmus)
			}
		})
	}

	t.Run("no devices directory", func(t *testing.T) {
		pmus, err := DiscoverPMUs(fstest.MapFS{"devices/system/cpu/online": {Data: []byte("0")}})
		if !errors.Is(err, fs.ErrNotExist) || pmus != nil {
			t.Errorf("got %v, %v; want nil PMUs and ErrNotExist", pmus, err)
		}
	})
	t.Run("several bad PMUs counted", func(t *testing.T) {
		m := good()
		m[dev+"a/type"] = &fstest.MapFile{Data: []byte("x")}
		m[dev+"b/type"] = &fstest.MapFile{Data: []byte("y")}
		_, err := DiscoverPMUs(m)
		if err == nil || !strings.Contains(err.Error(), "and 1 more unreadable PMUs") || strings.Contains(err.Error(), "\n") {
			t.Errorf("error %q: want one line naming the first bad PMU and counting the other", err)
		}
	})
}

func TestDiscoverPMUsLive(t *testing.T) {
	if _, err := os.Stat("/sys/bus/event_source/devices"); err != nil {
		t.Skipf("no Linux sysfs here: %v", err)
	}
	pmus, err := DiscoverPMUs(os.DirFS("/sys"))
	if err != nil {
		t.Fatal(err)
	}
	// The software PMU is always registered, with the fixed type 1.
	if p := pmus["software"]; p == nil || p.Type != 1 {
		t.Errorf("software PMU = %+v, want type 1", p)
	}
}

// A counting run reads formats and aliases only of the PMUs it can count
// with, and must plan exactly as with every PMU read: on every captured
// machine, the plans agree.
func TestDiscoverCountingPMUsPlansAsDiscoverPMUs(t *testing.T) {
	dirs, err := os.ReadDir("testdata/machines")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		t.Run(d.Name(), func(t *testing.T) {
			sysfs, procfs := machineFS(t, d.Name())
			all, err := DiscoverPMUs(sysfs)
			if err != nil {
				t.Fatal(err)
			}
			counting, err := DiscoverCountingPMUs(sysfs, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(counting) != len(all) {
				t.Fatalf("%d PMUs, want all %d listed", len(counting), len(all))
			}
			full, err := readMachine(machine.TreeHost(sysfs, procfs), all)
			if err != nil {
				t.Fatal(err)
			}
			part, err := readMachine(machine.TreeHost(sysfs, procfs), counting)
			if err != nil {
				t.Fatal(err)
			}
			if a, b := full.plan(), part.plan(); !reflect.DeepEqual(a, b) {
				t.Errorf("plan with the counting PMUs differs:\n%+v\nwant\n%+v", b, a)
			}
		})
	}
}

func TestDiscoverCountingPMUsReadsNamedPMUsInFull(t *testing.T) {
	sysfs, _ := machineFS(t, "skylake-sp")
	all, err := DiscoverPMUs(sysfs)
	if err != nil {
		t.Fatal(err)
	}
	some, err := DiscoverCountingPMUs(sysfs, nil)
	if err != nil {
		t.Fatal(err)
	}
	named, err := DiscoverCountingPMUs(sysfs, []string{"msr"})
	if err != nil {
		t.Fatal(err)
	}
	if len(all["msr"].Aliases) == 0 || len(some["msr"].Aliases) != 0 || some["msr"].Type != all["msr"].Type {
		t.Errorf("msr: %d aliases in full, %d unnamed (type %d, want %d): want none read unless named", len(all["msr"].Aliases), len(some["msr"].Aliases), some["msr"].Type, all["msr"].Type)
	}
	if !reflect.DeepEqual(named["msr"], all["msr"]) || !reflect.DeepEqual(some["uncore_imc_0"], all["uncore_imc_0"]) || !reflect.DeepEqual(some["cpu"], all["cpu"]) {
		t.Errorf("a named, memory-controller or core PMU was not read in full")
	}
	if _, err := ParseEvent("msr/tsc/", named); err != nil {
		t.Errorf("an event of a named PMU: %v", err)
	}
}
