package main

import (
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/rprof/rprof/internal/testutil"
)

// dnnPeakRSS runs rprof dnn, in a process of its own, on a target that
// prints size bytes of trace (mode flood or longline), and returns the
// peak resident set of rprof (or of the target, if larger: the kernel
// gives the largest of a process and its waited-for children), in bytes.
// rprof is started by a small process (the target "peakrss"), not by this
// test: a process started by vfork and exec inherits its parent's peak,
// and this test's may be anything.
func dnnPeakRSS(t *testing.T, mode string, size int64) (int64, string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, testTargetArg, "peakrss", self, testRprofArg, "dnn", "--roofs", roofsFixture, "--", self, testTargetArg, mode, strconv.FormatInt(size, 10))
	cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+t.TempDir())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	out := stderr.String()
	// A long line is no execution: rprof says so and exits 125.
	if want := map[string]int{"flood": 0, "longline": exitInternal}[mode]; cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != want {
		t.Fatalf("rprof dnn on %d bytes of %s: %v, want exit %d\n%s", size, mode, err, want, out[:min(len(out), 4096)])
	}
	kib, err := strconv.ParseInt(strings.TrimSpace(stdout.String()), 10, 64)
	if err != nil {
		t.Fatalf("peak RSS: %q: %v", stdout.String(), err)
	}
	return kib << 10, out
}

// rprof dnn holds groups, not executions: a trace eight times as long
// adds no more than the executions' times and indices (16 bytes each,
// doubled for the slices' growth and the collector's headroom). Held
// records (about 2 KB each) would add gigabytes.
func TestDNNMemoryGrowsWithGroupsNotExecutions(t *testing.T) {
	testutil.SkipUnderRace(t)
	const small, large = 16 << 20, 128 << 20
	rss0, _ := dnnPeakRSS(t, "flood", small)
	rss1, out := dnnPeakRSS(t, "flood", large)
	execs := float64(large-small) / 180 // bytes per line of floodLines
	t.Logf("peak RSS %d MiB at %d MiB of trace, %d MiB at %d MiB", rss0>>20, small>>20, rss1>>20, large>>20)
	if limit := int64(4 * 16 * execs); rss1-rss0 > limit {
		t.Errorf("peak RSS grew by %d MiB from %d to %d MiB of trace, want at most %d MiB\n%s", (rss1-rss0)>>20, small>>20, large>>20, limit>>20, out)
	}
}

// A gigabyte of trace, and a gigabyte on one verbose line, stay under
// 256 MiB, and the line is quoted cut.
func TestDNNStaysUnder256MiBOnAGigabyteOfTrace(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 2 GiB of generated trace")
	}
	testutil.SkipUnderRace(t)
	for _, mode := range []string{"flood", "longline"} {
		rss, out := dnnPeakRSS(t, mode, 1<<30)
		t.Logf("%s: peak RSS %d MiB on 1 GiB of trace, %d bytes of output", mode, rss>>20, len(out))
		if rss > 256<<20 {
			t.Errorf("%s: peak RSS %d MiB on 1 GiB of trace, want under 256 MiB", mode, rss>>20)
		}
		if len(out) > 64<<10 {
			t.Errorf("%s: %d bytes of output, want a table and notes", mode, len(out))
		}
	}
}
