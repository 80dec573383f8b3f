package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rprof/rprof/internal/docfile"
	"github.com/rprof/rprof/internal/testutil"
)

// rprof dnn places a oneDNN 3.7 program's primitives, and rprof dnn bench
// runs through the 3.x binding, both on Debian 13's oneDNN under its own
// runtime (scripts/test.sh unpacks it).
func TestDNNAndBenchOnOneDNN3(t *testing.T) {
	tree := testutil.FindOneDNN3(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "allkinds3")
	tree.CompileC(t, "../../dnn/testdata/allkinds3.c", bin)
	loader := tree.Command(bin)
	out := filepath.Join(dir, "trace.json")
	code, stdout, stderr := rprofDNN(t, context.Background(), append([]string{"--json", out, "--roofs", roofsFixture, "--"}, loader.Args...)...)
	if code != exitOK || string(stdout) != "allkinds3: ok\n" {
		t.Fatalf("exit %d, stdout %q:\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "oneDNN v3.") {
		t.Errorf("the table does not name oneDNN 3.x:\n%s", stderr)
	}
	points, err := docfile.ReadPoints(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(points) != 18 {
		t.Errorf("%d points, want one per primitive (18)", len(points))
	}

	// The test binary plays rprof under the tree's loader.
	benchOut := filepath.Join(dir, "bench.json")
	cmd := tree.Command(os.Args[0], testRprofArg, "dnn", "bench", "--repeat", "3", "--threads", "1", "--roofs", roofsFixture, "--json", benchOut,
		"conv3x3-nchw", "mb1_ic16oc20_ih14oh14kh3sh1dh0ph1_iw14ow14kw3sw1dw0pw1")
	var berr bytes.Buffer
	cmd.Stderr = &berr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v: %s", err, berr.String())
	}
	if !strings.Contains(berr.String(), "oneDNN v3.") {
		t.Errorf("bench did not load oneDNN 3.x:\n%s", berr.String())
	}
	// 20 output channels: the weights the library chose pad them, and Q
	// counts the padding.
	if !strings.Contains(berr.String(), "padded-layout: wei ") {
		t.Errorf("the padded weights are not flagged:\n%s", berr.String())
	}
	bench, err := docfile.ReadPoints(benchOut)
	if err != nil {
		t.Fatal(err)
	}
	if len(bench) != 2 {
		t.Errorf("%d bench points, want 2", len(bench))
	}
}
