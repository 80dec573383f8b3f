package dnn

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/rprof/rprof/internal/testutil"
)

// allkinds3.c, built against oneDNN 3.x and run with the verbose trace on,
// prints lines the parser reads whole, whose models are those of the
// committed 3.7.2 capture (implementations depend on the CPU; the
// program's shapes are padded alike by every block size up to 64).
func TestAllKinds3CaptureParsesAndMatchesTheFixture(t *testing.T) {
	tree := testutil.FindOneDNN3(t)
	bin := filepath.Join(t.TempDir(), "allkinds3")
	tree.CompileC(t, "testdata/allkinds3.c", bin)
	cmd := tree.Command(bin)
	cmd.Env = append(cmd.Environ(), "ONEDNN_VERBOSE=1", "OMP_NUM_THREADS=2")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("allkinds3: %v", err)
	}
	tr := &Trace{KeepRecords: true}
	for line := range strings.SplitSeq(string(out), "\n") {
		tr.Add(line)
	}
	if !strings.HasPrefix(tr.Info.Version, "v3.") {
		t.Errorf("version %q, want v3.x", tr.Info.Version)
	}
	checkCoversEveryKind(t, tr)
	checkModelsAlike(t, tr, readTrace(t, "testdata/capture-3.7.2-allkinds.txt"), "the 3.7.2 fixture", func(*Record) bool { return false })
}
