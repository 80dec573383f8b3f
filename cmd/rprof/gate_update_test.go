package main

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"sync"
	"testing"

	"github.com/rprof/rprof/measure"
	"github.com/rprof/rprof/roofline"
)

// Sixteen concurrent `gate --update-baseline` runs into one point set
// (a CI matrix's jobs) keep all sixteen labels: each reads and writes the
// set under the file's lock. flock(2) locks are per open file, so
// goroutines contend as processes do.
func TestGateUpdateBaselineConcurrentlyKeepsEveryLabel(t *testing.T) {
	gateOutsideCI(t)
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	base := filepath.Join(t.TempDir(), "baseline.json")
	const n = 16
	var wg sync.WaitGroup
	codes := make([]int, n)
	stderrs := make([]string, n)
	for i := range n {
		wg.Go(func() {
			label := fmt.Sprintf("kernel-%02d", i)
			fake := func(_ context.Context, cfg measure.Config) (*roofline.Point, error) {
				return &roofline.Point{Schema: roofline.PointSchema, Label: cfg.Label, Seconds: 1}, nil
			}
			codes[i], _, stderrs[i] = rprofMeasuring(t, fake, "gate", "--baseline", base, "--update-baseline", "--label", label, "--work", "1", "--traffic", "1", "--", "true")
		})
	}
	wg.Wait()
	for i := range n {
		if codes[i] != 0 {
			t.Fatalf("update %d: exit %d: %s", i, codes[i], stderrs[i])
		}
	}
	ps, err := readPoints(base)
	if err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, p := range ps {
		labels = append(labels, p.Label)
	}
	sort.Strings(labels)
	if len(labels) != n {
		t.Fatalf("%d of %d labels kept: %v", len(labels), n, labels)
	}
}
