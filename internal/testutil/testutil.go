// Package testutil holds helpers shared by rprof's tests: golden files and
// skips for tests that need hardware this machine may not have.
package testutil

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rprof/rprof/internal/docfile"
	"github.com/rprof/rprof/roofline"
)

// update regenerates golden files: go test ./... -args -update (or
// `go test ./pkg -update`).
var update = flag.Bool("update", false, "rewrite golden files under testdata with the output of this run")

// Updating says whether -update was given, for tests that refresh
// artefacts other than goldens (a screenshot in docs/).
func Updating() bool { return *update }

// Golden compares got with the golden file at path (relative to the test's
// package directory), or rewrites the file when -update is set. A mismatch
// fails with a unified diff when diff(1) is available.
func Golden(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file (run with -update to create it): %v", err)
	}
	if bytes.Equal(got, want) {
		return
	}
	t.Errorf("output differs from %s (run with -update to accept):\n%s", path, diff(t, want, got))
}

func diff(t testing.TB, want, got []byte) string {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "want"), filepath.Join(dir, "got")
	if os.WriteFile(a, want, 0o644) != nil || os.WriteFile(b, got, 0o644) != nil {
		return string(got)
	}
	out, err := exec.Command("diff", "-u", a, b).CombinedOutput()
	if len(out) == 0 && err != nil {
		return "got:\n" + string(got)
	}
	return string(out)
}

// RequirePMUEnv is the environment variable that turns hardware skips into
// failures, for runs on machines known to have a hardware PMU.
const RequirePMUEnv = "RPROF_REQUIRE_PMU"

// SkipUnlessHardware checks err, the result of a probe for what a test
// needs (a hardware PMU, a library). It skips the test with its reason
// when err matches one of unsupported with errors.Is (the sentinels by
// which the probed package says the thing is absent here, e.g.
// pmu.ErrNotSupported), or fails it when RPROF_REQUIRE_PMU=1. Any other
// error fails the test: a probe that broke is not a machine that lacks
// the hardware.
func SkipUnlessHardware(t testing.TB, err error, unsupported ...error) {
	t.Helper()
	if err == nil {
		return
	}
	if !slices.ContainsFunc(unsupported, func(s error) bool { return errors.Is(err, s) }) {
		t.Fatalf("probe failed: %v", err)
	}
	if os.Getenv(RequirePMUEnv) == "1" {
		t.Fatalf("%s=1 but the hardware this test needs is absent: %v", RequirePMUEnv, err)
	}
	t.Skipf("unmet requirement: %v", err)
}

// SkipUnderRace skips a test whose figures (peak memory, time) the race
// detector would inflate past its limits.
func SkipUnderRace(t testing.TB) {
	t.Helper()
	if raceDetector {
		t.Skip("the race detector multiplies memory use and time, which this test bounds")
	}
}

// OpenFDs lists the process's open descriptors and what they point to
// (Linux: from /proc/self/fd).
func OpenFDs(t testing.TB) map[string]string {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range ents {
		target, _ := os.Readlink("/proc/self/fd/" + e.Name())
		out[e.Name()] = target
	}
	return out
}

// CheckNoNewFDs fails when descriptors opened since before (a result of
// OpenFDs) are still open. The read of /proc/self/fd itself is closed by
// then.
func CheckNoNewFDs(t testing.TB, before map[string]string) {
	t.Helper()
	for fd, target := range OpenFDs(t) {
		if _, ok := before[fd]; !ok {
			t.Errorf("fd %s (%s) left open", fd, target)
		}
	}
}

// Machines are the fake trees of real machines under pmu/testdata/machines
// (captured with scripts/capture-sysfs.sh; see each README).
var Machines = []string{
	"skylake-sp", "icelake-sp", "sapphirerapids", "graniterapids-oldkernel", "graniterapids-newkernel",
	"alderlake", "zen3", "zen4", "zen5", "neoverse-v2", "vm-zen5", "vm-zen5-firecracker", "vm-intel-amx",
}

// MachineDir is the directory of the fake machine tree name.
func MachineDir(t testing.TB, name string) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("no caller information to find the fake machine trees")
	}
	dir := filepath.Join(filepath.Dir(file), "..", "..", "pmu", "testdata", "machines", name)
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("fake machine %s: %v", name, err)
	}
	return dir
}

// MachineFS returns the sysfs and procfs roots of the fake machine tree
// name.
func MachineFS(t testing.TB, name string) (sysfs, procfs fs.FS) {
	t.Helper()
	dir := MachineDir(t, name)
	return os.DirFS(filepath.Join(dir, "sys")), os.DirFS(filepath.Join(dir, "proc"))
}

// RecordedCPUID answers CPUID from a file of "leaf subleaf eax ebx ecx
// edx" lines (machine/testdata/cpuid/NAME.txt); leaves not recorded read as zeros,
// as CPUID answers leaves past its maximum on AMD.
func RecordedCPUID(t testing.TB, name string) func(leaf, subleaf uint32) (eax, ebx, ecx, edx uint32) {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	f, err := os.Open(filepath.Join(filepath.Dir(file), "..", "..", "machine", "testdata", "cpuid", name+".txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	regs := map[[2]uint32][4]uint32{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		var v [6]uint32
		fields := strings.Fields(line)
		if len(fields) != 6 {
			t.Fatalf("%s: bad line %q", name, line)
		}
		for i, s := range fields {
			n, err := strconv.ParseUint(s, 0, 32)
			if err != nil {
				t.Fatalf("%s: %q: %v", name, line, err)
			}
			v[i] = uint32(n)
		}
		regs[[2]uint32{v[0], v[1]}] = [4]uint32{v[2], v[3], v[4], v[5]}
	}
	return func(leaf, sub uint32) (a, b, c, d uint32) {
		r := regs[[2]uint32{leaf, sub}]
		return r[0], r[1], r[2], r[3]
	}
}

// FuzzDrawing is the fuzz target of what draws points: it seeds f with
// roofline's recorded point documents, then hands draw every input the
// readers accept, read the way rprof's commands read it (through a file),
// with roofline's recorded roofs of the Zen 5 guest. An error from draw
// is fine, a panic is not.
func FuzzDrawing(f *testing.F, rooflineDir string, draw func(roofs *roofline.Roofs, points []roofline.Point)) {
	paths, _ := filepath.Glob(filepath.Join(rooflineDir, "testdata", "point*.json"))
	for _, p := range paths {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	roofs, err := docfile.ReadRoofs(filepath.Join(rooflineDir, "testdata", "roofs_zen5_vm.json"))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "points.json")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		points, err := docfile.ReadPoints(path)
		if err != nil {
			return
		}
		draw(roofs, points)
	})
}

// CheckGenerated reruns a package's generator (`go run ./GEN -dir TMP`,
// from the test's package directory) and fails for each of files that
// differs from the committed one, so an edit to one without the other
// fails. pkg is the package's path for the message.
func CheckGenerated(t *testing.T, gen, pkg string, files ...string) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the generator")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("unmet requirement: go tool not in PATH: %v", err)
	}
	dir := t.TempDir()
	if out, err := exec.Command(goTool, "run", gen, "-dir", dir).CombinedOutput(); err != nil {
		t.Fatalf("run generator: %v\n%s", err, out)
	}
	for _, name := range files {
		want, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from the generator's output: run go generate %s", name, pkg)
		}
	}
}

// WriteDoc writes v to path as a document (roofline.Encode).
func WriteDoc(path string, v any) error {
	var doc bytes.Buffer
	if err := roofline.Encode(&doc, v); err != nil {
		return err
	}
	return os.WriteFile(path, doc.Bytes(), 0o644)
}
