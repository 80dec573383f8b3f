package lock

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestASecondExclusiveWaitsAndNamesTheHolder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock")
	first, err := Acquire(context.Background(), path, Exclusive, "rprof roofs", nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	var told string
	_, err = Acquire(ctx, path, Exclusive, "rprof roofs", func(h string) { told = h })
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("second Acquire = %v, want it to wait until its deadline", err)
	}
	if !strings.HasPrefix(told, "rprof roofs (pid ") {
		t.Errorf("waiting told %q, want the holder named", told)
	}
	first.Release()
	second, err := Acquire(context.Background(), path, Exclusive, "rprof roofs", func(string) { t.Error("waited for a released lock") })
	if err != nil {
		t.Fatal(err)
	}
	second.Release()
}

func TestRunsShareButRoofsWaitsForThem(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock")
	a, err := Acquire(context.Background(), path, Shared, "rprof run", nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Acquire(context.Background(), path, Shared, "rprof run", func(string) { t.Error("a run waited for a run") })
	if err != nil {
		t.Fatal(err)
	}
	released := make(chan struct{})
	go func() {
		time.Sleep(100 * time.Millisecond)
		a.Release()
		b.Release()
		close(released)
	}()
	waited := false
	c, err := Acquire(context.Background(), path, Exclusive, "rprof roofs", func(h string) { waited = true })
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-released:
	default:
		t.Error("roofs got the lock while runs held it")
	}
	if !waited {
		t.Error("roofs did not say it waited")
	}
	c.Release()
}
