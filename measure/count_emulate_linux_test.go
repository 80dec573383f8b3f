package measure

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rprof/rprof/machine"
	"github.com/rprof/rprof/measure/emulate"
	"github.com/rprof/rprof/roofline"
)

// misdeclaringHost is the cache model of the Intel guest whose sysfs
// claims a 480 MiB L3 (pmu/testdata/machines/vm-intel-amx).
func misdeclaringHost(t *testing.T) emulate.CacheModel {
	t.Helper()
	topo, err := machine.ReadTopology(os.DirFS("../pmu/testdata/machines/vm-intel-amx/sys"))
	if err != nil {
		t.Fatal(err)
	}
	m, ok := emulate.MachineCacheModel(machine.ReadCaches(topo, nil))
	if !ok || m.Levels[len(m.Levels)-1].Size != 480<<20 {
		t.Fatalf("the fake tree's model %v, want a 480 MiB L3", m)
	}
	return m
}

// A host that declares a 480 MiB L3 while the roofs measured 32 MiB: the
// model takes the measured size, and the README's triad over 48 MB of
// arrays gets 32 B per element per pass (read b and c, write a back after
// allocating its line), not the few bytes a 480 MiB L3 would leave.
func TestEmulatedTriadTrafficFollowsTheRoofsMeasuredLLC(t *testing.T) {
	if _, err := emulate.FindQEMU(context.Background()); err != nil {
		t.Skipf("--count emulate needs Debian's qemu-user (scripts/test.sh installs it): %v", err)
	}
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not found")
	}
	triad := filepath.Join(t.TempDir(), "triad")
	if out, err := exec.Command("gcc", "-O3", "-march=x86-64-v3", "-o", triad, "../examples/triad.c").CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	// The roofs were measured here: only then are their caches this CPU's.
	roofs := &roofline.Roofs{Machine: machine.LiveHost().Describe(), Caches: []roofline.CacheLevel{
		{Level: "L1", Threads: 1, Bytes: 48 << 10, Source: roofline.CacheSourceSysfs},
		{Level: "L2", Threads: 1, Bytes: 2 << 20, Source: roofline.CacheSourceSysfs},
		{Level: "L3", Threads: 1, Bytes: 32 << 20, Source: roofline.CacheSourceMeasured, DeclaredBytes: 480 << 20, DeclaredSource: roofline.CacheSourceSysfs},
	}}
	const n = 2_000_000 // 3 arrays of 16 MB
	q := func(reps int, r *roofline.Roofs) (float64, *roofline.Emulation) {
		b := newEmulateBackend(machine.LiveHost()).(*emulateBackend)
		b.hostModel = func(*machine.Host) emulate.CacheModel { return misdeclaringHost(t) }
		cfg := Config{Target: Target{Command: []string{triad, strconv.Itoa(n), strconv.Itoa(reps)}}, Counting: Counting{Backend: BackendEmulate}, Repetition: Repetition{Repeat: 1}, Placement: Placement{Roofs: r}}
		p, err := run(context.Background(), cfg, deps{backend: b, now: time.Now, cpus: 2})
		if err != nil {
			t.Fatal(err)
		}
		if p.TrafficBytes == nil {
			t.Fatalf("no Q: %+v", p.Flags)
		}
		return *p.TrafficBytes, p.Emulation
	}
	// Per pass: the initialisation's traffic depends on the C library
	// (a large memset stores non-temporally), so two runs are subtracted.
	q1, em := q(1, roofs)
	q3, _ := q(3, roofs)
	perPass := (q3 - q1) / (2 * n)
	t.Logf("%.3f B per element per pass under %s", perPass, em.CacheModel)
	if perPass < 32*0.95 || perPass > 32*1.05 || !strings.Contains(em.CacheModelSource, "L3 measured") || !strings.HasSuffix(em.CacheModel, ",32M/16,line=64") {
		t.Errorf("Q %g B for 1 pass, %g for 3: %.2f B per element per pass under %s (from %s); want 32 within 5%% under the measured 32 MiB L3", q1, q3, perPass, em.CacheModel, em.CacheModelSource)
	}
	if q3sysfs, em := q(3, nil); q3sysfs > q1 {
		t.Errorf("without the roofs, under %s (from %s), Q of 3 passes %g B, want no more than one pass's %g: the 480 MiB L3 holds the arrays", em.CacheModel, em.CacheModelSource, q3sysfs, q1)
	}
}
