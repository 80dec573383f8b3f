package measure

import (
	"testing"

	"github.com/rprof/rprof/machine"
)

// The backend run chooses is made for Config.Counting.Host: a run under the global
// --sysfs and --procfs plans and describes from those trees.
func TestBackendsAreMadeForTheConfigsHost(t *testing.T) {
	sys, proc := machineTree("vm-intel-amx")
	tree := machine.NewHost(sys, proc)
	for _, count := range []string{"", DefaultBackend, BackendEmulate} {
		for _, h := range []*machine.Host{tree, nil} {
			b, err := backendFor(Config{Counting: Counting{Backend: count, Host: h}}, deps{})
			if err != nil {
				t.Fatal(err)
			}
			var got *machine.Host
			switch b := b.(type) {
			case *pmuBackend:
				got = b.host
			case *emulateBackend:
				got = b.host
			default:
				t.Fatalf("--count %q: backend %T", count, b)
			}
			if h != nil && got != h || h == nil && (got == nil || !got.Live) {
				t.Errorf("--count %q, host %v: the backend got %+v", count, h, got)
			}
		}
	}
}

func TestPMUBackendDescribesTheHostsMachine(t *testing.T) {
	b := capturedPMU("vm-intel-amx", nil)
	res, err := resolve(Config{Counting: Counting{Work: new(float64)}}, b.host, b.diagnose, b.probe)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.machine.CPU.ModelName; got != "Intel Xeon Processor (Icelake)" {
		t.Errorf("machine %q, want the tree's", got)
	}
}
