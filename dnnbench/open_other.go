//go:build !linux

package dnnbench

import "fmt"

// Open loads oneDNN; the harness runs on Linux only.
func Open() (*Library, error) { return OpenFile("") }

// OpenFile loads oneDNN from a name or path; the harness runs on Linux
// only.
func OpenFile(string) (*Library, error) {
	return nil, fmt.Errorf("%w: the harness runs on Linux only", ErrNoLibrary)
}
