package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rprof/rprof/internal/lock"
)

func TestRunWaitsForRoofsAndSaysSo(t *testing.T) {
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	roofs, err := lock.Acquire(context.Background(), lock.Path(), lock.Exclusive, "rprof roofs", nil)
	if err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(300*time.Millisecond, roofs.Release)
	start := time.Now()
	code, _, stderr := rprofRun(t, "", append([]string{"--work", "1", "--"}, targetArgv(t, "exit", "0")...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "waiting for rprof roofs (pid ") {
		t.Errorf("no word of the wait:\n%s", stderr)
	}
	if took := time.Since(start); took < 250*time.Millisecond {
		t.Errorf("run finished after %v, before roofs released the machine", took)
	}
}
