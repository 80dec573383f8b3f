package kernels

import (
	"testing"

	"github.com/rprof/rprof/internal/testutil"
)

// TestGeneratedCodeIsUpToDate reruns the generator and compares its output
// with the committed files.
func TestGeneratedCodeIsUpToDate(t *testing.T) {
	testutil.CheckGenerated(t, "./internal/gen", "./roofs/kernels", "zkernels_amd64.s", "zkernels_amd64.go")
}
