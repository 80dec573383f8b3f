//go:build !linux

package dnnbench

import "fmt"

// Open loads libdnnl.so.2; the harness runs on Linux only.
func Open() (*Library, error) {
	return nil, fmt.Errorf("%w: the harness runs on Linux only", ErrNoLibrary)
}
