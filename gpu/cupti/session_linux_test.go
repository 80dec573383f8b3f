package cupti

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rprof/rprof/gpu/cupti/cuptitest"
	"github.com/rprof/rprof/internal/testutil"
)

// record runs argv in a session whose target opens library, with the
// fake's environment fake, and reads what it recorded.
func record(t *testing.T, library string, fake []string, argv ...string) Recording {
	t.Helper()
	s, err := NewSession(filepath.Join(t.TempDir(), "run"), library)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	}()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = s.Env(append(os.Environ(), fake...))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %v\n%s", argv, err, out)
	}
	r, err := s.Read()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestInjectionRecordsTheKernelsCUPTIHandsIt(t *testing.T) {
	lib, target := cuptitest.Build(t)
	for _, argv := range [][]string{{target}, {target, "fork"}} {
		t.Run(strings.Join(argv[1:], " "), func(t *testing.T) { checkKernels(t, lib, argv) })
	}
}

// checkKernels runs argv with three launches and checks what was
// recorded: a child forked after cuInit adds nothing.
func checkKernels(t *testing.T, lib string, argv []string) {
	r := record(t, lib, []string{"FAKE_CUPTI_KERNELS=0,1000,5000,_Z4axpyPfS_f;1,2000,2600,gemm_kernel;0,6000,9000,_Z4axpyPfS_f"}, argv...)
	if len(r.Processes) != 1 {
		t.Fatalf("%d processes recorded", len(r.Processes))
	}
	ks, err := r.Launches()
	if err != nil {
		t.Fatal(err)
	}
	want := []Kernel{
		{Name: "_Z4axpyPfS_f", Device: 0, Context: 1, Stream: 7, Start: 1000, End: 5000, Grid: [3]int{132, 1, 1}, Block: [3]int{256, 1, 1}, Correlation: 1},
		{Name: "gemm_kernel", Device: 1, Context: 1, Stream: 7, Start: 2000, End: 2600, Grid: [3]int{132, 1, 1}, Block: [3]int{256, 1, 1}, Correlation: 2},
		{Name: "_Z4axpyPfS_f", Device: 0, Context: 1, Stream: 7, Start: 6000, End: 9000, Grid: [3]int{132, 1, 1}, Block: [3]int{256, 1, 1}, Correlation: 3},
	}
	if len(ks) != len(want) {
		t.Fatalf("got %d launches, want %d: %+v", len(ks), len(want), ks)
	}
	for i := range want {
		if ks[i] != want[i] {
			t.Errorf("launch %d: got %+v, want %+v", i, ks[i], want[i])
		}
	}
	p := r.Processes[0]
	if p.Version != 18 || p.Library != lib || !p.Complete || p.UnverifiedLayout {
		t.Errorf("process: %+v", p)
	}
	if f := r.Flags(); len(f) != 0 {
		t.Errorf("flags of a clean run: %+v", f)
	}
	g := Groups(ks)
	if len(g) != 2 || g[0].Launches != 2 || g[0].Nanoseconds != 7000 || g[1].Name != "gemm_kernel" {
		t.Errorf("groups: %+v", g)
	}
}

func TestInjectionSaysWhyNothingWasRecorded(t *testing.T) {
	lib, target := cuptitest.Build(t)
	tests := []struct {
		name    string
		library string
		fake    []string
		argv    []string
		want    error
		reason  string
		message string
	}{
		{name: "no library", library: filepath.Join(t.TempDir(), "libcupti.so.12"), argv: []string{target},
			reason: ReasonNoLibrary, message: "no CUPTI library: "},
		{name: "too old", library: lib, fake: []string{"FAKE_CUPTI_VERSION=9"}, argv: []string{target},
			reason: ReasonTooOld, message: "CUPTI too old: CUPTI API version 9"},
		{name: "profiling restricted", library: lib, fake: []string{"FAKE_CUPTI_ENABLE=35"}, argv: []string{target},
			want: ErrInsufficientPrivileges, message: "CUPTI refused: cuptiActivityEnable: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES (35): profiling is restricted to administrators"},
		{name: "another failure", library: lib, fake: []string{"FAKE_CUPTI_ENABLE=999"}, argv: []string{target},
			message: "CUPTI failed in the target: cuptiActivityEnable: CUPTI_ERROR_UNKNOWN (999)"},
		{name: "no CUDA", library: lib, argv: []string{"true"}, want: ErrNoCUDA, message: "never initialised CUDA"},
		{name: "no kernel", library: lib, argv: []string{target}, want: ErrNoKernels, message: "launched none"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := record(t, tt.library, tt.fake, tt.argv...).Launches()
			if err == nil {
				t.Fatal("no error")
			}
			if tt.want != nil && !errors.Is(err, tt.want) {
				t.Errorf("error %v is not %v", err, tt.want)
			}
			var ue *UnavailableError
			if tt.reason != "" && (!errors.As(err, &ue) || ue.Reason != tt.reason) {
				t.Errorf("error %#v: want reason %s", err, tt.reason)
			}
			if !strings.Contains(err.Error(), tt.message) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q: want one line with %q", err, tt.message)
			}
		})
	}
}

func TestInjectionFlagsLostAndUnverifiedRecords(t *testing.T) {
	lib, target := cuptitest.Build(t)
	kernels := "FAKE_CUPTI_KERNELS=0,1,2,k"
	tests := []struct {
		name string
		fake []string
		argv []string
		want string
	}{
		{name: "dropped", fake: []string{kernels, "FAKE_CUPTI_DROPPED=3"}, argv: []string{target}, want: "lost-records: CUPTI dropped 3 records"},
		{name: "no exit", fake: []string{kernels}, argv: []string{target, "crash"}, want: "lost-records: process"},
		{name: "newer CUPTI", fake: []string{kernels, "FAKE_CUPTI_VERSION=26"}, argv: []string{target}, want: "unverified-layout: CUPTI API version 26 is newer than 18"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, f := range record(t, lib, tt.fake, tt.argv...).Flags() {
				got = append(got, f.Code+": "+f.Message)
			}
			if len(got) != 1 || !strings.HasPrefix(got[0], tt.want) {
				t.Errorf("flags %q, want one starting %q", got, tt.want)
			}
		})
	}
}

// TestInjectionIsRebuiltFromItsSources rebuilds the committed injection
// library with inject/build.sh and compares it byte for byte, and checks
// that it is the one embedded.
func TestInjectionIsRebuiltFromItsSources(t *testing.T) {
	committed, err := os.ReadFile(filepath.Join("inject", libName))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(committed, injection) {
		t.Fatal("the embedded library is not inject/" + libName)
	}
	testutil.CheckRebuilt(t, "inject", []string{"inject.c", "layout.h", "profiler.c", "profiler.h"}, []string{libName})
}

func TestVersionAsksTheLibrary(t *testing.T) {
	lib, target := cuptitest.Build(t)
	if v, err := Version(lib); v != 18 || err != nil {
		t.Errorf("the fake's version: %d, %v", v, err)
	}
	if _, err := Version(target); err == nil {
		t.Error("a program without cuptiGetVersion has a version")
	}
	if _, err := Version(filepath.Join(t.TempDir(), "libcupti.so")); err == nil {
		t.Error("a missing library has a version")
	}
}
