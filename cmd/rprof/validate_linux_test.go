package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/rprof/rprof/measure/emulate"
)

// TestValidatePassesHereWithEmulation runs `rprof validate --count emulate`
// for real: every kernel QEMU runs, W exact and Q within 5%, on a small
// cache model to keep the bandwidth kernels short.
func TestValidatePassesHereWithEmulation(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every kernel under QEMU (about half a minute)")
	}
	if _, err := emulate.FindQEMU(context.Background()); err != nil {
		t.Skipf("needs Debian's qemu-user: %v", err)
	}
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"validate", "--count", "emulate", "--cache-model", "32K/8,128K/8,512K/8"}, strings.NewReader(""), &out, &errb)
	stdout, stderr := out.String(), errb.String()
	if code != 0 {
		t.Fatalf("exit %d:\n%s\n%s", code, stdout, stderr)
	}
	rows := 0
	for _, l := range strings.Split(stdout, "\n") {
		if strings.HasPrefix(l, "emulate ") && strings.HasSuffix(strings.TrimSpace(l), " ok") {
			rows++
		}
		if strings.Contains(l, "FAIL") {
			t.Errorf("failed row: %s", l)
		}
	}
	for _, want := range []string{"avx2-fma-fp64", "avx2 triad-nt", "scalar-muladd-fp32"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("no %s row:\n%s", want, stdout)
		}
	}
	if rows < 10 {
		t.Errorf("%d rows held, want every emulated kernel:\n%s", rows, stdout)
	}
}
