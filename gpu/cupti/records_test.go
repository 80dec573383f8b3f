package cupti

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rprof/rprof/roofline"
)

func TestParseRefusesWhatTheLibraryDidNotWrite(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"empty", "", ErrFormat.Error()},
		{"another file", "ID,Kernel Name\n", ErrFormat.Error()},
		{"another format", "rprof-cupti\t2\t10\n", ErrFormat.Error()},
		{"unknown record", "rprof-cupti\t1\t10\nmetric\tdram__bytes.sum\t1\n", `line 2: unknown record "metric"`},
		{"short kernel", "rprof-cupti\t1\t10\nkernel\t0\t1\t7\t5\t9\n", "line 2: kernel has 5 fields, want 9"},
		{"bad grid", "rprof-cupti\t1\t10\nkernel\t0\t1\t7\t5\t9\t1,1\t1,1,1\t1\tk\n", `"1,1": want three dimensions`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(tt.in))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want %q", err, tt.want)
			}
		})
	}
}

func TestParseReadsEveryRecord(t *testing.T) {
	in := "rprof-cupti\t1\t4242\ncupti\t26\t/usr/local/cuda/lib64/libcupti.so.12\nunverified-layout\t26\t18\n" +
		"recording\tkernels\nkernel\t1\t3\t14\t100\t350\t64,2,1\t128,1,1\t9\t_Z5triadPdS_S_d\n" +
		"kernel\t1\t3\t14\t900\t800\t64,2,1\t128,1,1\t10\tbackwards\n" +
		"error\tcuptiActivityGetNextRecord\t999\tCUPTI_ERROR_UNKNOWN\ndropped\t4\ndropped\t1\nend\n"
	p, err := Parse(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := Kernel{Name: "_Z5triadPdS_S_d", Device: 1, Context: 3, Stream: 14, Start: 100, End: 350, Grid: [3]int{64, 2, 1}, Block: [3]int{128, 1, 1}, Correlation: 9}
	if p.PID != 4242 || p.Version != 26 || !p.UnverifiedLayout || p.CheckedVersion != 18 || !p.Recording ||
		len(p.Kernels) != 1 || p.Kernels[0] != want || p.Untimed != 1 || p.Dropped != 5 || !p.Complete ||
		len(p.Errors) != 1 || p.Errors[0].Code != 999 {
		t.Errorf("got %+v", p)
	}
	flags := Recording{Processes: []Process{p}}.Flags()
	if len(flags) != 2 || flags[1].Message != "CUPTI dropped 5 records in process 4242; 1 kernel records in process 4242 ended no later than they started and are left out: kernels are missing" {
		t.Errorf("flags: %+v", flags)
	}
}

func TestGroupPointCarriesTimeDeviceAndWhyNoWorkOrTraffic(t *testing.T) {
	g := Groups([]Kernel{{Name: "triad(double*)", Device: 0, Start: 0, End: 2000}, {Name: "triad(double*)", Device: 0, Start: 5000, End: 8000}})[0]
	dev := &Device{Name: "NVIDIA H100 80GB HBM3", ComputeCapability: "9.0", SMClockMHz: 1980, MemClockMHz: 2619}
	p := g.Point(dev, Recording{}.Profile(g), roofline.Machine{}, time.Unix(0, 0))
	if p.Label != "triad" || p.Seconds != 5e-6 || p.WorkFlops != nil || p.TrafficBytes != nil || p.Source != roofline.SourceTimes {
		t.Errorf("point: %+v", p)
	}
	k := p.GPU
	if k.Launches != 2 || k.DeviceName != dev.Name || k.ComputeCapability != "9.0" || k.SMClockMHz != 1980 ||
		k.ClockSource != roofline.ClockSourceAttribute || k.Tool != "cupti" {
		t.Errorf("kernel: %+v", k)
	}
	if len(p.Flags) != 1 || p.Flags[0].Code != roofline.FlagGPUTimesOnly || p.Flags[0].Message != TimesOnly {
		t.Errorf("flags: %+v", p.Flags)
	}
	if q := g.Point(nil, Profile{Why: TimesOnly}, roofline.Machine{}, time.Unix(0, 0)); q.GPU.DeviceName != "" || q.GPU.ClockSource != "" {
		t.Errorf("without the device: %+v", q.GPU)
	}
}

func TestFindLooksWhereCUPTIIsInstalled(t *testing.T) {
	root := t.TempDir()
	plant := func(p string) string {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		return full
	}
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }

	if _, err := Find(root, env(nil)); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "/usr/local/cuda/extras/CUPTI/lib64") {
		t.Errorf("empty tree: %v", err)
	}
	debian := plant("usr/lib/x86_64-linux-gnu/libcupti.so.11.8")
	if got, err := Find(root, env(nil)); got != debian || err != nil {
		t.Errorf("Debian's package: %s, %v", got, err)
	}
	plant("usr/local/cuda-12.4/lib64/libcupti.so")
	toolkit := plant("usr/local/cuda-12.4/lib64/libcupti.so.12.4.127")
	if got, _ := Find(root, env(nil)); got != toolkit {
		t.Errorf("a toolkit before the distribution's, its versioned file first: %s", got)
	}
	home := plant("opt/cuda/extras/CUPTI/lib64/libcupti.so.11.8")
	if got, _ := Find(root, env(map[string]string{"CUDA_HOME": "/opt/cuda"})); got != home {
		t.Errorf("$CUDA_HOME first: %s", got)
	}
	if got, _ := Find(root, env(map[string]string{"LD_LIBRARY_PATH": ":/usr/lib/x86_64-linux-gnu", "CUDA_HOME": "/opt/cuda"})); got != debian {
		t.Errorf("$LD_LIBRARY_PATH first: %s", got)
	}
	if got, _ := Find(root, env(map[string]string{LibraryEnv: debian, "CUDA_HOME": "/opt/cuda"})); got != debian {
		t.Errorf("$%s above all: %s", LibraryEnv, got)
	}
	if _, err := Find(root, env(map[string]string{LibraryEnv: filepath.Join(root, "nowhere.so")})); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a named file that is not there: %v", err)
	}
}

// The versions the Go side names are the injection library's.
func TestVersionsAreTheInjectionLibrarys(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("inject", "inject.c"))
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]int{"MIN_VERSION": MinVersion, "CHECKED_VERSION": CheckedVersion} {
		if line := fmt.Sprintf("#define %s %d\n", name, want); !strings.Contains(string(src), line) {
			t.Errorf("inject.c lacks %q", line)
		}
	}
}
