package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rprof/rprof/cmd/rprof/internal/render"
	"github.com/rprof/rprof/dnn"
	"github.com/rprof/rprof/dnnrun"
	"github.com/rprof/rprof/internal/docfile"
	"github.com/rprof/rprof/internal/testutil"
)

// roofsFixture is a roofs document of a Zen 5 guest with fp32 roofs, to
// place the groups under.
const roofsFixture = "../../roofline/testdata/roofs_zen5_vm.json"

// rprofDNN runs rprof dnn in-process.
func rprofDNN(t *testing.T, ctx context.Context, args ...string) (int, []byte, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(ctx, append([]string{"dnn"}, args...), strings.NewReader(""), &stdout, &stderr)
	return code, stdout.Bytes(), stderr.String()
}

// The table of a trace captured from PyTorch, placed under a Zen 5 guest's
// roofs.
func TestDNNTableGolden(t *testing.T) {
	tr := traceOf(t, "../../dnn/testdata/capture-2.6.3-torch.txt")
	tr.Add("onednn_verbose,exec,cpu,convolution,truncated")
	roofs, err := docfile.ReadRoofs(roofsFixture)
	if err != nil {
		t.Fatal(err)
	}
	groups := tr.Groups()
	points := dnn.Points(groups, dnn.PointOptions{
		Command: []string{"python3", "cnn.py"}, Created: time.Unix(0, 0).UTC(), Confidence: 0.95,
		Roofs: roofs, RoofsFile: "roofs.json", CPUs: dnnrun.LibraryThreads(tr.Info), Trace: tr,
	})
	var b bytes.Buffer
	render.WriteDNNTable(&b, []string{"python3", "cnn.py"}, tr, groups, points, 12)
	testutil.Golden(t, "testdata/dnn/torch-table.golden", b.Bytes())
	if tr.Skipped != 1 {
		t.Errorf("skipped %d, want the truncated line", tr.Skipped)
	}
}

// floodLines are executions of a small CNN in oneDNN 2.6.3's grammar
// (from dnn/testdata/capture-2.6.3-torch.txt), without their times.
var floodLines = []string{
	"onednn_verbose,exec,cpu,reorder,jit:uni,undef,src_f32::blocked:abcd:f0 dst_f32::blocked:Acdb16a:f0,attr-scratchpad:user ,,16x3x3x3,",
	"onednn_verbose,exec,cpu,convolution,jit:avx512_core,forward_training,src_f32::blocked:abcd:f0 wei_f32::blocked:Acdb16a:f0 bia_f32::blocked:a:f0 dst_f32::blocked:aBcd16b:f0,attr-scratchpad:user ,alg:convolution_direct,mb2_ic3oc16_ih16oh16kh3sh1dh0ph1_iw16ow16kw3sw1dw0pw1,",
	"onednn_verbose,exec,cpu,reorder,jit:blk,undef,src_f32::blocked:aBcd16b:f0 dst_f32::blocked:abcd:f0,attr-scratchpad:user ,,2x16x16x16,",
	"onednn_verbose,exec,cpu,eltwise,jit:avx512_core,forward_training,data_f32::blocked:abcd:f0 diff_undef::undef::f0,attr-scratchpad:user ,alg:eltwise_gelu_erf alpha:0 beta:0,2x16x16x16,",
}

// verboseFlood is the target "flood BYTES": a program that prints about
// BYTES of oneDNN verbose trace, the executions of floodLines over and
// over with times that vary, and a line of its own every 1000 lines;
// "longline BYTES" prints one verbose line of BYTES bytes. Nothing is
// stored: the trace is made as it is written.
func verboseFlood(mode, arg string) int {
	size, err := strconv.ParseInt(arg, 10, 64)
	if err != nil {
		return 99
	}
	w := bufio.NewWriterSize(os.Stdout, 64<<10)
	fmt.Fprintln(w, "onednn_verbose,info,oneDNN v2.6.3 (commit N/A)")
	fmt.Fprintln(w, "onednn_verbose,info,cpu,runtime:OpenMP,nthr:1")
	var n int64
	switch mode {
	case "flood":
		for i := 0; n < size; i++ {
			if i%1000 == 999 {
				fmt.Fprintln(w, "the program's own line", i)
			}
			k, err := fmt.Fprintf(w, "%s%.6g\n", floodLines[i%len(floodLines)], 0.01+float64(i%977)*1e-4)
			if err != nil {
				return 98
			}
			n += int64(k)
		}
	case "longline":
		w.WriteString("onednn_verbose,exec,cpu,")
		chunk := make([]byte, 64<<10)
		for i := range chunk {
			chunk[i] = 'x'
		}
		for ; n < size; n += int64(len(chunk)) {
			if _, err := w.Write(chunk); err != nil {
				return 98
			}
		}
		w.WriteString("\n")
	}
	if w.Flush() != nil {
		return 98
	}
	return 0
}

// peakRSS is the target "peakrss CMD...": it runs CMD, its stdout
// dropped, and prints CMD's peak resident set (KiB, Linux's unit) and
// exits with CMD's status.
func peakRSS(argv []string) int {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = os.Stderr
	err := cmd.Run()
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if cmd.ProcessState == nil || !ok {
		fmt.Fprintln(os.Stderr, "peakrss:", err)
		return 98
	}
	fmt.Println(ru.Maxrss)
	return cmd.ProcessState.ExitCode()
}
