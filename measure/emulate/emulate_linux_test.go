package emulate

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
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
