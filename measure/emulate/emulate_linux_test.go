package emulate

import (
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/rprof/rprof/internal/testutil"
	"github.com/rprof/rprof/machine"
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
		{"vmulps-ymm-across-page", 16, "fp32", "256"},
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
// plugin/build.sh and compares it byte for byte.
func TestPluginIsRebuiltFromItsSources(t *testing.T) {
	testutil.CheckRebuilt(t, "plugin", []string{"plugin.c", "fpclass.h", "qemu_api_common.h", "qemu_api_v1.h", "qemu_api_v2.h"},
		[]string{"rprof-qemu-v1.so", "rprof-qemu-v2.so"})
}

// objectFlops sums the FLOPs of the functions in objects whose name
// contains part.
func objectFlops(r Result, part string) uint64 {
	var n uint64
	for _, f := range r.Functions {
		if strings.Contains(f.Object, part) {
			n += f.Flops
		}
	}
	return n
}

func TestOpenBLASDGEMMIsTwoNCubedPlusABoundedSquareTermAndDeterministic(t *testing.T) {
	q := needQEMU(t)
	if _, err := os.Stat("/usr/include/x86_64-linux-gnu/cblas.h"); err != nil {
		if _, err := os.Stat("/usr/include/cblas.h"); err != nil {
			t.Skip("OpenBLAS headers not installed (libopenblas-dev)")
		}
	}
	prog := compile(t, "dgemm.c", "-lopenblas")
	const n = 256
	// C = A B does 2n^3 FLOPs; OpenBLAS adds a term in n^2 whose factor
	// depends on the kernel it picks for the CPU QEMU offers and on the
	// threads' partitioning (0.3.21: Haswell kernel 3.34n^2 on one thread,
	// 2.875n^2 on two; Opteron kernel 4n^2 + 2, scaling by alpha per
	// k-panel). The structure holds for every kernel: 2n^3 plus at most
	// 8n^2, the same count run to run.
	cube, square := float64(2*n*n*n), float64(n*n)
	for _, threads := range []string{"1", "2"} {
		var counts []uint64
		for run := 0; run < 2; run++ {
			r := emulate(t, q, CacheModel{Line: 64}, []string{"OPENBLAS_NUM_THREADS=" + threads}, prog, fmt.Sprint(n))
			counts = append(counts, objectFlops(r, "openblas"))
		}
		if extra := float64(counts[0]) - cube; extra < 0 || extra > 8*square {
			t.Errorf("%s threads: DGEMM n=%d counted %d FLOPs in OpenBLAS = 2n^3 %+.3fn^2, want 2n^3 plus 0 to 8n^2", threads, n, counts[0], extra/square)
		}
		if counts[1] != counts[0] {
			t.Errorf("%s threads: two runs counted %d and %d: emulated W must be deterministic", threads, counts[0], counts[1])
		}
	}
}

func TestThreadsAreCountedExactly(t *testing.T) {
	q := needQEMU(t)
	prog := compile(t, "threads.c", "-pthread")
	const threads, n = 4, 100000
	r := emulate(t, q, CacheModel{Line: 64}, nil, prog, fmt.Sprint(threads), fmt.Sprint(n))
	// QEMU reuses the index of a thread that ended, so the slots used are
	// at least 2 (threads ran at once) and at most threads+1.
	if got, want := r.Work["fp64"], uint64(threads*n*8); got != want || r.Threads < 2 || r.Threads > threads+1 {
		t.Errorf("%d threads x %d ymm FMAs: counted %d fp64 FLOPs on %d thread slots, want %d", threads, n, got, r.Threads, want)
	}
}

func TestTriadTrafficAboveTheLastLevelIsAnalytic(t *testing.T) {
	q := needQEMU(t)
	prog := compile(t, "stream.c", "-O2")
	m, err := ParseCacheModel("32K/8,256K/8,2M/16")
	if err != nil {
		t.Fatal(err)
	}
	// 3 x 8 MiB arrays, 4x the last level: each pass reads b and c,
	// write-allocates a and writes it back, 32 B per element.
	const n, passes = 1 << 20, 2
	r := emulate(t, q, m, nil, prog, fmt.Sprint(n), fmt.Sprint(passes))
	var triad Function
	for _, f := range r.Functions {
		if f.Name == "triad" {
			triad = f
		}
	}
	if triad.Flops != 2*n*passes {
		t.Errorf("triad did %d FLOPs, want %d (attributed to the right symbol)", triad.Flops, 2*n*passes)
	}
	want := float64(32 * n * passes)
	if got := float64(triad.DRAM); math.Abs(got/want-1) > 0.05 {
		t.Errorf("triad's DRAM traffic %.0f B, analytic %.0f B: off by %.1f%%, want within 5%%", got, want, 100*(got/want-1))
	}
}

func TestTrafficStaysInsideTheLevelHoldingTheWorkingSet(t *testing.T) {
	q := needQEMU(t)
	prog := compile(t, "stream.c", "-O2")
	m, err := ParseCacheModel("32K/8,256K/8,2M/16")
	if err != nil {
		t.Fatal(err)
	}
	// Working sets of three arrays at about half of L2 and of L3: after
	// the first pass every pass moves 32 B per element between the level
	// above and the one holding them, and almost nothing below it.
	for _, tt := range []struct {
		n      int
		holder int // index in r.Levels of the pair whose lower level holds the set
	}{
		{n: 128 << 10 / 24, holder: 0}, // 128 KiB in L2: L1-L2 busy, L2-L3 quiet
		{n: 1 << 20 / 24, holder: 1},   // 1 MiB in L3: L2-L3 busy, L3-DRAM quiet
	} {
		const passes = 40
		r := emulate(t, q, m, nil, prog, fmt.Sprint(tt.n), fmt.Sprint(passes))
		busy, quiet := r.Levels[tt.holder], r.Levels[tt.holder+1]
		want := float64(32 * tt.n * passes)
		if got := float64(busy.Total()); got < want*0.95 || got > want*1.15 {
			t.Errorf("n=%d: %s-%s moved %.0f B, want about %.0f (32 B x n x passes)", tt.n, busy.Upper, busy.Lower, got, want)
		}
		if got := float64(quiet.Total()); got > want*0.10 {
			t.Errorf("n=%d: %s-%s moved %.0f B, want under 10%% of %.0f: the working set fits above it", tt.n, quiet.Upper, quiet.Lower, got, want)
		}
	}
}

// fpMnemonic matches the AT&T mnemonics of the instructions that do counted
// FP work: SSE/AVX arithmetic, horizontal and addsub forms, FMA3, dot
// products, x87 arithmetic and fsqrt.
var fpMnemonic = regexp.MustCompile(`^(v?(add|sub|mul|div|sqrt|min|max)(ss|sd|ps|pd)|v?(hadd|hsub|addsub)(ps|pd)|vfn?m(add|sub)(132|213|231)(ss|sd|ps|pd)|vfm(addsub|subadd)(132|213|231)(ps|pd)|v?dpp[sd]|fi?(add|subr?|mul|divr?)[slp]?|fsqrt)$`)

// TestDecoderAgreesWithQEMUsDisassembler runs real programs (OpenBLAS
// DGEMM, libm, qsort, printf) with the plugin listing every translated
// instruction with QEMU's disassembly and the plugin's own decoding: an
// instruction has counted work exactly when its mnemonic says FP
// arithmetic, with as many lanes as its registers hold. Instructions QEMU
// cannot disassemble (".byte") are left out.
func TestDecoderAgreesWithQEMUsDisassembler(t *testing.T) {
	q := needQEMU(t)
	progs := [][]string{{compile(t, "mixed.c", "-O2", "-march=x86-64-v3", "-lm"), "20000"}}
	if _, err := os.Stat("/usr/include/x86_64-linux-gnu/cblas.h"); err == nil {
		progs = append(progs, []string{compile(t, "dgemm.c", "-lopenblas"), "64"})
	}
	seen, disassembled := 0, 0
	for _, argv := range progs {
		s, err := NewSession(q, CacheModel{Line: 64})
		if err != nil {
			t.Fatal(err)
		}
		s.disas = true
		full, err := s.Argv(argv[0], argv)
		if err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(full[0], full[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", argv, err, out)
		}
		names, _ := filepath.Glob(filepath.Join(s.out, "disas.*.txt"))
		for _, name := range names {
			b, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
				class, text, _ := strings.Cut(line, "\t")
				fields := strings.Fields(text)
				if len(fields) > 0 {
					disassembled++
				}
				if len(fields) == 0 || fields[0] == ".byte" || fields[0] == "(bad)" {
					continue
				}
				var flops, prec, width, nt int
				fmt.Sscan(class, &flops, &prec, &width, &nt)
				mn := fields[0]
				if fpMnemonic.MatchString(mn) != (flops > 0) {
					t.Errorf("%s: decoded %d FLOPs", text, flops)
					continue
				}
				if flops == 0 {
					continue
				}
				seen++
				// Lanes: a ymm operand makes 256 bits, an xmm one 128 bits
				// unless scalar; x87 is width 3.
				want := 0
				switch {
				case strings.HasPrefix(mn, "f"):
					want = 3
				case strings.Contains(text, "%ymm"):
					want = 2
				case strings.HasSuffix(mn, "ps") || strings.HasSuffix(mn, "pd") || strings.HasPrefix(mn, "dpp") || strings.HasPrefix(mn, "vdpp"):
					want = 1
				}
				if width != want {
					t.Errorf("%s: decoded width %d, want %d", text, width, want)
				}
			}
		}
		s.Close()
	}
	if disassembled == 0 {
		t.Skipf("%s %s disassembles nothing (QEMU 10 disassembles x86 only when built with capstone)", q.Path, q.Version)
	}
	if seen < 20 {
		t.Errorf("only %d FP instructions translated: the programs did not exercise the decoder", seen)
	}
}

func TestCallsAreCountedOneByOneAndOverlapsFlagged(t *testing.T) {
	q := needQEMU(t)
	dir := t.TempDir()
	lib := filepath.Join(dir, "libcalls.so")
	for _, args := range [][]string{
		{"-O1", "-ffp-contract=off", "-shared", "-fPIC", "-DLIB", "-o", lib, "testdata/calls.c", "-pthread"},
		{"-O1", "-o", filepath.Join(dir, "calls"), "testdata/calls.c", "-L" + dir, "-lcalls", "-Wl,-rpath," + dir, "-pthread"},
	} {
		if _, err := exec.LookPath("gcc"); err != nil {
			t.Skip("gcc not found")
		}
		if b, err := exec.Command("gcc", args...).CombinedOutput(); err != nil {
			t.Fatalf("gcc %v: %v\n%s", args, err, b)
		}
	}
	f, err := elf.Open(lib)
	if err != nil {
		t.Fatal(err)
	}
	syms, _ := f.DynamicSymbols()
	f.Close()
	var fn elf.Symbol
	for _, s := range syms {
		if s.Name == "work" {
			fn = s
		}
	}
	s, err := NewSession(q, CacheModel{Line: 64})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.CountCalls(lib, fn.Value, fn.Size); err != nil {
		t.Fatal(err)
	}
	prog := filepath.Join(dir, "calls")
	argv, err := s.Argv(prog, []string{prog})
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("%v: %v\n%s", argv, err, out)
	}
	r, err := s.Result()
	if err != nil {
		t.Fatal(err)
	}
	// The forked child's images (before and after its exec) made no call.
	if !r.CallMapped || r.Images < 2 || r.CallImages != 1 || len(r.Calls) != 5 {
		t.Fatalf("library mapped %v, %d images, %d made calls, %d calls: %+v; want 2 or more, 1 and 5", r.CallMapped, r.Images, r.CallImages, len(r.Calls), r.Calls)
	}
	for i, n := range []uint64{1000, 2000, 3000} {
		if c := r.Calls[i]; c.Overlapped || c.Work["fp64"] != 2*n || c.Flops() != 2*n {
			t.Errorf("call %d of %d iterations: %+v, want exactly %d fp64 FLOPs, not overlapped", i, n, c, 2*n)
		}
	}
	// The two threads met inside the function: both calls overlapped, and
	// each one's counts hold the other's work, or part of it.
	for _, c := range r.Calls[3:] {
		if !c.Overlapped || c.Flops() < 2000 || c.Flops() > 4000 {
			t.Errorf("a call of two overlapping ones: %+v, want overlapped, 2000 to 4000 FLOPs", c)
		}
	}
	if r.Calls[3].Thread == r.Calls[4].Thread {
		t.Errorf("overlapping calls on one thread slot %d", r.Calls[3].Thread)
	}
}

func TestCountCallsRefusesAnExecutable(t *testing.T) {
	q := needQEMU(t)
	s, err := NewSession(q, CacheModel{Line: 64})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	prog := compile(t, "fpops.c", "-no-pie")
	if err := s.CountCalls(prog, 0x401000, 16); !errors.Is(err, ErrNotSharedLibrary) {
		t.Errorf("a non-PIE executable: %v, want ErrNotSharedLibrary", err)
	}
}

func TestAScriptTargetIsCountedThroughItsInterpreter(t *testing.T) {
	q := needQEMU(t)
	prog := compile(t, "threads.c", "-pthread")
	script := filepath.Join(t.TempDir(), "run.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nexec "+prog+" 2 1000\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := emulate(t, q, CacheModel{Line: 64}, nil, script)
	if got, want := r.Work["fp64"], uint64(2*1000*8); got != want || r.Images < 2 {
		t.Errorf("a script exec'ing 2 threads x 1000 ymm FMAs: %d fp64 FLOPs in %d images, want %d in 2 or more", got, r.Images, want)
	}
}

func TestTheTargetAndItsExecsSeeTheHostsIdentity(t *testing.T) {
	q := needQEMU(t)
	host, err := machine.ReadCPU(os.DirFS("/proc"))
	if err != nil || host.Arm || host.Family == 0 {
		t.Skipf("needs an x86 host with a readable /proc/cpuinfo: %v", err)
	}
	prog := compile(t, "cpuid.c")
	native, err := exec.Command(prog).Output()
	if err != nil {
		t.Fatal(err)
	}
	cpu := HostCPU(host)
	want := fmt.Sprintf("%s %d %d %d avx2=%d avx512f=0\n", host.Vendor, host.Family, host.Model, host.Stepping, b2i(host.HasFlag("avx2")))
	for _, argv := range [][]string{{prog}, {prog, "exec"}, {prog, "self"}} {
		s, err := NewSession(q, CacheModel{Line: 64})
		if err != nil {
			t.Fatal(err)
		}
		s.CPU = cpu
		full, err := s.Argv(prog, argv)
		if err != nil {
			t.Fatal(err)
		}
		got, err := exec.Command(full[0], full[1:]...).Output()
		s.Close()
		if err != nil {
			t.Fatalf("%v: %v", full, err)
		}
		if string(got) != want {
			t.Errorf("%v under -cpu %s printed %q, want %q (natively %q)", argv, cpu.Option, got, want, native)
		}
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestAStaticQEMUIsRefusedWithItsReason(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not found")
	}
	src := filepath.Join(t.TempDir(), "q.c")
	bin := filepath.Join(t.TempDir(), "qemu-x86_64")
	if err := os.WriteFile(src, []byte("int main(void){return 0;}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("gcc", "-static", "-o", bin, src).CombinedOutput(); err != nil {
		t.Skipf("no static C library to build a static executable: %v\n%s", err, out)
	}
	_, err := FindQEMUAt(context.Background(), bin)
	var ue *UnsupportedQEMUError
	if !errors.As(err, &ue) || ue.Reason != QEMUStatic {
		t.Errorf("a static binary: %v, want reason %q", err, QEMUStatic)
	}
}

func TestAQEMUWithoutPluginsIsRefusedWithItsReason(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "qemu-x86_64")
	script := "#!/bin/sh\ncase $1 in --version) echo 'qemu-x86_64 version 8.2.2';; *) echo '-cpu model  select CPU';; esac\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := FindQEMUAt(context.Background(), bin)
	var ue *UnsupportedQEMUError
	if !errors.As(err, &ue) || ue.Reason != QEMUNoPlugins || strings.Contains(err.Error(), "\n") {
		t.Errorf("a QEMU whose -h lists no -plugin: %v, want one line of reason %q", err, QEMUNoPlugins)
	}
	t.Setenv(QEMUEnv, bin)
	if _, err := FindQEMU(context.Background()); !errors.As(err, &ue) || ue.Path != bin {
		t.Errorf("$%s=%s: %v, want that binary checked", QEMUEnv, bin, err)
	}
}

// OpenBLAS picks its kernels by CPU family and model: under QEMU's own CPU
// model it takes its oldest (Opteron, SSE2); with the host's identity it
// takes an AVX2 kernel set, the nearest to the native one QEMU can run.
func TestOpenBLASPicksAnAVX2CoreUnderTheHostsIdentity(t *testing.T) {
	q := needQEMU(t)
	host, err := machine.ReadCPU(os.DirFS("/proc"))
	if err != nil || host.Arm || !host.HasFlag("avx2") || !host.HasFlag("fma") {
		t.Skipf("needs an x86 host with AVX2 and FMA: %v", err)
	}
	if _, err := os.Stat("/usr/include/x86_64-linux-gnu/cblas.h"); err != nil {
		t.Skip("OpenBLAS is not installed (libopenblas-dev)")
	}
	prog := compile(t, "corename.c", "-lopenblas")
	core := func(cpu CPU) string {
		s, err := NewSession(q, CacheModel{Line: 64})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		s.CPU = cpu
		full, err := s.Argv(prog, []string{prog})
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(full[0], full[1:]...)
		// The environment's choice would override dispatch.
		cmd.Env = slices.DeleteFunc(os.Environ(), func(e string) bool { return strings.HasPrefix(e, "OPENBLAS_CORETYPE=") })
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%v: %v", full, err)
		}
		return strings.TrimSpace(string(out))
	}
	if got := core(HostCPU(host)); got != "Haswell" && got != "Zen" {
		t.Errorf("OpenBLAS under the host's identity (%s) chose %q, want an AVX2 core (Haswell, Zen)", HostCPU(host).Option, got)
	}
	t.Logf("under QEMU's own CPU model OpenBLAS chose %s", core(CPU{}))
}

// TestModelOutputIsTheRecordedOne runs a fixed sequence of accesses
// (testdata/model.S: no libc, data at a fixed address) under three cache
// models and compares what the model computed, level by level and by
// function, with the recorded output: a change to the plugin that alters
// the model's results fails here, whatever its speed. The accesses are
// the same under every QEMU (a wide access split into several touches
// the same lines in the same order), so one recording serves them all.
func TestModelOutputIsTheRecordedOne(t *testing.T) {
	q := needQEMU(t)
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not found")
	}
	prog := filepath.Join(t.TempDir(), "model")
	if b, err := exec.Command("gcc", "-nostdlib", "-static", "-no-pie", "-o", prog, filepath.Join("testdata", "model.S")).CombinedOutput(); err != nil {
		t.Fatalf("gcc model.S: %v\n%s", err, b)
	}
	var out strings.Builder
	// rprof's default; one all of whose levels the data overflows; one
	// with 20 ways and sets not a power of two.
	for _, spec := range []string{"48K/12,1M/16,32M/16", "4K/4,32K/8,256K/16", "60K/20,1200K/20,6M/12"} {
		m, err := ParseCacheModel(spec)
		if err != nil {
			t.Fatal(err)
		}
		r := emulate(t, q, m, nil, prog)
		fmt.Fprintf(&out, "model %s\ncore %d %d\nnt %d\n", m, r.Core.Read, r.Core.Write, r.NonTemporal)
		for _, l := range r.Levels {
			fmt.Fprintf(&out, "%s-%s %d %d\n", l.Upper, l.Lower, l.Read, l.Write)
		}
		fns := slices.Clone(r.Functions)
		slices.SortFunc(fns, func(a, b Function) int { return strings.Compare(a.Name, b.Name) })
		for _, f := range fns {
			fmt.Fprintf(&out, "function %s core %d dram %d\n", f.Name, f.Core, f.DRAM)
		}
	}
	testutil.Golden(t, filepath.Join("testdata", "model.golden"), []byte(out.String()))
}
