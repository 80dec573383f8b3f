package ptx

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// cudaTool finds ptxas or cuobjdump: in $RPROF_CUDA_TOOLS (scripts/test.sh
// points it at Debian's nvidia-cuda-toolkit 11.8, unpacked), else PATH.
func cudaTool(t *testing.T, name string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("compiles every kernel twice with ptxas")
	}
	if dir := os.Getenv("RPROF_CUDA_TOOLS"); dir != "" {
		p := filepath.Join(dir, name)
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("RPROF_CUDA_TOOLS: %v", err)
		}
		return p
	}
	p, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("unmet requirement: %s not found ($RPROF_CUDA_TOOLS or PATH; scripts/test.sh unpacks Debian's nvidia-cuda-toolkit): %v", name, err)
	}
	return p
}

// sassLine is an instruction of cuobjdump -sass: "/*00d0*/ FFMA R2, ... ;".
var sassLine = regexp.MustCompile(`^\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;`)

// instr is one SASS instruction.
type instr struct {
	addr   int64
	opcode string // without the predicate
	args   string
}

// disassemble splits cuobjdump -sass output into functions' instructions.
func disassemble(out []byte) map[string][]instr {
	fns := map[string][]instr{}
	var cur string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if i := strings.Index(line, "Function : "); i >= 0 {
			cur = strings.TrimSpace(line[i+len("Function : "):])
			continue
		}
		m := sassLine.FindStringSubmatch(line)
		if m == nil || cur == "" {
			continue
		}
		addr, _ := strconv.ParseInt(m[1], 16, 64)
		fields := strings.Fields(m[2])
		if strings.HasPrefix(fields[0], "@") {
			fields = fields[1:]
		}
		fns[cur] = append(fns[cur], instr{addr: addr, opcode: fields[0], args: strings.Join(fields[1:], " ")})
	}
	return fns
}

// loopBody returns the instructions of the one backward branch's loop:
// from its target to the branch.
func loopBody(code []instr) ([]instr, int) {
	var body []instr
	loops := 0
	for i, in := range code {
		if in.opcode != "BRA" {
			continue
		}
		target, err := strconv.ParseInt(strings.TrimPrefix(strings.Fields(in.args)[0], "0x"), 16, 64)
		if err != nil || target >= in.addr {
			continue
		}
		loops++
		for _, b := range code[:i+1] {
			if b.addr >= target {
				body = append(body, b)
			}
		}
	}
	return body, loops
}

// TestFMALoopsCompileToTheDesignedInstructions compiles the module with
// ptxas for sm_80 and sm_90, disassembles it, and checks that each FMA
// kernel has one loop whose body holds ILP x Unroll of its FMA
// instruction (DFMA, FFMA, HFMA2; HFMA2.MMA is ptxas's move idiom, not
// arithmetic) and no other FMA, and that every kernel of the table is in
// the module.
func TestFMALoopsCompileToTheDesignedInstructions(t *testing.T) {
	ptxas, cuobjdump := cudaTool(t, "ptxas"), cudaTool(t, "cuobjdump")
	src := filepath.Join(t.TempDir(), "kernels.ptx")
	if err := os.WriteFile(src, Module, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, arch := range []string{"sm_80", "sm_90"} {
		t.Run(arch, func(t *testing.T) {
			cubin := filepath.Join(t.TempDir(), arch+".cubin")
			if out, err := exec.Command(ptxas, "-arch="+arch, "-o", cubin, src).CombinedOutput(); err != nil {
				t.Fatalf("ptxas: %v\n%s", err, out)
			}
			out, err := exec.Command(cuobjdump, "-sass", cubin).Output()
			if err != nil {
				t.Fatalf("cuobjdump: %v", err)
			}
			fns := disassemble(out)
			for _, k := range Kernels {
				code, ok := fns[k.Name]
				if !ok {
					t.Errorf("%s: not in the cubin", k.Name)
					continue
				}
				if k.Kind != FMA {
					continue
				}
				body, loops := loopBody(code)
				if loops != 1 {
					t.Errorf("%s: %d loops, want 1", k.Name, loops)
					continue
				}
				counts := map[string]int{}
				for _, in := range body {
					switch in.opcode {
					case "DFMA", "FFMA", "HFMA2", "FFMA2", "HFMA2.MMA":
						if in.opcode == "HFMA2.MMA" && strings.Contains(in.args, "-RZ, RZ") {
							continue // a move
						}
						counts[in.opcode]++
					}
				}
				if counts[k.SASS] != k.SASSPerIter || len(counts) != 1 {
					t.Errorf("%s: loop body has %v, want %d %s", k.Name, counts, k.SASSPerIter, k.SASS)
				}
			}
		})
	}
}
