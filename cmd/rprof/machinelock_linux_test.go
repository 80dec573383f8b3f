package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/rprof/rprof/internal/lock"
)

func TestRunWaitsForRoofsAndSaysSo(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	runtimeDir := t.TempDir()
	t.Setenv("XDG_RUNTIME_DIR", runtimeDir)
	roofs, err := lock.Acquire(context.Background(), lock.Path(), lock.Exclusive, "rprof roofs", nil)
	if err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(300*time.Millisecond, roofs.Release)
	start := time.Now()
	var errb bytes.Buffer
	code := run(context.Background(), append([]string{"run", "--work", "1", "--"}, targetArgv(t, "exit", "0")...), strings.NewReader(""), io.Discard, &errb)
	stderr := errb.String()
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
