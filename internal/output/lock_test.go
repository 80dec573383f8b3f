package output

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
)

// Sixteen concurrent read-modify-writes of one file keep all sixteen
// lines, whether the file exists at first or not, and whether Write
// replaces it by a rename or (through a hard link) in place.
func TestUpdateKeepsEveryConcurrentWriter(t *testing.T) {
	for _, c := range []struct {
		name  string
		setup func(path string)
	}{
		{"new file", func(string) {}},
		{"existing file, replaced by renames", func(p string) { os.WriteFile(p, nil, 0o644) }},
		{"hard-linked file, written in place", func(p string) {
			os.WriteFile(p, nil, 0o644)
			os.Link(p, p+".2")
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "set.txt")
			c.setup(path)
			const n = 16
			var wg sync.WaitGroup
			errs := make(chan error, n)
			for i := range n {
				wg.Go(func() {
					errs <- Update(context.Background(), path, func() error {
						old, err := os.ReadFile(path)
						if err != nil && !os.IsNotExist(err) {
							return err
						}
						line := fmt.Sprintf("writer %02d\n", i)
						return Write(context.Background(), path, nil, func(w io.Writer) error {
							_, err := w.Write(append(old, line...))
							return err
						})
					})
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
			b, _ := os.ReadFile(path)
			lines := strings.Fields(strings.ReplaceAll(string(b), "writer ", ""))
			sort.Strings(lines)
			if len(lines) != n {
				t.Fatalf("%d of %d writers kept: %v", len(lines), n, lines)
			}
		})
	}
}

func TestUpdateGivesUpWhenTheContextEnds(t *testing.T) {
	path := filepath.Join(t.TempDir(), "set.txt")
	os.WriteFile(path, nil, 0o644)
	ctx, cancel := context.WithCancel(context.Background())
	inside := make(chan struct{})
	release := make(chan struct{})
	go Update(context.Background(), path, func() error {
		close(inside)
		<-release
		return nil
	})
	<-inside
	cancel()
	err := Update(ctx, path, func() error { return nil })
	close(release)
	if err == nil || !strings.Contains(err.Error(), "context canceled") {
		t.Fatalf("Update while another holds the lock, context cancelled = %v", err)
	}
}
