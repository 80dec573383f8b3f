package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rprof/rprof/dnn"
	"github.com/rprof/rprof/internal/testutil"
	"github.com/rprof/rprof/roofline"
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
	roofs, err := roofline.ReadRoofs(roofsFixture)
	if err != nil {
		t.Fatal(err)
	}
	groups := dnn.GroupExecs(tr.Records)
	points := dnn.Points(groups, dnn.PointOptions{
		Command: []string{"python3", "cnn.py"}, Created: time.Unix(0, 0).UTC(), Confidence: 0.95,
		Roofs: roofs, RoofsFile: "roofs.json", CPUs: libraryThreads(tr.Info), Trace: tr,
	})
	var b bytes.Buffer
	writeDNNTable(&b, []string{"python3", "cnn.py"}, tr, groups, points, 12)
	testutil.Golden(t, "testdata/dnn/torch-table.golden", b.Bytes())
	if tr.Skipped != 1 {
		t.Errorf("skipped %d, want the truncated line", tr.Skipped)
	}
}
