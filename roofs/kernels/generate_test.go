package kernels

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestGeneratedCodeIsUpToDate reruns the generator and compares its output
// with the committed files, so an edit to one without the other fails.
func TestGeneratedCodeIsUpToDate(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the generator")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("unmet requirement: go tool not in PATH: %v", err)
	}
	dir := t.TempDir()
	if out, err := exec.Command(goTool, "run", "./internal/gen", "-dir", dir).CombinedOutput(); err != nil {
		t.Fatalf("run generator: %v\n%s", err, out)
	}
	for _, name := range []string{"zkernels_amd64.s", "zkernels_amd64.go"} {
		want, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from the generator's output: run go generate ./roofs/kernels", name)
		}
	}
}
