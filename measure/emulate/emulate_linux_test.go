package emulate

import (
	"bytes"
	"context"
	"debug/elf"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// needQEMU returns the supported qemu-x86_64, or skips with the reason.
func needQEMU(t *testing.T) QEMU {
	t.Helper()
	q, err := FindQEMU(context.Background())
	if err != nil {
		t.Skipf("emulation needs Debian's qemu-user (scripts/test.sh installs it): %v", err)
	}
	return q
}

// compile builds a C test program from testdata with gcc, or skips.
func compile(t *testing.T, src string, flags ...string) string {
	t.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not found")
	}
	out := filepath.Join(t.TempDir(), filepath.Base(src[:len(src)-2]))
	args := append([]string{"-O1", "-o", out, filepath.Join("testdata", src)}, flags...)
	if b, err := exec.Command("gcc", args...).CombinedOutput(); err != nil {
		t.Fatalf("gcc %v: %v\n%s", args, err, b)
	}
	return out
}

// emulate runs argv under the plugin with model m and returns the result.
func emulate(t *testing.T, q QEMU, m CacheModel, env []string, argv ...string) Result {
	t.Helper()
	s, err := NewSession(q, m)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	full, err := s.Argv(argv[0], argv)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(full[0], full[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v: %v", argv, err)
	}
	r, err := s.Result()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestWorkIsExactPerFormPrecisionAndWidth(t *testing.T) {
	q := needQEMU(t)
	prog := compile(t, "fpops.c")
	const n = 1000
	for _, tc := range []struct {
		form  string
		flops uint64
		prec  string
		width string
	}{
		{"addsd", 1, "fp64", "scalar"},
		{"addss", 1, "fp32", "scalar"},
		{"addpd", 2, "fp64", "128"},
		{"addps", 4, "fp32", "128"},
		{"mulpd-mem", 2, "fp64", "128"},
		{"subps", 4, "fp32", "128"},
		{"divsd", 1, "fp64", "scalar"},
		{"sqrtpd", 2, "fp64", "128"},
		{"minps", 4, "fp32", "128"},
		{"maxsd", 1, "fp64", "scalar"},
		{"haddpd", 2, "fp64", "128"},
		{"hsubps", 4, "fp32", "128"},
		{"addsubpd", 2, "fp64", "128"},
		{"addsubps", 4, "fp32", "128"},
		{"dpps", 8, "fp32", "128"},
		{"dppd", 4, "fp64", "128"},
		{"vaddsd", 1, "fp64", "scalar"},
		{"vaddpd-ymm", 4, "fp64", "256"},
		{"vmulps-ymm", 8, "fp32", "256"},
		{"vdivps-xmm", 4, "fp32", "128"},
		{"vsqrtps-ymm", 8, "fp32", "256"},
		{"vmaxpd-ymm-mem", 4, "fp64", "256"},
		{"vhaddps-ymm", 8, "fp32", "256"},
		{"vaddsubpd-ymm", 4, "fp64", "256"},
		{"vdpps-ymm", 16, "fp32", "256"},
		{"vfmadd231sd", 2, "fp64", "scalar"},
		{"vfmadd231ss", 2, "fp32", "scalar"},
		{"vfmadd231pd-xmm", 4, "fp64", "128"},
		{"vfmadd132ps-ymm", 16, "fp32", "256"},
		{"vfnmsub213pd-ymm-mem", 8, "fp64", "256"},
		{"vfmaddsub231ps-xmm", 8, "fp32", "128"},
		{"vfmsubadd132pd-ymm", 8, "fp64", "256"},
		{"vfnmadd231ss", 2, "fp32", "scalar"},
		{"x87-fadd", 1, "fp80", "x87"},
		{"x87-fmul", 1, "fp80", "x87"},
		{"x87-fdivl-mem", 1, "fp80", "x87"},
		{"x87-fsqrt", 1, "fp80", "x87"},
		{"x87-fiaddl-mem", 1, "fp80", "x87"},
		{"cmppd", 0, "", ""},
		{"cvtsd2ss", 0, "", ""},
		{"rcpps", 0, "", ""},
		{"vroundpd-ymm", 0, "", ""},
		{"andpd", 0, "", ""},
		{"vmovapd-ymm", 0, "", ""},
		{"x87-fcom", 0, "", ""},
		{"x87-fchs", 0, "", ""},
	} {
		t.Run(tc.form, func(t *testing.T) {
			t.Parallel()
			r := emulate(t, q, CacheModel{Line: 64}, nil, prog, tc.form, "1000")
			want := map[string]uint64{}
			wantWidth := map[string]uint64{}
			if tc.flops > 0 {
				want[tc.prec] = tc.flops * n
				wantWidth[tc.width] = tc.flops * n
			}
			if !equalCounts(r.Work, want) || !equalCounts(r.WorkByWidth, wantWidth) {
				t.Errorf("work %v by width %v, want %v and %v", r.Work, r.WorkByWidth, want, wantWidth)
			}
		})
	}
}

func equalCounts(a, b map[string]uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestPluginIsRebuiltFromItsSources rebuilds the committed plugin with
// plugin/build.sh and compares it byte for byte. The build is
// reproducible for one compiler version, so the test skips when this
// machine's gcc is not the one that built the committed file (named in its
// .comment section).
func TestPluginIsRebuiltFromItsSources(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not found")
	}
	committed, err := os.ReadFile("plugin/rprof-qemu-v1.so")
	if err != nil {
		t.Fatal(err)
	}
	built, err := elfComment(committed)
	if err != nil {
		t.Fatal(err)
	}
	ver, err := exec.Command("gcc", "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(string(ver), "\n")
	if !strings.Contains(built, strings.TrimPrefix(first, "gcc ")) {
		t.Skipf("the committed plugin was built by %q, this machine has %q: byte equality holds only for one compiler", built, first)
	}
	dir := t.TempDir()
	for _, f := range []string{"build.sh", "plugin.c", "fpclass.h", "qemu_api_v1.h"} {
		b, err := os.ReadFile(filepath.Join("plugin", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := exec.Command("sh", filepath.Join(dir, "build.sh")).CombinedOutput(); err != nil {
		t.Fatalf("build.sh: %v\n%s", err, out)
	}
	rebuilt, err := os.ReadFile(filepath.Join(dir, "rprof-qemu-v1.so"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(rebuilt, committed) {
		t.Errorf("plugin/rprof-qemu-v1.so differs from a build of its sources (%d vs %d bytes): run measure/emulate/plugin/build.sh and commit the result", len(rebuilt), len(committed))
	}
}

// elfComment returns the .comment section of an ELF file (the compiler's
// identification).
func elfComment(b []byte) (string, error) {
	f, err := elf.NewFile(bytes.NewReader(b))
	if err != nil {
		return "", err
	}
	s := f.Section(".comment")
	if s == nil {
		return "", errors.New("no .comment section")
	}
	d, err := s.Data()
	return strings.TrimRight(string(d), "\x00"), err
}
