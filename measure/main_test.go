package measure

import (
	"os"
	"runtime"
	"testing"

	"github.com/rprof/rprof/internal/launch"
)

// The test binary is its own launcher, as rprof is, for the targets that
// take the re-executed launcher rather than ptrace.
func init() { runtime.LockOSThread() }

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == launch.Role {
		os.Exit(launch.Main(os.Args))
	}
	runtime.UnlockOSThread()
	os.Exit(m.Run())
}
