package cuda_test

import (
	"errors"
	"sync"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/rprof/rprof/gpu/cuda"
	"github.com/rprof/rprof/gpu/cuda/cudatest"
)

// Every call, from whichever goroutine, runs on the session's one thread.
func TestEveryCallRunsOnOneThread(t *testing.T) {
	var mu sync.Mutex
	tids := map[int]bool{}
	f := &cudatest.Fake{Devices: []cudatest.Device{cudatest.H100SXM()}, OnCall: func(string) {
		mu.Lock()
		tids[unix.Gettid()] = true
		mu.Unlock()
	}}
	s := open(t, f)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			p, err := s.Alloc(64)
			if err == nil {
				err = s.Free(p)
			}
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	if len(tids) != 1 {
		t.Errorf("calls ran on %d threads", len(tids))
	}
}

// A library without the driver's symbols is no driver.
func TestLoadALibraryWithoutTheSymbols(t *testing.T) {
	old := cuda.Libraries
	t.Cleanup(func() { cuda.Libraries = old })
	cuda.Libraries = []string{"libc.so.6"}
	if _, err := cuda.Load(); !errors.Is(err, cuda.ErrNoDriver) {
		t.Errorf("err = %v", err)
	}
}
